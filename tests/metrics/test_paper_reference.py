"""The paper's tables as data, the framework -> paper-row config, and our numbers beside the paper's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cli_helpers import ROOT
from omegaconf import OmegaConf

from core.errors import ConfigError
from metrics.paper_reference import (
    ABLATION,
    EFFICIENCY,
    MAIN,
    NOT_IN_PAPER,
    REFERENCE_DIR,
    ROLLING,
    PaperRow,
    beside_paper,
    paper_layout,
    paper_reference,
    paper_rows,
)

REFERENCE = paper_reference()
PAPER_TICKERS = ["GOOGL", "META", "MSFT", "NVDA", "TSLA"]
ROWS = paper_rows(OmegaConf.to_container(OmegaConf.load(ROOT / "configs" / "paper_rows" / "alphaquanter.yaml")))


def paper_value(table: str, row: PaperRow, ticker: str, metric: str) -> float:
    cells = REFERENCE[(REFERENCE["table"] == table) & (REFERENCE["row"] == row.row)
                      & (REFERENCE["backbone"] == row.backbone) & (REFERENCE["ticker"] == ticker)
                      & (REFERENCE["metric"] == metric)]
    assert len(cells) == 1, (table, row, ticker, metric)
    return float(cells["value"].iloc[0])


def our_metrics(frameworks: list[str], tickers: list[str], seeds=(0, 1, 2)) -> pd.DataFrame:
    """A metrics.csv-like table of made-up numbers, with AVG rows that must be ignored."""
    rng = np.random.default_rng(7)
    rows = [{"framework": f, "ticker": t, "seed": s, "ARR": rng.normal(0.1, 0.3), "SR": rng.normal(),
             "SR_ann": rng.normal(0.5, 1.0), "MDD": rng.uniform(0.05, 0.4)}
            for f in frameworks for t in [*tickers, "AVG"] for s in seeds]
    return pd.DataFrame(rows)


def test_reference_is_in_our_units_and_its_averages_are_the_means_of_the_stocks():
    raw = pd.read_csv(REFERENCE_DIR / "alphaquanter_tables.csv", keep_default_na=False)
    main = REFERENCE[REFERENCE["table"].isin([MAIN, ABLATION])]
    arr = main[main["metric"] == "ARR"].reset_index(drop=True)
    np.testing.assert_allclose(arr["value"] * 100, raw["ARR_pct"])
    keys = ["table", "row", "backbone", "metric"]
    stocks = main[main["ticker"] != "AVG"].groupby(keys)["value"].agg(["mean", "size"])
    averages = main[main["ticker"] == "AVG"].set_index(keys)["value"]
    assert (stocks["size"] == 5).all()
    gap = (stocks["mean"] - averages).abs()
    assert gap[~gap.index.get_level_values("metric").isin(["SR_ann"])].max() < 1e-4  # rounding of 2-decimal %
    assert gap.max() < 0.006  # SR has 2 decimals, its AVG is the mean of rounded values
    assert set(REFERENCE["table"]) == {MAIN, ABLATION, ROLLING, EFFICIENCY}
    rolling_aq = REFERENCE[(REFERENCE["table"] == ROLLING) & (REFERENCE["row"] == "AlphaQuanter")]
    assert set(rolling_aq["backbone"]) == {"Qwen2.5-3B", "Qwen2.5-7B"}
    assert (REFERENCE["category"] != "").all()


def test_every_configured_framework_names_a_row_of_the_paper():
    known = set(zip(REFERENCE["row"], REFERENCE["backbone"]))
    assert {(r.row, r.backbone) for r in ROWS.values()} <= known
    assert ROWS["MA-qwen2.5-7b"] == PaperRow("MA", "Qwen2.5-7B") and ROWS["finrl_a2c"].label == "FinRL-A2C"
    with pytest.raises(ConfigError, match="paper_rows.x"):
        paper_rows({"x": {"model": "MA"}})


def test_beside_the_paper_on_the_papers_stocks():
    ours = our_metrics(["buy_and_hold", "MA-qwen2.5-7b", "kdj_rsi"], PAPER_TICKERS)
    layout = paper_layout(beside_paper(ours, ROWS, MAIN))
    assert list(layout.columns) == [f"{t} ARR" for t in PAPER_TICKERS] + ["AVG ARR", "AVG SR_ann", "AVG MDD"]
    assert list(layout.index.names) == ["category", "model", "framework", "source"]

    seed_means = ours[ours["ticker"] != "AVG"].groupby(["framework", "ticker"])[["ARR", "SR_ann", "MDD"]].mean()
    for framework in ("buy_and_hold", "MA-qwen2.5-7b"):
        row = ROWS[framework]
        lines = layout.xs(row.label, level="model")
        assert list(lines.index.get_level_values("source")) == ["paper", "ours", "Δ"]
        paper, mine, delta = (lines.xs(s, level="source").iloc[0] for s in ("paper", "ours", "Δ"))
        for ticker in PAPER_TICKERS:
            assert paper[f"{ticker} ARR"] == pytest.approx(paper_value(MAIN, row, ticker, "ARR"))
            assert mine[f"{ticker} ARR"] == pytest.approx(seed_means.loc[(framework, ticker), "ARR"])
        for metric in ("ARR", "SR_ann", "MDD"):
            assert mine[f"AVG {metric}"] == pytest.approx(seed_means.loc[framework, metric].mean())
            assert paper[f"AVG {metric}"] == pytest.approx(paper_value(MAIN, row, "AVG", metric))
        np.testing.assert_allclose(delta.to_numpy(), (mine - paper).to_numpy())

    zmr = layout.xs(ROWS["zmr"].label, level="model")
    assert list(zmr.index.get_level_values("source")) == ["paper"] and zmr.notna().all(axis=None)
    alone = layout.xs(NOT_IN_PAPER, level="category")
    assert list(alone.index) == [("kdj_rsi", "kdj_rsi", "ours")]
    paper_rows_in_order = REFERENCE[REFERENCE["table"] == MAIN].drop_duplicates(["row", "backbone"])
    shown = layout.xs("paper", level="source").index.get_level_values("model")
    assert list(shown) == [PaperRow(r, b).label for r, b in zip(paper_rows_in_order["row"], paper_rows_in_order["backbone"])]


def test_on_other_stocks_no_difference_is_claimed_for_the_average():
    ours = our_metrics(["buy_and_hold"], ["ALFA", "BRVO"], seeds=(0,))
    layout = paper_layout(beside_paper(ours, ROWS, MAIN))
    assert list(layout.columns[:7]) == [f"{t} ARR" for t in [*PAPER_TICKERS, "ALFA", "BRVO"]]
    lines = layout.xs("B&H", level="model")
    assert list(lines.index.get_level_values("source")) == ["paper", "ours"]  # no cell to compare
    mine = lines.xs("ours", level="source").iloc[0]
    assert mine[["ALFA ARR", "BRVO ARR", "AVG ARR"]].notna().all() and np.isnan(mine["GOOGL ARR"])


def test_rolling_windows_beside_table_12():
    rolling = our_metrics(["AlphaQuanter-7b", "SA-qwen2.5-7b"], PAPER_TICKERS, seeds=(0,))
    layout = paper_layout(beside_paper(rolling, ROWS, ROLLING))
    aq = layout.xs("AlphaQuanter (Qwen2.5-7B)", level="model").xs("paper", level="source").iloc[0]
    assert aq["NVDA ARR"] == pytest.approx(paper_value(ROLLING, ROWS["AlphaQuanter-7b"], "NVDA", "ARR"))
    assert aq["AVG SR_ann"] == pytest.approx(paper_value(ROLLING, ROWS["AlphaQuanter-7b"], "AVG", "SR_ann"))
    assert list(layout.xs(NOT_IN_PAPER, level="category").index.get_level_values("framework")) == ["SA-qwen2.5-7b"]
    with pytest.raises(ConfigError, match="no paper table"):
        beside_paper(rolling, ROWS, "T99")


def test_efficiency_beside_table_6_claims_a_difference_only_for_the_papers_stocks():
    ours = pd.DataFrame([{"framework": f, "ticker": t, "tokens": tokens, "relative_cost": cost, "ARR": 0.1}
                         for f, tokens, cost in (("MA-qwen2.5-7b", 20000.0, 1.0), ("SA-qwen2.5-7b", 4000.0, 0.2))
                         for t in PAPER_TICKERS])
    on_the_papers = paper_layout(beside_paper(ours, ROWS, EFFICIENCY, average_comparable=True), per_ticker=(),
                                 average=("tokens", "relative_cost", "ARR"))
    delta = on_the_papers.xs("MA (Qwen2.5-7B)", level="model").xs("Δ", level="source").iloc[0]
    assert delta["AVG tokens"] == pytest.approx(20000.0 - paper_value(EFFICIENCY, ROWS["MA-qwen2.5-7b"], "AVG", "tokens"))
    assert delta["AVG relative_cost"] == pytest.approx(0.0)
    elsewhere = paper_layout(beside_paper(ours, ROWS, EFFICIENCY, average_comparable=False), per_ticker=(),
                             average=("tokens", "relative_cost", "ARR"))
    assert "Δ" not in set(elsewhere.index.get_level_values("source"))
