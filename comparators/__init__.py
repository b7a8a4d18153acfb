"""The learned comparators: the seed systems that trade with trained models (EarnMore, AlphaMix,
MacroHFT, FineFT, MASSA), each reimplemented in `comparators/<system>/` (model, training command
`python -m comparators.<system>.train`, checkpoint code) and driven by a thin plugin in
`frameworks/<system>.py`. The modules at this level are shared by all of them:
`features` (point-in-time per-instrument feature windows standardised on the train split),
`checkpoint` (a trained torch model, its config and training facts in one folder, with a
fingerprint over weights and config) and `training_log` (progress bar, CSV and TensorBoard log of
a training run). The originals' own metric conventions are recomputed in
`metrics.paper_conventions`.
"""
