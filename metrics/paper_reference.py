"""The AlphaQuanter paper's numbers as data, and our results beside them.

`metrics/reference/` holds the paper's tables as transcribed (its README names the source):
Tables 10–11 (per stock; Table 5 is their AVG) and 13–14 (ablations) in
`alphaquanter_tables.csv`, Table 12 (rolling windows) in `alphaquanter_rolling.csv`, Table 6
(efficiency) in `alphaquanter_efficiency.csv`. `paper_reference` reads them into one long
table in our units:

    table, category, row, backbone, ticker, metric, value

- `table`: MAIN (T10-11), ABLATION (T13-14), ROLLING (T12) or EFFICIENCY (T6);
- `metric`: ARR and MDD as fractions (the paper's % / 100), SR_ann (the paper's SR is
  annualised: mean/std of daily returns × √252), and for T6 `tokens` per decision and
  `relative_cost` (the multi-agent pipeline = 1);
- `ticker`: a stock or AVG (the mean over the five stocks, as in the paper);
- Table 12's "AlphaQuanter-3B/7B" are row AlphaQuanter with backbone Qwen2.5-3B/7B, as in
  Tables 10–11; a row's category is the one Tables 10–11 give it.

Our framework names are tied to paper rows by config (`configs/paper_rows/`): framework ->
{row, backbone}. `beside_paper` lines our per-ticker metrics up with one paper table; `paper_layout`
turns that into the paper's layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import ConfigError
from metrics.episodes import AVERAGE_TICKER

REFERENCE_DIR = Path(__file__).resolve().parent / "reference"
MAIN, ABLATION, ROLLING, EFFICIENCY = "T10-11", "T13-14", "T12", "T6"
COLUMNS = ["table", "category", "row", "backbone", "ticker", "metric", "value"]
PERCENT_METRICS = {"ARR_pct": "ARR", "MDD_pct": "MDD"}
NOT_IN_PAPER = "not in the paper"
PAPER, OURS, DELTA = "paper", "ours", "Δ"
"""The `source` of a line in `beside_paper`: the paper's value, ours, ours − paper."""


@dataclass(frozen=True)
class PaperRow:
    """A row of the paper's tables: its model name and backbone ("" for rows without one)."""

    row: str
    backbone: str = ""

    @property
    def label(self) -> str:
        """How the paper names it: `row (backbone)`, or `row` alone."""
        return f"{self.row} ({self.backbone})" if self.backbone else self.row


def paper_rows(config: Mapping[str, Mapping[str, str]]) -> dict[str, PaperRow]:
    """framework -> PaperRow from the `paper_rows` config ({framework: {row, backbone}})."""
    rows = {}
    for framework, fields in config.items():
        unknown = set(fields) - {"row", "backbone"}
        if "row" not in fields or unknown:
            raise ConfigError(f"paper_rows.{framework}: expected {{row, backbone}}, got {sorted(fields)}")
        rows[str(framework)] = PaperRow(str(fields["row"]), str(fields.get("backbone") or ""))
    return rows


def _per_ticker_tables() -> pd.DataFrame:
    wide = pd.read_csv(REFERENCE_DIR / "alphaquanter_tables.csv", keep_default_na=False)
    long = wide.melt(id_vars=["table", "category", "row", "backbone", "ticker"], var_name="metric")
    long["metric"] = long["metric"].replace({**PERCENT_METRICS, "SR": "SR_ann"})
    return long


def _rolling_table() -> pd.DataFrame:
    wide = pd.read_csv(REFERENCE_DIR / "alphaquanter_rolling.csv", keep_default_na=False)
    sized = wide["row"].str.extract(r"^(AlphaQuanter)-(\d+B)$")
    wide["backbone"] = np.where(sized[0].notna(), "Qwen2.5-" + sized[1].fillna(""), "")
    wide["row"] = sized[0].fillna(wide["row"])
    long = wide.melt(id_vars=["table", "row", "backbone"], var_name="column")
    parts = long["column"].str.extract(r"^([A-Z]+)_(ARR_pct|SR|MDD_pct)$")
    long["ticker"] = parts[0]
    long["metric"] = parts[1].replace({**PERCENT_METRICS, "SR": "SR_ann"})
    return long.drop(columns="column")


def _efficiency_table() -> pd.DataFrame:
    wide = pd.read_csv(REFERENCE_DIR / "alphaquanter_efficiency.csv", keep_default_na=False)
    wide = wide.rename(columns={"setting": "row", "tokens_per_decision": "tokens"})
    long = wide.melt(id_vars=["table", "row", "backbone"], var_name="metric")
    long["ticker"] = AVERAGE_TICKER
    long["metric"] = long["metric"].replace({"AVG_ARR_pct": "ARR"})
    return long


def paper_reference() -> pd.DataFrame:
    """Every table of `metrics/reference/` in the long layout and units of the module docstring."""
    per_ticker = _per_ticker_tables()
    categories = per_ticker.drop_duplicates("row").set_index("row")["category"]
    others = pd.concat([_rolling_table(), _efficiency_table()], ignore_index=True)
    others["category"] = others["row"].map(categories).fillna("")
    frame = pd.concat([per_ticker, others], ignore_index=True)[COLUMNS]
    frame["value"] = frame["value"].astype(float)
    percent = frame["metric"].isin(PERCENT_METRICS.values())
    frame.loc[percent, "value"] /= 100.0
    return frame


def _our_long(ours: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """framework, ticker, metric, value: seeds averaged, AVG = mean over each framework's tickers."""
    per_ticker = ours[ours["ticker"] != AVERAGE_TICKER]
    means = per_ticker.groupby(["framework", "ticker"], sort=False)[metrics].mean()
    averages = means.groupby(level="framework", sort=False).mean()
    averages.index = pd.MultiIndex.from_product([averages.index, [AVERAGE_TICKER]], names=["framework", "ticker"])
    both = pd.concat([means, averages]).sort_index(level="framework", sort_remaining=False, kind="stable")
    return both.reset_index().melt(id_vars=["framework", "ticker"], var_name="metric")


def beside_paper(ours: pd.DataFrame, rows: Mapping[str, PaperRow], table: str = MAIN,
                 reference: pd.DataFrame | None = None, average_comparable: bool | None = None) -> pd.DataFrame:
    """Our metrics beside paper table `table`, long: category, model, framework, source, ticker, metric, value.

    `ours` has columns framework, ticker (AVG rows are ignored), optionally seed (averaged),
    and metric columns in our units (ARR, SR_ann, MDD, ...); the metrics compared are those
    both have. For each paper row, in the paper's order: its values (source "paper", framework
    ""), then for each framework that `rows` maps to it, ours ("ours") and ours − paper ("Δ").
    Δ is given where both have the cell; on AVG only when our tickers are the paper's, since
    an average over other stocks is no counterpart (`average_comparable` says so for a table
    with AVG cells only, such as Table 6; None: our tickers are the table's stocks). A paper row with no framework in `ours`
    appears as the paper's alone; a framework whose row is not in this table appears as ours
    alone, under the category "not in the paper".
    """
    reference = paper_reference() if reference is None else reference
    paper = reference[reference["table"] == table]
    if paper.empty:
        raise ConfigError(f"no paper table {table!r}; known: {', '.join(reference['table'].unique())}")
    metrics = [m for m in paper["metric"].unique() if m in ours.columns]
    if not metrics:
        raise ConfigError(f"our table has none of the metrics of paper table {table}: {', '.join(paper['metric'].unique())}")
    mine = _our_long(ours, metrics)
    paper = paper[paper["metric"].isin(metrics)]
    same_tickers = set(mine["ticker"]) == set(paper["ticker"]) if average_comparable is None else average_comparable
    lines = []
    placed = set()
    for (category, row, backbone), cells in paper.groupby(["category", "row", "backbone"], sort=False):
        label = PaperRow(row, backbone).label
        lines.append(cells.assign(model=label, framework="", source=PAPER))
        for framework in mine["framework"].unique():
            if rows.get(framework) != PaperRow(row, backbone):
                continue
            placed.add(framework)
            own = mine[mine["framework"] == framework].assign(category=category, model=label, source=OURS)
            joined = own.merge(cells[["ticker", "metric", "value"]], on=["ticker", "metric"], suffixes=("", "_paper"))
            if not same_tickers:
                joined = joined[joined["ticker"] != AVERAGE_TICKER]
            delta = joined.assign(value=joined["value"] - joined["value_paper"], source=DELTA)
            lines.extend([own, delta.drop(columns="value_paper")])
    alone = mine[~mine["framework"].isin(placed)]
    lines.append(alone.assign(category=NOT_IN_PAPER, model=alone["framework"], source=OURS))
    columns = ["category", "model", "framework", "source", "ticker", "metric", "value"]
    return pd.concat(lines, ignore_index=True)[columns]


def paper_layout(beside: pd.DataFrame, per_ticker: tuple[str, ...] = ("ARR",),
                 average: tuple[str, ...] = ("ARR", "SR_ann", "MDD")) -> pd.DataFrame:
    """`beside_paper` in the paper's layout: one line per (category, model, framework, source),
    columns "<ticker> <metric>" for `per_ticker` metrics of every stock, then "AVG <metric>"
    for `average`; our units (format with `metrics.tables`), NaN where a line has no value."""
    tickers = [t for t in dict.fromkeys(beside["ticker"]) if t != AVERAGE_TICKER]
    cells = [(t, m) for m in per_ticker for t in tickers] + [(AVERAGE_TICKER, m) for m in average]
    keys = ["category", "model", "framework", "source"]
    wide = beside.pivot_table(index=keys, columns=["ticker", "metric"], values="value", sort=False, dropna=False)
    wide = wide.reindex(columns=pd.MultiIndex.from_tuples(cells))
    wide.columns = [f"{ticker} {metric}" for ticker, metric in cells]
    order = beside[keys].drop_duplicates()
    return wide.reindex(pd.MultiIndex.from_frame(order))
