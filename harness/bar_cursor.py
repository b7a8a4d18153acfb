"""Where a simulator stands in its episode: the bar stamps and the index of the current bar.

Every task's simulator steps bar by bar in the same way: `submit` takes the decision of the
current bar `date`, moves to the next bar and fills there; after the last bar's decision the
episode is `done`. The simulators differ only in what a fill and a mark do.
"""
from __future__ import annotations

import pandas as pd


class BarCursor:
    """The current bar of an episode: `_dates` (its bar stamps) and `_i` (the index of the current bar)."""

    _dates: pd.DatetimeIndex
    _i: int

    @property
    def done(self) -> bool:
        return self._i >= len(self._dates)

    @property
    def date(self) -> pd.Timestamp:
        return self._dates[self._i]

    def _advance(self) -> bool:
        """Move to the next bar; False when there is none (the last bar's decision is not filled)."""
        if self.done:
            raise RuntimeError("the episode is over: every bar already has a decision")
        self._i += 1
        return not self.done
