"""The multi-agent debate pipeline (TradingAgents-style) on LangGraph: roles, state, graph, prompts.

`multi_agent.pipeline.DebatePipeline` decides a batch of contexts; the framework adapter is
`frameworks.multi_agent.MultiAgentDebate`; docs/multi_agent.md describes the whole.
"""
