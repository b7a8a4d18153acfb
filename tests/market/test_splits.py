"""Date splits with an embargo gap."""

from __future__ import annotations

import pandas as pd
import pytest

from market.splits import Splits, chronological_splits

CALENDAR = pd.bdate_range("2020-01-01", periods=200)


def test_chronological_splits_leave_the_gap():
    splits = chronological_splits(CALENDAR, 0.6, 0.2, gap_bars=5)
    splits.check(CALENDAR)
    assert ((CALENDAR > splits.train.end) & (CALENDAR < splits.valid.start)).sum() == 5
    assert splits.test.end == CALENDAR[-1]


def test_overlapping_or_too_close_windows_are_refused():
    close = Splits(train={"start": "2020-01-01", "end": "2020-03-31"},
                   valid={"start": "2020-04-02", "end": "2020-05-29"},
                   test={"start": "2020-06-15", "end": "2020-09-30"}, gap_bars=5)
    with pytest.raises(ValueError, match="only 1 bars between train"):
        close.check(CALENDAR)
    with pytest.raises(ValueError, match="ends .* before it starts"):
        Splits(train={"start": "2020-03-01", "end": "2020-01-01"}, valid={"start": "2020-04-01", "end": "2020-05-01"},
               test={"start": "2020-06-01", "end": "2020-07-01"})
