"""Performance metrics, statistical tests, tables, plots and reports over run directories.

Nothing here knows that LLMs exist: it reads equity curves, trades, decisions and prices.
"""
