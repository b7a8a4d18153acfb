"""The state FineFT decides on at a step close, read from the point-in-time view and computed once per view.

At the bar stamped τ that closes a decision step (`steps`), with n bars per step, the plugin reads
the last 2 + (`state.LOOKBACK` + 1)·n bars of the view (enough for `LOOKBACK` complete steps), groups
them into step bars (`steps.step_bars`) and takes the row τ of `state.state_table` over those steps:

    state(τ) = state_table(step_bars(bars ≤ τ, last 2 + (LOOKBACK + 1)·n))[τ]

(None while fewer than `LOOKBACK` complete steps exist, or when the last complete step is not τ).
Every seed's checkpoint that steps the same way (`step_minutes`, `funding_hours`) reads the same
row at τ; `ViewStates` computes it once and hands the same row to each. A row is kept under a
digest of exactly the bars it was computed from (their stamps and OHLCV values, `bars_digest`) and
the two settings, so only a read of the same bars gets it back: bars a later view shows, or another
market's, can never answer a decision at τ. Only the rows of the latest stamp per ticker are kept
(the runner steps every seed of a stateful framework through a bar before the next).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from comparators.fineft.state import LOOKBACK, state_table
from comparators.fineft.steps import step_bars, step_length
from market.view import MarketView

OHLCV = ("open", "high", "low", "close", "volume")


def bars_digest(bars: pd.DataFrame) -> bytes:
    """BLAKE2b (16 bytes) of the bars' stamps (ns) and OHLCV values (float64): what a state row reads."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(np.ascontiguousarray(bars.index.as_unit("ns").asi8).tobytes())
    digest.update(np.ascontiguousarray(bars[list(OHLCV)].to_numpy(dtype=np.float64)).tobytes())
    return digest.digest()


def decision_bars(view: MarketView, ticker: str, step_minutes: int) -> pd.DataFrame:
    """The last 2 + (LOOKBACK + 1)·n bars of `ticker` in `view` (n bars per step, from its last two bars)."""
    per_step = step_length(view.bars(ticker, lookback=2), step_minutes)
    return view.bars(ticker, lookback=2 + (LOOKBACK + 1) * per_step)


def decision_state(bars: pd.DataFrame, stamp: pd.Timestamp, step_minutes: int,
                   funding_hours: float) -> pd.DataFrame | None:
    """The raw state row (one row of `state.STATE_FEATURES`) of the step closing at `stamp` over `bars`
    (`decision_bars`), or None while history is short (module docstring)."""
    steps = step_bars(bars, step_minutes)
    if len(steps) < LOOKBACK or steps.index[-1] != stamp:
        return None
    return state_table(steps, funding_hours).iloc[[-1]]


class ViewStates:
    """`decision_state` of a view's last bar, computed once per (bars read, settings) (module docstring)."""

    def __init__(self) -> None:
        self._latest: dict[str, tuple[pd.Timestamp, dict[tuple, pd.DataFrame | None]]] = {}

    def state(self, view: MarketView, ticker: str, step_minutes: int, funding_hours: float) -> pd.DataFrame | None:
        """`decision_state` at `view.asof` of the bars `decision_bars` reads (None while history is short)."""
        bars = decision_bars(view, ticker, step_minutes)
        key = (step_minutes, float(funding_hours), bars_digest(bars))
        latest = self._latest.get(ticker)
        if latest is None or latest[0] != view.asof:
            latest = self._latest[ticker] = (view.asof, {})
        rows = latest[1]
        if key not in rows:
            rows[key] = decision_state(bars, view.asof, step_minutes, funding_hours)
        return rows[key]
