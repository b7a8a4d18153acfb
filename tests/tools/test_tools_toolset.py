"""The tool set: three faces from one definition, readable errors, look-ahead flags, accounting."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError

from core.errors import ConfigError
from market.decision import ToolCallRecord
from market.sources.embedded import load_embedded
from market.sources.records import CHANNELS, with_records
from market.synthetic import generate_market
from market.view import MarketView
from tools import REQUIRED_TOOLS, TOOLS, ToolSet

FIXTURES = Path(__file__).parent / "fixtures"
PAPER_TOOLS = ["get_market_data", "get_stock_indicators", "get_news_data", "get_reddit_data",
               "get_macro_indicators", "get_balance_sheet", "get_cashflow", "get_income_statements",
               "get_insider_transactions", "get_dividends", "get_earnings_estimate"]


@pytest.fixture(scope="module")
def synthetic():
    return generate_market(tickers=["AAA", "BBB"], days=260, seed=1)


def default_arguments(name: str, ticker: str) -> dict:
    return {} if name == "get_macro_indicators" else {"ticker": ticker}


def test_the_paper_tool_list_in_order():
    assert list(TOOLS) == PAPER_TOOLS
    assert set(REQUIRED_TOOLS) <= set(TOOLS)


def test_schemas_are_in_the_qwen_function_format_and_share_the_definition(synthetic):
    toolset = ToolSet(MarketView(synthetic, "2020-06-01"))
    for schema in toolset.schemas():
        assert schema["type"] == "function"
        function = schema["function"]
        spec = TOOLS[function["name"]]
        assert function["description"] == spec.description
        assert spec.description and spec.description in spec.function.__doc__.replace("\n", " ")
        parameters = function["parameters"]
        assert parameters["type"] == "object"
        assert set(parameters["properties"]) == set(spec.args_model.model_fields)
        assert all(p.get("description") for p in parameters["properties"].values())
        assert "title" not in json.dumps(parameters)
    market = next(s for s in toolset.schemas() if s["function"]["name"] == "get_market_data")
    assert market["function"]["parameters"]["required"] == ["ticker"]
    assert market["function"]["parameters"]["properties"]["lookback_days"]["minimum"] == 1


@pytest.mark.slow
def test_schemas_have_the_shape_transformers_builds_for_chat_templates():
    from transformers.utils import get_json_schema

    def sample(ticker: str, days: int = 5) -> str:
        """Sample tool.

        Args:
            ticker: A ticker.
            days: Days back.

        Returns:
            The ticker.
        """
        return ticker

    reference = get_json_schema(sample)
    for schema in ToolSet(MarketView(generate_market(days=40), "2020-02-03")).schemas():
        assert schema.keys() == reference.keys()
        assert schema["function"].keys() == reference["function"].keys() - {"return"}
        assert {"type", "properties", "required"} <= schema["function"]["parameters"].keys()
        assert json.loads(json.dumps(schema)) == schema


def test_langchain_tools_validate_run_and_record(synthetic):
    toolset = ToolSet(MarketView(synthetic, "2020-06-01"), names=["get_market_data", "get_news_data"])
    tools = {tool.name: tool for tool in toolset.langchain_tools()}
    assert set(tools) == {"get_market_data", "get_news_data"}
    assert tools["get_market_data"].args_schema is TOOLS["get_market_data"].args_model
    assert tools["get_market_data"].description == TOOLS["get_market_data"].description
    text = tools["get_market_data"].invoke({"ticker": "AAA", "lookback_days": 3})
    assert text == ToolSet(MarketView(synthetic, "2020-06-01")).call("get_market_data", {"ticker": "AAA", "lookback_days": 3})
    rejected = tools["get_news_data"].invoke({"ticker": "AAA", "limit": 0})
    assert rejected.startswith("Error: bad arguments for get_news_data: limit")
    assert [r.name for r in toolset.records] == ["get_market_data", "get_news_data"]
    assert toolset.records[1].error is not None


@pytest.mark.parametrize("name", PAPER_TOOLS)
def test_every_tool_answers_on_synthetic_data(synthetic, name):
    toolset = ToolSet(MarketView(synthetic, "2020-09-15"))
    text = toolset.call(name, default_arguments(name, "AAA"))
    assert not text.startswith("Error"), text
    assert "provides none" not in text
    assert len(text) < 2500, f"{name} renders {len(text)} characters"
    (record,) = toolset.records
    assert isinstance(record, ToolCallRecord)
    assert (record.name, record.result_chars, record.lookahead, record.error) == (name, len(text), False, None)
    assert record.latency_s > 0


@pytest.mark.parametrize("name", PAPER_TOOLS)
def test_every_tool_answers_on_embedded_data(name):
    toolset = ToolSet(MarketView(load_embedded(["NVDA"]), "2018-06-15"))
    text = toolset.call(name, default_arguments(name, "NVDA"))
    assert not text.startswith("Error"), text
    if name in ("get_market_data", "get_stock_indicators"):
        assert "NVDA" in text and "2018-06-15" in text
    elif name == "get_macro_indicators":
        assert "vix" in text and "sp500" in text and "core_cpi" in text
    else:
        assert "this market's data source provides none" in text


@pytest.fixture(scope="module")
def file_market():
    bars = load_embedded(["NVDA"])
    files = {c: next(FIXTURES.glob(f"{c}.*")) for c in CHANNELS}
    return with_records(bars, files)


@pytest.mark.parametrize("name", PAPER_TOOLS)
def test_every_tool_answers_on_file_data(file_market, name):
    text = ToolSet(MarketView(file_market, "2020-03-02")).call(name, default_arguments(name, "NVDA"))
    assert not text.startswith("Error") and "provides none" not in text, text


def test_file_records_respect_the_decision_time(file_market):
    toolset = ToolSet(MarketView(file_market, "2020-03-02"))
    news = toolset.call("get_news_data", {"ticker": "NVDA"})
    assert "Nvidia beats estimates" in news and "After-hours" not in news
    assert "summary: count=3, mean_sentiment=0.05" in news  # (0.6 − 0.5)/2; the null sentiment is skipped
    social = toolset.call("get_reddit_data", {"ticker": "NVDA"})
    assert "from the future" not in social and "toppy" in social
    income = toolset.call("get_income_statements", {"ticker": "NVDA", "periods": 4})
    assert "2020-01-26" in income and "2020-04-26" not in income and "3.105B" in income
    macro = toolset.call("get_macro_indicators", {})
    assert "fed_funds_rate,1.625,2020-01-29,2020-01-29 14:00,0" in macro  # the 2020-03-03 cut is not out yet
    later = ToolSet(MarketView(file_market, "2020-03-03")).call("get_macro_indicators", {})
    assert "fed_funds_rate,1.125,2020-03-03,2020-03-03 10:00,-30.769" in later
    assert ToolSet(MarketView(file_market, "2020-03-03")).call("get_macro_indicators", {"end_date": "2020-03-02"}) == macro
    estimate = toolset.call("get_earnings_estimate", {"ticker": "NVDA"})
    assert "2020-01-26,2020-02-10 09:00,1.69,0.02" in estimate


@pytest.mark.parametrize(("name", "arguments", "expected"), [
    ("get_price", {"ticker": "AAA"}, "Error: unknown tool 'get_price'; available tools: get_market_data"),
    ("get_market_data", {"ticker": "ZZZ"}, "Error: unknown ticker 'ZZZ'; available: AAA, BBB"),
    ("get_market_data", {"ticker": "AAA", "lookback_days": -5}, "Error: bad arguments for get_market_data: lookback_days"),
    ("get_market_data", {}, "Error: bad arguments for get_market_data: ticker: Field required"),
    ("get_market_data", {"ticker": "AAA", "window": 5}, "Error: bad arguments for get_market_data: window: Extra inputs"),
    ("get_stock_indicators", {"ticker": "AAA", "indicators": ["rsi99"]}, "Error: bad arguments for get_stock_indicators: indicators.0"),
    ("get_news_data", {"ticker": "AAA", "end_date": "yesterday-ish"}, "Error: end_date 'yesterday-ish' is not a date"),
    ("get_news_data", ["AAA"], "Error: arguments of get_news_data must be a JSON object"),
])
def test_mistakes_come_back_as_readable_errors(synthetic, name, arguments, expected):
    toolset = ToolSet(MarketView(synthetic, "2020-06-01"))
    text = toolset.call(name, arguments)
    assert text.startswith(expected), text
    assert "\n" not in text
    assert toolset.records[-1].error == text.removeprefix("Error: ")


def test_a_date_after_the_view_is_clamped_and_flagged(synthetic):
    toolset = ToolSet(MarketView(synthetic, "2020-06-01"))
    future = toolset.call("get_market_data", {"ticker": "AAA", "end_date": "2020-07-01", "lookback_days": 3})
    today = toolset.call("get_market_data", {"ticker": "AAA", "lookback_days": 3})
    assert future.startswith(today)
    assert "not available" in future.splitlines()[-1]
    assert [r.lookahead for r in toolset.records] == [True, False]
    assert toolset.records[0].arguments["end_date"] == "2020-07-01"


def test_a_future_date_is_flagged_even_when_the_call_fails(synthetic):
    toolset = ToolSet(MarketView(synthetic, "2020-06-01"))
    text = toolset.call("get_news_data", {"ticker": "ZZZ", "end_date": "2020-06-02"})
    assert text.startswith("Error: unknown ticker")
    assert toolset.records[0].lookahead


def test_an_earlier_end_date_moves_the_window_back(synthetic):
    toolset = ToolSet(MarketView(synthetic, "2020-06-01"))
    text = toolset.call("get_market_data", {"ticker": "AAA", "end_date": "2020-05-01", "lookback_days": 2})
    assert text.splitlines()[0] == "AAA daily bars 2020-04-30..2020-05-01"
    assert not toolset.records[0].lookahead


def test_a_subset_of_tools_and_unknown_names(synthetic):
    view = MarketView(synthetic, "2020-06-01")
    toolset = ToolSet(view, names=["get_news_data"])
    assert toolset.names == ["get_news_data"] and len(toolset.schemas()) == 1
    assert toolset.call("get_market_data", {"ticker": "AAA"}).startswith("Error: unknown tool")
    with pytest.raises(ConfigError, match="unknown tool"):
        ToolSet(view, names=["get_weather"])


def test_argument_models_reject_what_the_schema_forbids():
    with pytest.raises(ValidationError):
        TOOLS["get_news_data"].args_model(ticker="AAA", lookback_days=0)
    assert TOOLS["get_news_data"].date_fields == ("end_date",)
    assert TOOLS["get_macro_indicators"].args_model().model_dump() == {"end_date": None, "lookback_days": 30}


def test_results_are_typed(synthetic):
    result = TOOLS["get_news_data"].function(MarketView(synthetic, "2020-06-01"), "AAA", lookback_days=30, limit=2)
    assert len(result.rows) == 2 and result.columns == ["time", "sentiment", "source", "headline"]
    assert result.summary["count"] >= 2
    times = [pd.Timestamp(row[0]) for row in result.rows]
    assert times == sorted(times, reverse=True) and times[0] <= pd.Timestamp("2020-06-01 16:00")


def test_records_without_a_publication_time_are_never_shown(synthetic):
    news = synthetic.records["news"].copy()
    news["available_at"] = news["available_at"].astype("datetime64[ns]")
    undated = pd.DataFrame({"ticker": ["AAA"], "available_at": [pd.NaT], "headline": ["UNDATED scoop"],
                            "source": ["?"], "sentiment": [1.0]})
    data = type(synthetic)(bars=synthetic.bars, records={**synthetic.records, "news": pd.concat([news, undated])})
    text = ToolSet(MarketView(data, "2020-06-01")).call("get_news_data", {"ticker": "AAA", "limit": 20,
                                                                          "lookback_days": 730})
    assert "UNDATED" not in text and "items" in text
