"""FineFT stage III: who acts at a bar, a selected learner or the conservative policy.

With K market dynamics, u_k(x) the ELBO quantile of state x under dynamic k's VAE (`vae`), and τ
the routing threshold:

    k* = argmax_k u_k(x);   route(x) = learner[k*]  if u_{k*}(x) ≥ τ,  else the conservative policy

(the original's `AbsoluteThresholdGating`: defensive when the best-matching VAE finds the state
unlikely). The conservative policy unwinds to flat (`flat`, the original's `rule_based_close`) or
keeps the previous target (`hold`). τ = 0 never routes away (every state is in distribution).
Routing modes of `FineFTModel`: `vae` (this rule), `dynamics` (the learner of k*, never
conservative) and `ensemble` (the unrouted ensemble: argmax of the mean Q of all learners).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Conservative = Literal["flat", "hold"]
Routing = Literal["vae", "dynamics", "ensemble"]
CONSERVATIVE = -1
"""`route`'s answer where the conservative policy acts."""


def route(quantiles: np.ndarray, threshold: float) -> np.ndarray:
    """k* per row of `quantiles` (rows × K dynamics), or CONSERVATIVE where max_k u_k < threshold."""
    best = quantiles.argmax(axis=1)
    return np.where(quantiles.max(axis=1) < threshold, CONSERVATIVE, best)


def conservative_target(previous: int, flat: int, mode: Conservative) -> int:
    """The conservative policy's target index: flat, or the previous target."""
    return flat if mode == "flat" else previous
