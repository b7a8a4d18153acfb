"""The anonymisation of a market (market.anonymise): seeded, invertible, consistent in bars, records
and text, weekday-preserving, scale-free where it must be, and loud about text it cannot clean."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bars import random_bars

from core.errors import ConfigError, DataError
from market.anonymise import AnonymisationKey, anonymise, restore
from market.anonymise.key import FUTURE_FLOOR
from market.anonymise.records import item_kind
from market.anonymise.text import TextCleaner
from market.data import MarketData
from market.sources.records import load_records
from market.synthetic import generate_market
from market.view import MarketView
from tools import ToolSet

FIXTURES = Path(__file__).resolve().parents[1] / "tools" / "fixtures"
CHANNEL_FILES = {"news": "news.jsonl", "social": "social.csv", "fundamentals": "fundamentals.csv",
                 "insider": "insider.jsonl", "dividends": "dividends.csv",
                 "earnings_estimates": "earnings_estimates.csv", "macro": "macro.csv"}


@pytest.fixture(scope="module")
def nvda() -> MarketData:
    """A year of random NVDA bars (2019-06 .. 2020-06) with every record channel of the tools' fixture files."""
    return MarketData(bars={"NVDA": random_bars(280, seed=1, start="2019-06-03")},
                      records={c: load_records(FIXTURES / f, c) for c, f in CHANNEL_FILES.items()})


@pytest.fixture(scope="module")
def synthetic() -> MarketData:
    return generate_market(tickers=["ALFA", "BRVO"], start="2019-01-01", days=120, seed=4)


def test_the_same_seed_gives_the_same_market_and_another_seed_another(nvda):
    first, again, other = anonymise(nvda, seed=1), anonymise(nvda, seed=1), anonymise(nvda, seed=2)
    assert first.key == again.key
    pd.testing.assert_frame_equal(first.data.records["news"], again.data.records["news"])
    assert other.key.codes != first.key.codes or other.key.weeks != first.key.weeks


def test_codes_are_stable_when_a_ticker_joins(synthetic):
    span = (pd.Timestamp("2019-01-01"), pd.Timestamp("2020-01-01"))
    two = AnonymisationKey.draw(5, span, ["ALFA", "BRVO"])
    three = AnonymisationKey.draw(5, span, ["ALFA", "BRVO", "CHRL"])
    assert {t: three.codes[t] for t in two.codes} == two.codes
    assert len(set(three.codes.values())) == 3 and not set(three.codes.values()) & set(three.codes)


def test_dates_move_by_whole_weeks_into_the_future_keeping_weekdays(nvda):
    market = anonymise(nvda, seed=0)
    code = market.key.ticker("NVDA")
    real, shown = nvda.bars["NVDA"].index, market.data.bars[code].index
    assert ((shown - real) == pd.Timedelta(weeks=market.key.weeks)).all()
    assert (shown.day_of_week == real.day_of_week).all()
    for frame in market.data.records.values():
        for column in frame.columns:
            if pd.api.types.is_datetime64_any_dtype(frame[column]):
                assert (frame[column] > FUTURE_FLOOR).all(), column
    assert abs((market.key.date(pd.Timestamp("2020-06-15")) - pd.Timestamp(2020 + market.key.years, 6, 15)).days) <= 3


def test_restore_inverts_bars_and_record_values_exactly(nvda):
    market = anonymise(nvda, seed=3)
    back = restore(market.data, market.key)
    pd.testing.assert_frame_equal(back.bars["NVDA"], nvda.bars["NVDA"], check_freq=False)
    free_text = {"headline", "source", "text", "role", "item"}
    for channel, frame in nvda.records.items():
        kept = [c for c in frame.columns if c not in free_text]
        pd.testing.assert_frame_equal(back.records[channel][kept], frame[kept], check_exact=True)


def test_returns_and_ratios_are_unchanged_bit_for_bit(nvda):
    market = anonymise(nvda, seed=0)
    code = market.key.ticker("NVDA")
    real, shown = nvda.bars["NVDA"], market.data.bars[code]
    assert np.array_equal(real["close"].pct_change().to_numpy(), shown["close"].pct_change().to_numpy(),
                          equal_nan=True)
    assert np.array_equal((real["close"] / real["volume"]).to_numpy() * market.key.price_scale["NVDA"]
                          / market.key.share_scale["NVDA"], (shown["close"] / shown["volume"]).to_numpy())
    news, shown_news = nvda.records["news"], market.data.records["news"]
    assert news["sentiment"].equals(shown_news["sentiment"])
    insider, shown_insider = nvda.records["insider"], market.data.records["insider"]
    assert np.array_equal((insider["shares"] * insider["price"]).to_numpy() * market.key.total_scale("NVDA"),
                          (shown_insider["shares"] * shown_insider["price"]).to_numpy())


@pytest.mark.parametrize(("item", "kind"), [("eps", "price"), ("diluted_eps", "price"), ("book_value_per_share", "price"),
                                            ("shares_outstanding", "shares"), ("gross_margin", "kept"),
                                            ("revenue", "total"), ("net_income", "total")])
def test_fundamentals_items_scale_by_their_unit(item, kind):
    assert item_kind(item) == kind


def test_tools_show_codes_moved_dates_and_scaled_prices(nvda):
    market = anonymise(nvda, seed=0)
    key, code = market.key, market.key.ticker("NVDA")
    day = pd.Timestamp("2020-03-03")
    real = ToolSet(MarketView(nvda, day))
    shown = ToolSet(MarketView(market.data, key.date(day)))
    bars = shown.call("get_market_data", {"ticker": code, "lookback_days": 3})
    assert bars.startswith(f"{code} daily bars {key.date(pd.Timestamp('2020-02-28')):%Y-%m-%d}")
    assert shown.call("get_market_data", {"ticker": "NVDA"}).startswith("Error: unknown ticker 'NVDA'")
    real_return = real.call("get_market_data", {"ticker": "NVDA"}).split("return_pct=")[1].split(",")[0]
    assert shown.call("get_market_data", {"ticker": code}).split("return_pct=")[1].split(",")[0] == real_return
    news = shown.call("get_news_data", {"ticker": code, "lookback_days": 7})
    assert "Nvidia" not in news and "NVDA" not in news and f"{code.capitalize()} beats estimates" in news
    assert "2020" not in news and "mean_sentiment=0.13333" in real.call(
        "get_news_data", {"ticker": "NVDA", "lookback_days": 7}) and "mean_sentiment=0.13333" in news
    insiders = shown.call("get_insider_transactions", {"ticker": code})
    assert "J. Doe" not in insiders and key.people["J. Doe"] in insiders
    real_indicators = real.call("get_stock_indicators", {"ticker": "NVDA", "indicators": ["rsi14", "cmf"]})
    shown_indicators = shown.call("get_stock_indicators", {"ticker": code, "indicators": ["rsi14", "cmf"]})
    assert [line.split(",")[1:] for line in real_indicators.splitlines()[2:-1]] == \
        [line.split(",")[1:] for line in shown_indicators.splitlines()[2:-1]]


def test_the_synthetic_company_names_follow_their_codes(synthetic):
    market = anonymise(synthetic, seed=0)
    texts = " ".join([*market.data.records["news"]["headline"], *market.data.records["social"]["text"]])
    assert "Alfa" not in texts and "ALFA" not in texts and "Brvo" not in texts
    assert f"{market.key.ticker('ALFA').capitalize()} " in texts
    assert len(market.data.records["news"]) == len(synthetic.records["news"])


@pytest.fixture(scope="module")
def cleaner() -> TextCleaner:
    span = (pd.Timestamp("2019-01-01"), pd.Timestamp("2021-01-01"))
    key = AnonymisationKey.draw(0, span, ["NVDA", "MSFT", "GE"], people=["J. Doe"], reserved=["NVIDIA", "Microsoft"])
    return TextCleaner(key, {"NVDA": ("NVIDIA", "Jensen Huang"), "MSFT": ("Microsoft",)})


def test_text_cleaning_replaces_every_form_in_its_case(cleaner):
    key = cleaner.key
    nvda, msft, ge = key.codes["NVDA"], key.codes["MSFT"], key.codes["GE"]
    c, total = key.price_scale["NVDA"], key.total_scale("NVDA")
    published = pd.Timestamp("2020-06-16 10:00")
    text = ("NVIDIA's $NVDA and nvda beat Microsoft; GE's J. Doe sold at $350.25 of a $3.08 billion quarter, "
            "on Monday 2020-06-15 (June 15, 2020; 06/15/2020; 15 Jun 2020; June 12th), Q2 2020, FY21, Q1 '20")
    moved = key.date(pd.Timestamp("2020-06-15"))
    y = 2020 + key.years
    expected = (f"{nvda}'s ${nvda} and {nvda.lower()} beat {msft.capitalize()}; {ge}'s {key.people['J. Doe']} sold at "
                f"${350.25 * c:.{2 + max(0, -int(np.log2(c)))}f} of a ${3.08 * total:.{2 + max(0, -int(np.log2(total)))}f} "
                f"billion quarter, on Monday {moved:%Y-%m-%d} (June {moved.day}, {moved.year}; {moved:%m/%d/%Y}; "
                f"{moved.day} Jun {moved.year}; June {key.date(pd.Timestamp('2020-06-12')).day}th), Q2 {y}, "
                f"FY{(21 + key.years) % 100:02d}, Q1 '{(20 + key.years) % 100:02d}")
    assert moved.day_of_week == 0 and moved.month == 6
    cleaned = cleaner.clean(text, "NVDA", published)
    assert cleaned == expected
    assert cleaner.residue(cleaned) is None


@pytest.mark.parametrize(("text", "residue"), [
    ("#NVDAgang to the moon", "NVDA"), ("Microsoft365 ships", "Microsoft"), ("nvidiafans unite", "nvidia"),
    ("the J. Doe-led fund", None), ("nothing to see here", None),
])
def test_residue_names_what_cleaning_left(cleaner, text, residue):
    assert cleaner.residue(cleaner.clean(text, "NVDA", pd.Timestamp("2020-01-02"))) == residue


def test_a_record_the_cleaner_cannot_clean_stops_with_one_line_naming_it(nvda):
    news = nvda.records["news"].copy()
    news.loc[1, "headline"] = "Why #NVDAgang is buying"
    data = replace(nvda, records={**nvda.records, "news": news})
    with pytest.raises(DataError) as error:
        anonymise(data, seed=0)
    message = str(error.value)
    assert "\n" not in message and message.startswith("news record 2 (NVDA, published ")
    assert "'NVDA'" in message and "probe.aliases" in message and "probe.uncleanable=withhold" in message
    withheld = anonymise(data, seed=0, uncleanable="withhold")
    assert withheld.withheld == {"news": 1} and len(withheld.data.records["news"]) == len(news) - 1


def test_a_channel_or_column_without_a_rule_is_refused(nvda):
    extra = nvda.records["news"].assign(author="someone")
    with pytest.raises(ConfigError, match="no rule for column 'author' of the news channel"):
        anonymise(replace(nvda, records={"news": extra}), seed=0)
    with pytest.raises(ConfigError, match="no rule for the record channel 'filings'"):
        anonymise(replace(nvda, records={"filings": nvda.records["news"]}), seed=0)


def test_a_portfolio_is_shown_in_anonymised_units(nvda):
    from market.portfolio import PortfolioState
    key = anonymise(nvda, seed=0).key
    real = PortfolioState.single("NVDA", cash=1000.0, shares=30.0, close=50.0)
    shown = key.portfolio(real, "NVDA")
    assert shown.exposure == real.exposure
    assert shown.equity == real.equity * key.total_scale("NVDA")
