"""The run side of a benchmark: the episode runner, the decision journal and its keys, the
execution simulator, and the run directory's schema with its one reader and writer.

It reads the market through `market/` (data, point-in-time views, decisions) and knows nothing
of LLMs; `metrics/` reads what it writes through `harness.run_directory`.
"""
