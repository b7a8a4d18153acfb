"""Rolling windows: the calendar of windows, and a window re-simulated from a journal = a direct run on it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.errors import DataError
from frameworks.baselines.macd import MACDCross
from frameworks.baselines.random_policy import RandomPolicy
from harness.execution import ExecutionConfig
from harness.journal import Journal
from harness.run_directory import decision_row, prices_frame
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.sources.embedded import load_embedded
from metrics.episodes import AVERAGE_TICKER
from metrics.performance import METRIC_KEYS, metrics_row
from metrics.rolling import (
    bars_by_ticker,
    journaled_decision,
    replay_window,
    rolling_table,
    rolling_windows,
    window_metrics,
)

DATA = load_embedded(["MSFT", "NVDA"])
TEST_START, TEST_END = pd.Timestamp("2020-01-02"), pd.Timestamp("2020-06-30")
EXECUTION = ExecutionConfig(fee_bps=10, slippage_bps=3)
FRAMEWORKS = [FrameworkEntry("macd", MACDCross(), "macd-hash"), FrameworkEntry("random", RandomPolicy(), "random-hash")]


def run(journal: Journal, start, end, seeds=(0, 1)):
    spec = RunSpec(tickers=["MSFT", "NVDA"], seeds=list(seeds), start=start, end=end, execution=EXECUTION)
    return EpisodeRunner(DATA, spec, journal, progress=False).run(FRAMEWORKS)


@pytest.fixture(scope="module")
def journaled(tmp_path_factory):
    """The decisions.parquet rows of a full test-window run, read back from its journal."""
    with Journal(tmp_path_factory.mktemp("full") / "journal.sqlite") as journal:
        keys = run(journal, TEST_START, TEST_END).journal_keys
        entries = [e for f in FRAMEWORKS for e in journal.load(keys[f.name]).values()]
    return pd.DataFrame([decision_row(e) for e in entries])


def test_windows_are_three_months_stepped_seven_days_inside_the_period():
    windows = rolling_windows("2025-01-01", "2025-06-30")
    starts = pd.DatetimeIndex([w.start for w in windows])
    assert starts[0] == pd.Timestamp("2025-01-01")
    assert ((starts[1:] - starts[:-1]) == pd.Timedelta(days=7)).all()
    for window in windows:
        assert window.end + pd.Timedelta(days=1) == window.start + pd.DateOffset(months=3)
    assert windows[-1].end <= pd.Timestamp("2025-06-30")
    assert starts[-1] + pd.Timedelta(days=7) + pd.DateOffset(months=3) > pd.Timestamp("2025-07-01")
    with pytest.raises(ValueError, match="shorter than one 3-month window"):
        rolling_windows("2025-01-01", "2025-03-15")


def test_windows_of_a_few_days_for_a_short_test_period():
    windows = rolling_windows("2025-01-01", "2025-01-08", step_days=1, days=4)
    assert [(w.start.day, w.end.day) for w in windows] == [(1, 4), (2, 5), (3, 6), (4, 7), (5, 8)]
    with pytest.raises(ValueError, match="shorter than one 10-day window"):
        rolling_windows("2025-01-01", "2025-01-08", days=10)


def episode_rows(frame: pd.DataFrame, framework: str, ticker: str, seed: int) -> pd.DataFrame:
    return frame[(frame["framework"] == framework) & (frame["ticker"] == ticker) & (frame["seed"] == seed)]


@pytest.mark.slow
def test_a_window_replayed_from_the_journal_equals_a_direct_run_on_it(journaled, tmp_path):
    window = rolling_windows(TEST_START, TEST_END)[5]
    bars = bars_by_ticker(prices_frame(DATA, ["MSFT", "NVDA"], TEST_START, TEST_END))
    with Journal(tmp_path / "window.sqlite") as journal:
        direct = run(journal, window.start, window.end)
    per_window = window_metrics(journaled, bars, [window], EXECUTION, DATA.periods_per_year)
    assert len(per_window) == len(direct.episodes) == 6  # macd on the first seed, random on both
    for key, episode in direct.episodes.items():
        mine = episode_rows(journaled, key.framework, key.ticker, key.seed)
        decisions = pd.Series([journaled_decision(r) for r in mine.to_dict("records")], index=pd.DatetimeIndex(mine["date"]))
        replayed = replay_window(bars[key.ticker], decisions, window, EXECUTION)
        assert len(replayed.trades) > 0
        pd.testing.assert_frame_equal(replayed.equity, episode.equity)
        pd.testing.assert_frame_equal(replayed.trades, episode.trades)
        expected = metrics_row(episode.equity["equity"], len(episode.trades), DATA.periods_per_year)
        row = episode_rows(per_window, key.framework, key.ticker, key.seed).iloc[0]
        assert (row["window_start"], row["window_end"]) == (window.start, window.end)
        np.testing.assert_allclose(row[list(METRIC_KEYS)].to_numpy(dtype=float), [expected[k] for k in METRIC_KEYS])


def test_rolling_table_averages_over_windows_then_over_tickers(journaled):
    bars = bars_by_ticker(prices_frame(DATA, ["MSFT", "NVDA"], TEST_START, TEST_END))
    windows = rolling_windows(TEST_START, TEST_END)
    per_window = window_metrics(journaled, bars, windows, EXECUTION, DATA.periods_per_year)
    table = rolling_table(per_window)
    assert (table["windows"] == len(windows)).all()
    for ticker in ("MSFT", "NVDA"):
        windows_of = episode_rows(per_window, "random", ticker, 1)
        row = episode_rows(table, "random", ticker, 1).iloc[0]
        assert row["ARR"] == pytest.approx(windows_of["ARR"].mean())
        assert row["MDD"] == pytest.approx(windows_of["MDD"].mean())
    per_ticker = table[(table["framework"] == "random") & (table["seed"] == 1) & (table["ticker"] != AVERAGE_TICKER)]
    average = episode_rows(table, "random", AVERAGE_TICKER, 1).iloc[0]
    assert average["SR_ann"] == pytest.approx(per_ticker["SR_ann"].mean())
    assert list(table["ticker"]) == ["MSFT", "NVDA", AVERAGE_TICKER] * 3


def test_a_window_without_journaled_decisions_is_an_error(journaled):
    bars = bars_by_ticker(prices_frame(DATA, ["MSFT", "NVDA"], TEST_START, TEST_END))
    gap = journaled.drop(index=journaled.index[(journaled["date"] == pd.Timestamp("2020-03-02"))])
    with pytest.raises(DataError, match="no journaled decision for .* first 2020-03-02"):
        window_metrics(gap, bars, rolling_windows(TEST_START, TEST_END), EXECUTION)
