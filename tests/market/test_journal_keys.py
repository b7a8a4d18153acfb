"""The journal key: decisions are reused only when config, framework fingerprint and data are the same."""

from __future__ import annotations

import gc
import sqlite3

import pandas as pd
import pytest
from bars import random_bars

from core.errors import ConfigError, DataError
from frameworks.baselines.sma_cross import SMACross
from harness.decision_inputs import DecisionInputs, data_fingerprint
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.data import MarketData
from market.decision import Action, Decision

BARS = random_bars(80, start="2021-01-04")
START, END = BARS.index[40], BARS.index[59]
SPEC = RunSpec(tickers=["AAA"], seeds=[0], start=START, end=END)


def news(stamps) -> pd.DataFrame:
    return pd.DataFrame({"ticker": "AAA", "available_at": pd.DatetimeIndex(stamps), "headline": "h"})


def run(tmp_path, bars: pd.DataFrame, fingerprint: str = "", records=None):
    """(result, warning lines) of one SMA-cross run into the journal in `tmp_path`."""
    warnings: list[str] = []
    data = MarketData(bars={"AAA": bars}, records=records or {})
    with Journal(tmp_path / "journal.sqlite") as journal:
        runner = EpisodeRunner(data, SPEC, journal, progress=False, warn=warnings.append)
        result = runner.run([FrameworkEntry("sma", SMACross(fast=3, slow=8), "config", fingerprint)])
    return result, warnings


@pytest.mark.slow
def test_same_inputs_reuse_every_decision_and_warn_of_nothing(tmp_path):
    first, _ = run(tmp_path, BARS)
    again, warnings = run(tmp_path, BARS)
    assert (first.made, again.made, again.reused) == (20, 0, 20) and warnings == []


@pytest.mark.slow
def test_bars_appended_after_the_window_reuse_every_decision(tmp_path):
    run(tmp_path, BARS.iloc[:60])
    again, warnings = run(tmp_path, BARS)
    assert (again.made, again.reused) == (0, 20) and warnings == []


@pytest.mark.slow
def test_a_changed_bar_inside_the_window_decides_afresh_and_says_what_changed(tmp_path):
    first, _ = run(tmp_path, BARS)
    changed = BARS.copy()
    changed.iloc[45, changed.columns.get_loc("volume")] += 1.0
    again, warnings = run(tmp_path, changed)
    assert (again.made, again.reused) == (20, 0)
    assert warnings == ["sma: 20 journaled decisions were made on other inputs (changed: bars:AAA); "
                        "deciding afresh, the old ones stay in the journal"]
    restored, warnings = run(tmp_path, BARS)
    assert (restored.made, restored.reused) == (0, 20) and warnings == []
    assert restored.journal_keys == first.journal_keys != again.journal_keys


@pytest.mark.slow
def test_a_changed_fingerprint_decides_afresh_under_the_same_config(tmp_path):
    run(tmp_path, BARS, fingerprint="weights-v1")
    again, warnings = run(tmp_path, BARS, fingerprint="weights-v2")
    assert (again.made, again.reused) == (20, 0)
    assert len(warnings) == 1 and "(changed: fingerprint)" in warnings[0]


def test_records_count_only_once_public_by_the_window_end(tmp_path):
    data = MarketData(bars={"AAA": BARS}, records={"news": news([START])})
    later = MarketData(bars={"AAA": BARS}, records={"news": news([START, END + pd.Timedelta(hours=17)])})
    earlier = MarketData(bars={"AAA": BARS}, records={"news": news([START, END + pd.Timedelta(hours=15)])})
    assert data_fingerprint(later, END) == data_fingerprint(data, END)
    assert data_fingerprint(earlier, END)["records:news"] != data_fingerprint(data, END)["records:news"]


def test_inputs_name_each_changed_part():
    before = DecisionInputs("c1", "", {"bars:AAA": "x", "bars:BBB": "y"})
    after = DecisionInputs("c2", "f", {"bars:AAA": "x", "bars:CCC": "z"})
    assert after.changes_from(before) == ["config", "fingerprint", "bars:BBB", "bars:CCC"]
    assert DecisionInputs.from_json(after.to_json()).key == after.key != before.key


def test_a_journal_keyed_by_config_alone_is_refused_in_one_line(tmp_path):
    path = tmp_path / "journal.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE decisions (framework_hash TEXT, framework TEXT, ticker TEXT, date TEXT, "
                   "seed INTEGER, wall_s REAL, decision TEXT)")
    with pytest.raises(DataError, match=r"journal.sqlite: a journal of an older TradeDuel.*new directory"):
        Journal(path)


class FreezeProbe:
    """BUY, noting whether the start-up heap was frozen out of the collector while deciding."""

    stateful = needs_portfolio = stochastic = False

    def __init__(self):
        self.frozen: list[int] = []

    def decide(self, batch):
        self.frozen.append(gc.get_freeze_count())
        return [Decision(action=Action.BUY) for _ in batch]


@pytest.mark.slow
def test_start_up_objects_are_frozen_out_of_timed_batches_and_thawed_after(tmp_path):
    probe = FreezeProbe()
    with Journal(tmp_path / "journal.sqlite") as journal:
        EpisodeRunner(MarketData(bars={"AAA": BARS}), SPEC, journal, progress=False).run(
            [FrameworkEntry("buy", probe, "config")])
    assert probe.frozen and min(probe.frozen) > 0
    assert gc.get_freeze_count() == 0


def test_a_one_bar_window_is_refused_and_a_partly_covered_one_warns(tmp_path):
    """Ten bars of a window that runs 30 days past the data: 20 business days uncovered."""
    one_bar = RunSpec(tickers=["AAA"], seeds=[0], start=BARS.index[-1], end=BARS.index[-1] + pd.Timedelta(days=30))
    data = MarketData(bars={"AAA": BARS}, origin={"AAA": "AAA.csv"})
    with Journal(tmp_path / "journal.sqlite") as journal:
        with pytest.raises(ConfigError, match=r"^AAA.csv: the test window .* holds only 1 bar of AAA"):
            EpisodeRunner(data, one_bar, journal, progress=False)
        warnings: list[str] = []
        late = RunSpec(tickers=["AAA"], seeds=[0], start=BARS.index[70], end=BARS.index[-1] + pd.Timedelta(days=30))
        runner = EpisodeRunner(data, late, journal, progress=False, warn=warnings.append)
    last = BARS.index[-1].date()
    assert warnings == [f"AAA: data ends {last}, before the test window {BARS.index[70].date()} .. "
                        f"{(BARS.index[-1] + pd.Timedelta(days=30)).date()}; traded {BARS.index[70].date()} .. {last} "
                        "(10 bars)"]
    assert runner.traded_windows == {"AAA": (BARS.index[70], BARS.index[-1])}


def test_a_holiday_at_the_window_edge_is_no_early_end(tmp_path):
    holiday = MarketData(bars={"AAA": BARS.drop(index=[START, END])})
    warnings: list[str] = []
    with Journal(tmp_path / "journal.sqlite") as journal:
        EpisodeRunner(holiday, SPEC, journal, progress=False, warn=warnings.append)
    assert warnings == []
