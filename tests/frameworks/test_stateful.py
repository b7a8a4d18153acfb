"""Stateful frameworks are stepped day by day and shown the portfolio at the close."""

from __future__ import annotations

import pandas as pd
import pytest
from support_frameworks import ExposureTargeter

from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.sources.embedded import load_embedded


@pytest.mark.slow
def test_stateful_framework_sees_its_own_fills(tmp_path):
    data = load_embedded(["MSFT", "NVDA"])
    spec = RunSpec(tickers=["MSFT", "NVDA"], seeds=[0], start=pd.Timestamp("2020-01-02"),
                   end=pd.Timestamp("2020-01-31"))
    targeter = ExposureTargeter()
    with Journal(tmp_path / "journal.sqlite") as journal:
        result = EpisodeRunner(data, spec, journal, progress=False).run(
            [FrameworkEntry("alternate", targeter, "h")])
    episode = result.episodes[next(iter(result.episodes))]
    positions = episode.equity["position"].tolist()
    # BUY on day 0 fills on day 1; seeing the position on day 1 it SELLs, flat on day 2; and so on
    assert [p > 0 for p in positions[:5]] == [False, True, False, True, False]
    assert targeter.seen_exposures[:2] == [0.0, 0.0]  # day 0 of both tickers: nothing filled yet
    assert min(targeter.seen_exposures[2:4]) > 0.85   # day 1: 90 % of cash went in at the open
