"""Market data sources; each returns a validated `MarketData`."""
