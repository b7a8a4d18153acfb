"""Property: for every tool and any arguments, data after the view's date never changes the answer.

Bars dated after `asof` and records published after the view's cutoff are perturbed (prices
scaled, texts and numbers rewritten, rows dropped, future rows added); every tool's text and
its look-ahead flag must stay identical. A control test shows the same comparison does see a
change made at `asof`, so the property cannot hold vacuously.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from market.calendar import Calendar
from market.data import MarketData
from market.synthetic import generate_market
from market.view import MarketView
from tools import TOOLS, ToolSet
from tools.indicators import INDICATOR_NAMES

BASE = generate_market(tickers=["AAA", "BBB"], days=220, seed=7,
                       channels={"insider": {"per_day": 0.4}, "fundamentals": {"snr": 1.0}})
DATES = BASE.frame("AAA").index


def _day_strings(center: pd.Timestamp) -> st.SearchStrategy[str]:
    return st.integers(-120, 120).map(lambda k: f"{center + pd.Timedelta(days=k):%Y-%m-%d}")


def argument_strategy(name: str, field: str, asof: pd.Timestamp) -> st.SearchStrategy:
    """Values (valid and invalid) for one argument of a tool."""
    strategies = {
        "ticker": st.sampled_from(["AAA", "BBB", "ZZZ"]),
        "end_date": st.none() | _day_strings(asof) | st.just("not-a-date"),
        "lookback_days": st.integers(-1, 800),
        "limit": st.integers(0, 25),
        "periods": st.integers(0, 5),
        "indicators": st.none() | st.lists(st.sampled_from([*INDICATOR_NAMES, "bogus"]), max_size=3),
    }
    return strategies[field]


def test_every_argument_of_every_tool_has_a_strategy():
    for name, spec in TOOLS.items():
        for field in spec.args_model.model_fields:
            argument_strategy(name, field, DATES[0])


def _perturb_bars(frame: pd.DataFrame, asof: pd.Timestamp, rng: np.random.Generator) -> pd.DataFrame:
    future = frame.index > asof
    out = frame.copy()
    out.loc[future, ["open", "high", "low", "close"]] *= rng.uniform(0.5, 2.0)
    out.loc[future, "volume"] *= 3
    keep = ~future | (rng.random(len(frame)) < 0.5)
    return out.loc[keep]


def _perturb_records(frame: pd.DataFrame, cutoff: pd.Timestamp, rng: np.random.Generator) -> pd.DataFrame:
    if frame.empty:
        return frame
    future = (frame["available_at"] > cutoff).to_numpy()
    out = frame.copy()
    for column in out.columns.drop(["ticker", "available_at"]):
        values = out[column]
        if pd.api.types.is_numeric_dtype(values):
            out.loc[future, column] = -values[future] if column == "sentiment" else values[future] * 7 + 1
        elif pd.api.types.is_datetime64_dtype(values):
            out.loc[future, column] = values[future] - pd.Timedelta(days=400)
        else:
            out.loc[future, column] = "LEAKED " + values[future].astype(str)
    echoes = out.loc[~future].sample(min(5, int((~future).sum())), random_state=int(rng.integers(1 << 30)))
    echoes = echoes.assign(available_at=cutoff + pd.Timedelta(minutes=1))
    keep = ~future | (rng.random(len(frame)) < 0.5)
    return pd.concat([out.loc[keep], echoes]).sort_values("available_at", kind="stable").reset_index(drop=True)


def perturbed_after(data: MarketData, asof: pd.Timestamp, seed: int, cutoff: pd.Timestamp | None = None) -> MarketData:
    """`data` with everything after `asof` (bars) or `cutoff` (records; default: the view's cutoff) rewritten."""
    rng = np.random.default_rng(seed)
    cutoff = MarketView(data, asof).cutoff if cutoff is None else cutoff
    return MarketData(bars={t: _perturb_bars(f, asof, rng) for t, f in data.bars.items()},
                      records={c: _perturb_records(f, cutoff, rng) for c, f in data.records.items()},
                      origin=data.origin, calendar=data.calendar)


@st.composite
def calls(draw, name: str):
    asof = draw(st.sampled_from(list(DATES[5:-5])))
    fields = TOOLS[name].args_model.model_fields
    arguments = {field: draw(argument_strategy(name, field, asof)) for field in fields
                 if draw(st.booleans())}
    if "ticker" in fields and draw(st.integers(0, 9)) > 0:
        arguments["ticker"] = draw(st.sampled_from(["AAA", "BBB"]))
    return asof, arguments, draw(st.integers(0, 2**31 - 1))


def assert_tampering_changes_nothing(market: MarketData, asof, seed: int, name: str, arguments: dict,
                                     cutoff=None) -> tuple[ToolSet, ToolSet]:
    """Call tool `name` through a view at `asof` of `market` and of `market` with everything after the
    view (or after `cutoff`) rewritten by `perturbed_after`; assert both answer the same and nothing
    rewritten ("LEAKED") reached the honest record. Returns (honest, tampered) tool sets."""
    honest = ToolSet(MarketView(market, asof))
    tampered = ToolSet(MarketView(perturbed_after(market, asof, seed, cutoff=cutoff), asof))
    assert tampered.call(name, arguments) == honest.call(name, arguments)
    assert "LEAKED" not in honest.records[0].model_dump_json()
    return honest, tampered


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TOOLS))
def test_data_after_the_view_never_changes_a_tool(name):
    @settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(calls(name))
    def check(call):
        asof, arguments, seed = call
        honest, tampered = assert_tampering_changes_nothing(BASE, asof, seed, name, arguments)
        assert tampered.records[0].lookahead == honest.records[0].lookahead

    check()


def test_the_comparison_sees_a_change_at_the_view_date():
    asof = DATES[150]
    bars = {t: f.copy() for t, f in BASE.bars.items()}
    bars["AAA"].loc[asof, ["close", "high"]] *= 1.5
    news = BASE.records["news"].copy()
    visible = news["available_at"] <= MarketView(BASE, asof).cutoff
    news.loc[visible, "headline"] = "changed"
    changed = MarketData(bars=bars, records={**BASE.records, "news": news})
    for name, arguments in (("get_market_data", {"ticker": "AAA"}), ("get_stock_indicators", {"ticker": "AAA"}),
                            ("get_news_data", {"ticker": "AAA", "lookback_days": 30})):
        assert (ToolSet(MarketView(changed, asof)).call(name, arguments)
                != ToolSet(MarketView(BASE, asof)).call(name, arguments))


OPEN = pd.Timedelta(hours=9, minutes=30)
INTRADAY = MarketData(bars={t: f.set_axis(f.index + OPEN) for t, f in BASE.bars.items()}, records=BASE.records,
                      origin=BASE.origin, calendar=Calendar(pd.Timedelta(hours=1), "exchange"))
"""The same market on an intraday calendar, each bar stamped 09:30: its cutoff is 09:30 itself, so the
day's records published between 09:30 and 16:00 are future data to a decision on that bar."""


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TOOLS))
def test_on_intraday_bars_data_after_the_bar_never_changes_a_tool(name):
    @settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(calls(name))
    def check(call):
        day, arguments, seed = call
        asof = day + OPEN
        # records after the bar's own stamp are rewritten, whatever the view's cutoff: a view that still
        # used date + 16:00 on this bar would read the rewritten 09:30 .. 16:00 records
        assert_tampering_changes_nothing(INTRADAY, asof, seed, name, arguments, cutoff=asof)

    check()
