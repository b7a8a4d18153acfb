"""FineFT's decision step: the agent decides every `step_minutes` and holds in between.

The bars are grouped into steps that close at the multiples of `step_minutes` since midnight UTC
(a step stamped τ holds the bars stamped in (τ − step, τ]); a step bar is

    open = first open, high = max high, low = min low, close = last close, volume = Σ volume

and only complete steps (every bar present) are kept. Training (states, rewards, the DP teacher,
the rule) runs on step bars; trading decides at the close of each bar stamped at a step's close and
HOLDs on the other bars, so the state read at a decision is the one training read for that step.
On minute bars a 15-minute step keeps the fee of a position change (5 bps of the traded notional,
up to 50 bps of equity for −5x → 5x) within reach of what a step's trend can earn; on the embedded
bitcoin 15-minute bars a 15-minute step is every bar.
"""

from __future__ import annotations

import pandas as pd


def step_length(bars: pd.DataFrame, step_minutes: int) -> int:
    """Bars per step; one line when the step is not a whole number of bars."""
    bar = pd.Timedelta(bars.index[1] - bars.index[0]) if len(bars) > 1 else pd.Timedelta(minutes=step_minutes)
    step = pd.Timedelta(minutes=step_minutes)
    if step % bar != pd.Timedelta(0) or step < bar:
        raise ValueError(f"a decision step of {step_minutes} minutes is not a whole number of {bar} bars")
    return int(step / bar)


def is_step_close(stamp: pd.Timestamp | pd.DatetimeIndex, step_minutes: int):
    """True where a bar stamp closes a step (a multiple of `step_minutes` since midnight UTC): one bool
    for a stamp (from its nanoseconds since the epoch, UTC), a boolean array for an index."""
    step = pd.Timedelta(minutes=step_minutes).value
    if isinstance(stamp, pd.Timestamp):
        return stamp.value % step == 0
    return stamp.as_unit("ns").asi8 % step == 0


def step_bars(bars: pd.DataFrame, step_minutes: int) -> pd.DataFrame:
    """The complete step bars of `bars` (module docstring), stamped at their close."""
    per_step = step_length(bars, step_minutes)
    if per_step == 1:
        return bars[["open", "high", "low", "close", "volume"]]
    groups = bars.groupby(bars.index.ceil(pd.Timedelta(minutes=step_minutes)))
    out = groups.agg(open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last"),
                     volume=("volume", "sum"))
    out = out[groups.size() == per_step]
    out.index.name = bars.index.name
    return out
