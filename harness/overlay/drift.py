"""The drift monitor: warns when the framework HOLDs too often.

Over the framework's own decisions (before any overlay), h_t = the share of HOLD among the last
W decisions of the episode (W = `window`); the monitor fires on every day t with a full window
and h_t > `max_hold_share`. A HOLD is the action HOLD, or in target mode a target equal to the
previous one (the first compared with flat, 0). It never changes a decision: it is reported.
"""

from __future__ import annotations

from collections import deque

from harness.overlay.config import DriftConfig
from market.decision import Action, Decision

SAME_TARGET = 1e-9
"""Targets closer than this count as unchanged (a HOLD in target mode)."""


class DriftMonitor:
    """The HOLD share over one episode; `step` once per decision day, in order."""

    def __init__(self, config: DriftConfig):
        self.config = config
        self._holds: deque[bool] = deque(maxlen=config.window)
        self._previous_target = 0.0

    def step(self, decision: Decision) -> tuple[bool, float | None]:
        """(fired, h_t) after today's `decision`; h_t is None until the window is full."""
        if decision.action is not None:
            hold = decision.action is Action.HOLD
        else:
            hold = abs(decision.target - self._previous_target) <= SAME_TARGET
            self._previous_target = decision.target
        self._holds.append(hold)
        if len(self._holds) < self.config.window:
            return False, None
        share = sum(self._holds) / self.config.window
        return share > self.config.max_hold_share, share


def drift_warning(framework: str, records: list[dict], config: DriftConfig) -> str | None:
    """One line naming the episodes of `framework` in `records` (overlay records) where the monitor fired,
    with the first day it fired and h_t on that day; None when it never fired or is off."""
    if not config.enabled:
        return None
    first: dict[tuple[str, int], dict] = {}
    for row in records:
        if row["framework"] == framework and row["drift"]:
            first.setdefault((row["ticker"], row["seed"]), row)
    if not first:
        return None
    named = "; ".join(f"{ticker} seed {seed} from {row['date']:%Y-%m-%d} ({row['hold_share']:.0%})"
                      for (ticker, seed), row in first.items())
    return (f"overlay drift: {framework}: HOLD above {config.max_hold_share:.0%} of the last {config.window} "
            f"decisions in {len(first)} episode(s): {named}")
