"""Alpha Vantage records from recorded responses in the documented format; never the network."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from core.errors import DataError
from market.sources.alphavantage import (
    KEY_VARIABLE,
    MACRO_FUNCTIONS,
    TICKER_FUNCTIONS,
    alphavantage_records,
    fetch_alphavantage,
    with_alphavantage,
)
from market.sources.cache import CACHE_ENV, cache_folder
from market.sources.embedded import load_embedded
from market.view import MarketView
from tools import ToolSet

CACHE = Path(__file__).parent / "fixtures" / "alphavantage"


@pytest.fixture(scope="module")
def records():
    return alphavantage_records(["NVDA"], CACHE)


def test_channels_and_release_rules(records):
    assert set(records) == {"news", "fundamentals", "insider", "dividends", "macro"}
    news = records["news"].set_index("headline")
    assert news.loc["Nvidia unveils new data-center GPU", "sentiment"] == pytest.approx(0.412)  # the ticker's score
    assert news.loc["Chip stocks fall as virus spreads", "sentiment"] == pytest.approx(-0.3)  # overall score
    filed = records["fundamentals"].groupby("period_end")["available_at"].first()
    assert filed[pd.Timestamp("2019-10-27")] == pd.Timestamp("2019-12-11")  # quarter + 45 days
    assert filed[pd.Timestamp("2020-01-26")] == pd.Timestamp("2020-03-31")  # fiscal year end + 65 days
    assert "ebitda" not in set(records["fundamentals"].query("period_end == '2019-10-27'")["item"])  # "None"
    insider = records["insider"]
    assert len(insider) == 1 and insider["available_at"].iloc[0] == pd.Timestamp("2020-02-27")  # RSU grant dropped
    assert records["dividends"]["available_at"].tolist() == [pd.Timestamp("2020-02-14")]
    macro = records["macro"].set_index(["series", "period"])["available_at"]
    assert macro[("cpi", pd.Timestamp("2020-01-01"))] == pd.Timestamp("2020-02-20 08:30")
    assert macro[("treasury_10y", pd.Timestamp("2020-03-02"))] == pd.Timestamp("2020-03-03 09:00")
    assert ("treasury_10y", pd.Timestamp("2020-02-17")) not in macro.index  # "." is missing


@pytest.mark.slow
def test_tools_read_alphavantage_records_point_in_time():
    data = with_alphavantage(load_embedded(["NVDA"]), CACHE)
    toolset = ToolSet(MarketView(data, "2020-03-02"))
    assert "Nvidia unveils" in toolset.call("get_news_data", {"ticker": "NVDA"})
    income = toolset.call("get_income_statements", {"ticker": "NVDA"})
    assert "2019-10-27" in income and "2020-01-26" not in income  # not filed before 2020-03-31
    macro = toolset.call("get_macro_indicators", {})
    assert "treasury_10y,1.13" in macro and "cpi,257.97,2020-01-01" in macro and "258.68" not in macro


def test_fetch_writes_the_cache_through_the_given_client(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_VARIABLE, "demo")
    asked = []

    class Response:
        def __init__(self, payload):
            self.payload = payload

        def json(self):
            return self.payload

    def get(url, params):
        asked.append(params)
        name = params["function"] + (f"_{params.get('symbol') or params.get('tickers')}"
                                     if params["function"] in TICKER_FUNCTIONS else "")
        return Response(json.loads((CACHE / f"{name}.json").read_text()))

    written = fetch_alphavantage(["NVDA"], tmp_path, get=get)
    assert len(written) == len(TICKER_FUNCTIONS) + len(MACRO_FUNCTIONS)
    assert all(p["apikey"] == "demo" for p in asked)
    assert alphavantage_records(["NVDA"], tmp_path)["news"].equals(alphavantage_records(["NVDA"], CACHE)["news"])


def test_errors_are_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_VARIABLE, raising=False)
    with pytest.raises(DataError, match=KEY_VARIABLE):
        fetch_alphavantage(["NVDA"], tmp_path, get=lambda url, params: None)
    with pytest.raises(DataError, match=r"NEWS_SENTIMENT_MSFT.json: not cached; fetch it with: python -m"):
        alphavantage_records(["MSFT"], CACHE)
    (tmp_path / "NEWS_SENTIMENT_NVDA.json").write_text(json.dumps({"Information": "rate limit reached"}))
    with pytest.raises(DataError, match="Alpha Vantage says: rate limit reached"):
        alphavantage_records(["NVDA"], tmp_path)


def test_the_cache_folder_follows_the_environment_at_call_time(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert cache_folder("alphavantage") == tmp_path / "alphavantage"
    assert cache_folder("alphavantage", tmp_path / "mine") == tmp_path / "mine"
    monkeypatch.setenv(CACHE_ENV, "")
    assert cache_folder("yfinance") == Path.home() / ".cache" / "tradeduel" / "yfinance"
