"""The synthetic market generator: seeded, schema-conforming, point-in-time, configurable."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf
from pydantic import ValidationError

from market.data import MarketData
from market.sources.records import validate_records
from market.synthetic import SyntheticKnobs, generate_market
from market.synthetic.latent import ar1, regime_path
from market.synthetic.text import tone
from market.validation import validate_bars

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def market():
    return generate_market(tickers=["AAA", "BBB"], days=300, seed=5)


def test_same_seed_same_market_and_another_seed_differs(market):
    again = generate_market(tickers=["AAA", "BBB"], days=300, seed=5)
    for ticker in market.tickers:
        pd.testing.assert_frame_equal(market.frame(ticker), again.frame(ticker))
    for channel, frame in market.records.items():
        pd.testing.assert_frame_equal(frame, again.records[channel])
    other = generate_market(tickers=["AAA", "BBB"], days=300, seed=6)
    assert not np.allclose(other.frame("AAA")["close"], market.frame("AAA")["close"])


def test_channel_knobs_leave_the_prices_alone(market):
    louder = generate_market(tickers=["AAA", "BBB"], days=300, seed=5,
                             channels={"social": {"snr": 4.0, "per_day": 6.0}, "macro": {"snr": 2.0}})
    pd.testing.assert_frame_equal(louder.frame("BBB"), market.frame("BBB"))
    assert len(louder.records["social"]) > 1.5 * len(market.records["social"])


def test_bars_are_valid_business_days(market):
    for ticker in market.tickers:
        bars = market.frame(ticker)
        validate_bars(bars, ticker)
        assert bars.index[0] == pd.Timestamp("2020-01-01") and len(bars) == 300
        assert (bars.index.day_of_week < 5).all()


def test_every_channel_matches_its_file_schema(market):
    assert set(market.records) == {"news", "social", "fundamentals", "insider", "dividends",
                                   "earnings_estimates", "macro"}
    for channel, frame in market.records.items():
        checked = validate_records(frame, channel, f"synthetic {channel}")
        assert list(checked.columns) == list(frame.columns)
        assert frame["available_at"].is_monotonic_increasing


def test_records_fall_inside_the_span_and_straddle_the_close(market):
    last = market.frame("AAA").index[-1] + pd.Timedelta(days=1)
    news = market.records["news"]
    hours = news["available_at"].dt.hour
    assert (news["available_at"] < last).all()
    assert (hours < 16).mean() > 0.5 and (hours >= 16).any()  # some news comes after the close
    filings = market.records["fundamentals"]["available_at"]
    assert (filings.dt.time == pd.Timestamp("07:30").time()).all()
    assert set(market.records["macro"]["ticker"]) == {""}
    assert set(market.records["macro"]["series"]) == {"index_level", "vix", "wti", "economic_surprise",
                                                      "cpi_yoy", "fed_funds_rate"}


def test_headline_tone_follows_sentiment(market):
    news = market.records["news"]
    positive = news.loc[news["sentiment"] > 0.5, "headline"]
    negative = news.loc[news["sentiment"] < -0.5, "headline"]
    assert positive.str.contains("beats|upgrades|raises|wins|bullish|buyback|gains|Record|jumps|top").mean() > 0.9
    assert negative.str.contains("misses|downgrades|warns|probe|loses|departs|problems|drop|slides|cuts").mean() > 0.9
    assert news["headline"].nunique() > 0.5 * len(news)
    assert [tone(s) for s in (0.5, 0.0, -0.5)] == ["positive", "neutral", "negative"]


def test_fundamental_filings_come_after_their_quarter(market):
    fundamentals = market.records["fundamentals"]
    lag = fundamentals["available_at"] - fundamentals["period_end"]
    assert lag.min() >= pd.Timedelta(days=25) and lag.max() <= pd.Timedelta(days=50)


def test_hidden_processes_have_their_stated_moments():
    rng = np.random.default_rng(0)
    path = ar1(rng, (20000,), 0.7, 0.01)
    assert path.std() == pytest.approx(0.01, rel=0.05)
    assert np.corrcoef(path[1:], path[:-1])[0, 1] == pytest.approx(0.7, abs=0.03)
    states = regime_path(rng, 20000, ["a", "b", "c"], 50.0)
    switches = (np.diff(states) != 0).mean()
    assert switches == pytest.approx(1 / 50, rel=0.2)


def test_bad_knobs_fail_with_a_clear_message():
    with pytest.raises(ValidationError, match="unknown channel"):
        generate_market(channels={"tweets": {"snr": 1.0}})
    with pytest.raises(ValidationError, match="snr"):
        generate_market(channels={"news": {"snr": -1.0}})


def test_the_hydra_config_instantiates_a_market():
    cfg = OmegaConf.create({"tickers": ["ALFA", "BRVO"],
                            "data": OmegaConf.load(ROOT / "configs" / "data" / "synthetic.yaml")})
    market = instantiate(cfg.data)
    assert isinstance(market, MarketData) and market.tickers == ["ALFA", "BRVO"]
    days = market.frame("ALFA").index
    assert days[0] == pd.Timestamp("2018-01-01") and days[-1] >= pd.Timestamp("2020-06-30")


def test_the_hydra_config_spells_out_the_knob_defaults():
    config = OmegaConf.to_container(OmegaConf.load(ROOT / "configs" / "data" / "synthetic.yaml"))
    knobs = {k: v for k, v in config.items() if not k.startswith("_") and k not in ("tickers", "start", "days")}
    assert set(knobs) == set(SyntheticKnobs.model_fields) - {"tickers", "start", "days"}
    assert SyntheticKnobs.model_validate(knobs) == SyntheticKnobs()
