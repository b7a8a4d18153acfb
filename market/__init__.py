"""The market: data, point-in-time views, execution, accounting, episodes and the journal."""
