"""The anonymised replay's framework wrapper (frameworks.replay): what a wrapped framework is shown,
and that every scale-free rule baseline decides bit for bit as it does on the real market."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bars import random_bars
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from support_frameworks import ExposureTargeter

from cli_helpers import ROOT
from frameworks.replay import AnonymisedFramework, anonymised_run_config, data_digest
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.anonymise import AnonymisationKey, anonymise
from market.data import MarketData
from market.decision import DecisionContext
from market.view import MarketView
from tools import ToolSet

SCALE_FREE_BASELINES = ["buy_and_hold", "macd", "sma_cross", "zmr", "kdj_rsi"]
"""Every rule baseline whose decisions depend only on ratios of prices (random draws from the ticker's name)."""


def baseline(name: str):
    with initialize_config_dir(config_dir=str(ROOT / "configs" / "framework"), version_base="1.3"):
        return instantiate(compose(config_name=name))


def market(seed: int) -> MarketData:
    """Two tickers of 400 random bars with different price levels and paths."""
    second = random_bars(400, seed=seed + 100, start="2019-01-01")
    second[["open", "high", "low", "close"]] *= 37.0
    return MarketData(bars={"AAA": random_bars(400, seed=seed, start="2019-01-01"), "BBB": second})


def contexts(data: MarketData, days: int = 200) -> list[DecisionContext]:
    return [DecisionContext(ticker=t, date=d, view=MarketView(data, d), seed=0, tools=ToolSet(MarketView(data, d)))
            for t in data.tickers for d in data.frame(t).index[-days:]]


@pytest.mark.slow
@pytest.mark.parametrize("name", SCALE_FREE_BASELINES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_scale_free_baseline_decides_identically_on_anonymised_data(name, seed):
    data = market(seed)
    for anonymisation_seed in (0, 7):
        shown = anonymise(data, seed=anonymisation_seed)
        wrapped = AnonymisedFramework(baseline(name), shown, data_digest(shown, data.frame("AAA").index[-1]))
        batch = contexts(data)
        real = [d.action for d in baseline(name).decide(batch)]
        assert [d.action for d in wrapped.decide(batch)] == real
        if name != "buy_and_hold":
            assert len(set(real)) == 3  # the rule trades both ways on these paths: the check has teeth


def test_the_wrapped_framework_sees_codes_moved_dates_and_tools_on_the_anonymised_view():
    data = market(0)
    shown = anonymise(data, seed=3)
    seen = []

    class Recorder:
        stateful = needs_portfolio = stochastic = False

        def decide(self, batch):
            seen.extend(batch)
            return baseline("buy_and_hold").decide(batch)

    wrapped = AnonymisedFramework(Recorder(), shown, "digest", toolset_factory=ToolSet)
    real = contexts(data, days=3)
    wrapped.decide(real)
    for before, after in zip(real, seen):
        code = shown.key.ticker(before.ticker)
        assert after.ticker == code and after.date == shown.key.date(before.date)
        assert after.view.tickers == sorted(shown.key.codes.values())
        assert after.tools.view is after.view and after.tools.call("get_market_data", {"ticker": code}).startswith(code)
        assert after.view.last_close(code) == before.view.last_close(before.ticker) * shown.key.price_scale[before.ticker]


@pytest.mark.slow
def test_a_stateful_framework_steps_on_the_real_prices_seeing_its_portfolio_in_anonymised_units(tmp_path):
    data = market(1)
    days = data.frame("AAA").index
    spec = RunSpec(tickers=["AAA"], seeds=[0], start=days[-30], end=days[-1])
    shown = anonymise(data, seed=0)
    plain, targeter = ExposureTargeter(), ExposureTargeter()
    wrapped = AnonymisedFramework(targeter, shown, "digest")
    with Journal(tmp_path / "journal.sqlite") as journal:
        runner = EpisodeRunner(data, spec, journal, progress=False)
        real = runner.run([FrameworkEntry("real", plain, "hash")])
        replay = runner.run([FrameworkEntry("replay", wrapped, "hash", wrapped.fingerprint())])
    assert np.allclose(plain.seen_exposures, targeter.seen_exposures, rtol=0, atol=1e-15)
    assert real.episodes[next(iter(real.episodes))].equity.equals(replay.episodes[next(iter(replay.episodes))].equity)


def test_the_fingerprint_covers_the_anonymised_data():
    data = market(0)
    end = data.frame("AAA").index[-1]
    first, other = anonymise(data, seed=0), anonymise(data, seed=1)
    fingerprints = {AnonymisedFramework(baseline("macd"), m, data_digest(m, end)).fingerprint() for m in (first, other)}
    assert len(fingerprints) == 2


def test_the_run_config_of_the_replay_names_codes_and_moved_windows():
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["+suite=smoke"])
    key = AnonymisationKey.draw(0, (pd.Timestamp("2015-01-01"), pd.Timestamp("2021-12-31")), ["MSFT", "NVDA"])
    shown = anonymised_run_config(cfg, key)
    assert list(shown.tickers) == [key.ticker("MSFT"), key.ticker("NVDA")]
    assert pd.Timestamp(shown.split.test.start) == key.date(pd.Timestamp(cfg.split.test.start))
    assert shown.split.gap_bars == cfg.split.gap_bars and list(cfg.tickers) == ["MSFT", "NVDA"]
    assert cfg.split.test.start == "2020-01-02"  # the run's own config is left as it was
