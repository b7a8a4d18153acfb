"""The terse rendering of tool results: the same facts as the default rendering, in fewer characters."""

from __future__ import annotations

import math

import pytest

from market.synthetic import generate_market
from market.view import MarketView
from single_agent.expert import summary_values
from tools import TOOLS, ToolSet
from tools.render import ToolResult, parse_rendering

TICKERS = ["ALFA", "BRVO"]


@pytest.fixture(scope="module")
def market():
    return generate_market(tickers=TICKERS, start="2018-01-01", days=160, seed=4)


def _arguments(name: str, ticker: str) -> dict:
    return {"ticker": ticker} if "ticker" in TOOLS[name].args_model.model_fields else {}


def _results(market) -> list[tuple[str, ToolResult]]:
    """Every tool's typed result for both tickers on three days spread over the market."""
    index = market.frame(TICKERS[0]).index
    out = []
    for day in index[60::45]:
        view = MarketView(market, day)
        for ticker in TICKERS:
            for name, spec in TOOLS.items():
                parsed = spec.args_model.model_validate(_arguments(name, ticker)).model_dump()
                out.append((name, spec.function(view, **parsed)))
    return out


def _close(read, value) -> bool:
    """A cell read back matches the value it was rendered from (5 significant digits, na for missing)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return read is None
    if isinstance(value, str):
        return read == value.replace("\n", " ").replace(",", ";")
    return math.isclose(read, float(value), rel_tol=1e-4, abs_tol=1e-9)


@pytest.mark.slow
def test_both_renderings_read_back_to_the_same_facts_for_every_tool(market):
    results = _results(market)
    assert {name for name, _ in results} == set(TOOLS)
    with_rows = 0
    for name, result in results:
        default, terse = result.render(), result.render(terse=True)
        read, read_terse = parse_rendering(default), parse_rendering(terse)
        assert read == read_terse, name
        assert len(terse) <= len(default), name
        assert read.title == result.title and read.columns == result.columns, name
        assert len(read.rows) == len(result.rows), name
        for got, row in zip(read.rows, result.rows):
            assert all(_close(g, v) for g, v in zip(got, row)), (name, got, row)
        assert read.summary.keys() == {k for k, v in result.summary.items() if not math.isnan(v)}, name
        assert all(_close(read.summary[k], result.summary[k]) for k in read.summary), name
        assert summary_values(default) == summary_values(terse), name
        with_rows += bool(result.rows)
    assert with_rows > len(results) // 2  # the tables were exercised, not only titles


def test_terse_numbers_drop_only_the_leading_zero():
    result = ToolResult(title="t", columns=["a", "b", "c", "d"], rows=[[0.4231, -0.05, 12345.0, None]],
                        summary={"mean_sentiment": -0.0932, "count": 5})
    assert result.render(terse=True).split("\n")[2:] == [".4231,-.05,1.2345K,na", "summary: mean_sentiment=-.0932 count=5"]
    assert parse_rendering(result.render(terse=True)).rows == [[0.4231, -0.05, 12345.0, None]]


def test_the_toolset_writes_the_terse_rendering_when_asked(market):
    view = MarketView(market, market.frame("ALFA").index[100])
    for name in TOOLS:
        plain = ToolSet(view).call(name, _arguments(name, "ALFA"))
        terse = ToolSet(view, terse=True).call(name, _arguments(name, "ALFA"))
        assert parse_rendering(plain) == parse_rendering(terse), name
    news = ToolSet(view, terse=True).call("get_news_data", {"ticker": "ALFA"})
    assert "summary: count=" in news and ", mean_sentiment" not in news
