"""MASSA's LLM variant on LangGraph: a coordinator over public context, per-asset agents without edges.

`multi_agent.massa.pipeline.MassaGraphPipeline` decides a batch of portfolio contexts; the
framework adapter is `frameworks.massa_llm.MassaLLM`; docs/massa.md ("LLM variant") describes it.
"""
