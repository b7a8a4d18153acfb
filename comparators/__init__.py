"""Learned comparators reimplemented from their papers and code: one sub-package per system
(model, training, checkpoints), shared pieces (the dynamic-programming teacher, market-condition
labels) as modules beside them; each system's thin plugin lives in `frameworks/<system>.py`."""
