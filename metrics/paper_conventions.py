"""The seed systems' own metric conventions, recomputed from our equity and labelled (never the default).

Per episode, from its equity curve V_0 .. V_T (simple returns r_t = V_t/V_{t−1} − 1, n of them,
P the run's periods per year):

| convention | measure | formula |
|---|---|---|
| `earnmore` | SR | mean(r) / std(r) · √n (std ddof=1): the window's Sharpe scaled by √(its length), not √P |
| `earnmore` | ARR | mean(r) · P: the mean return annualised without compounding |
| `alphamix` | TR | Σ r_t: the returns summed, not compounded |
| `fineft` | capital base | C = max_t (m_t − (V_t − V_0)), m_t the initial margin at the close (futures `margin`): the least capital that, with the same P&L path, never falls below the initial margin (no margin call) |
| `fineft` | ASR | mean / std of the daily P&L over C (the last mark of each calendar day, ΔV_day / C) · √365 |
| `macrohft` | required money | M = max_t N_t, N_t the money the position ties up at the close: the futures notional `leverage`·V_t, else the value held V_t − cash_t |
| `macrohft` | return | (V_T − V_0) / M: the profit on the most money the position ever required |

A framework asks for conventions with `run_facts()` → `{"paper_conventions": [names]}` (run.json
`framework_facts`); the report then appends the `paper_conventions` table, every framework of
the run as a row (so a baseline can be read in the same convention) and the requested measures as
columns, means over the framework's tickers and seeds. A run in which no framework asks gets no
table. A measure a task cannot give (a capital base without margin) is "--".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from harness.run_directory import Run
from harness.schema import EPISODE_KEYS
from metrics.performance import simple_returns
from metrics.tables import format_value, to_markdown, write_table

FACT_KEY = "paper_conventions"
"""The key of a framework's run_facts that lists the conventions it asks the report for."""

CRYPTO_DAYS = 365.0


def earnmore_sharpe(returns: np.ndarray) -> float:
    """mean(r) / std(r, ddof=1) · √n; NaN for fewer than 2 returns or zero std."""
    if len(returns) < 2 or not np.std(returns, ddof=1) > 0:
        return math.nan
    return float(np.mean(returns) / np.std(returns, ddof=1) * math.sqrt(len(returns)))


def earnmore_arr(returns: np.ndarray, periods_per_year: float) -> float:
    """mean(r) · P (not compounded); NaN without returns."""
    return float(np.mean(returns) * periods_per_year) if len(returns) else math.nan


def alphamix_total_return(returns: np.ndarray) -> float:
    """Σ r_t (not compounded)."""
    return float(np.sum(returns))


def fineft_capital_base(equity: pd.DataFrame) -> float:
    """max_t (margin_t − (V_t − V_0)); NaN without a `margin` column or when no margin was ever needed."""
    if "margin" not in equity.columns:
        return math.nan
    pnl = equity["equity"].to_numpy(dtype=float) - float(equity["equity"].iloc[0])
    base = float(np.max(equity["margin"].to_numpy(dtype=float) - pnl))
    return base if base > 0 else math.nan


def fineft_asr(equity: pd.DataFrame) -> float:
    """mean / std (ddof=1) of the daily P&L over the capital base · √365; NaN where either is undefined."""
    base = fineft_capital_base(equity)
    if not math.isfinite(base):
        return math.nan
    daily = equity.groupby(pd.DatetimeIndex(equity["date"]).normalize())["equity"].last()
    first = float(equity["equity"].iloc[0])
    pnl = np.diff(np.concatenate([[first], daily.to_numpy(dtype=float)])) / base
    if len(pnl) < 2 or not np.std(pnl, ddof=1) > 0:
        return math.nan
    return float(np.mean(pnl) / np.std(pnl, ddof=1) * math.sqrt(CRYPTO_DAYS))


def macrohft_required_money(equity: pd.DataFrame) -> float:
    """max_t N_t (module table); NaN when nothing was ever held."""
    if "leverage" in equity.columns:
        notional = equity["leverage"].abs() * equity["equity"]
    else:
        notional = (equity["equity"] - equity["cash"]).abs()
    money = float(notional.max())
    return money if money > 0 else math.nan


def macrohft_return(equity: pd.DataFrame) -> float:
    """(V_T − V_0) / the required money."""
    money = macrohft_required_money(equity)
    values = equity["equity"].to_numpy(dtype=float)
    return float((values[-1] - values[0]) / money) if math.isfinite(money) else math.nan


Measure = Callable[[pd.DataFrame, np.ndarray, float], float]
"""(episode equity rows in date order, its simple returns, P) -> value."""

CONVENTIONS: dict[str, tuple[tuple[str, Measure, float, int], ...]] = {
    "earnmore": (
        ("EarnMore SR = mean/std x sqrt(n)", lambda e, r, p: earnmore_sharpe(r), 1.0, 2),
        ("EarnMore ARR % = mean x P", lambda e, r, p: earnmore_arr(r, p), 100.0, 2),
    ),
    "alphamix": (
        ("AlphaMix TR % = sum r", lambda e, r, p: alphamix_total_return(r), 100.0, 2),
    ),
    "fineft": (
        ("FineFT capital base", lambda e, r, p: fineft_capital_base(e), 1.0, 0),
        ("FineFT ASR (daily, sqrt 365, on capital base)", lambda e, r, p: fineft_asr(e), 1.0, 2),
    ),
    "macrohft": (
        ("MacroHFT required money", lambda e, r, p: macrohft_required_money(e), 1.0, 0),
        ("MacroHFT return % on required money", lambda e, r, p: macrohft_return(e), 100.0, 2),
    ),
}
"""convention -> (column heading, measure, display scale, decimals) per measure (module table)."""


def requested(run: Run) -> list[str]:
    """The conventions the run's frameworks ask for (run.json framework_facts), in CONVENTIONS order."""
    asked = {str(name) for facts in run.info.get("framework_facts", {}).values() for name in facts.get(FACT_KEY, [])}
    return [name for name in CONVENTIONS if name in asked]


def convention_values(run: Run, names: list[str]) -> pd.DataFrame:
    """Rows = frameworks (run order), columns = the headings of `names`' measures: means over episodes."""
    periods = run.periods_per_year
    measures = [measure for name in names for measure in CONVENTIONS[name]]
    rows: dict[str, list[list[float]]] = {}
    for key, episode in run.equity.groupby(list(EPISODE_KEYS), sort=False):
        returns = simple_returns(episode["equity"])
        rows.setdefault(key[0], []).append([fn(episode, returns, periods) for _, fn, _, _ in measures])
    headings = [heading for heading, _, _, _ in measures]
    table = pd.DataFrame({framework: pd.DataFrame(values, columns=headings).mean() for framework, values in rows.items()}).T
    return table.rename_axis("framework")


def paper_conventions_table(run: Run, names: list[str]) -> pd.DataFrame:
    """`convention_values` formatted with each measure's scale and decimals."""
    values = convention_values(run, names)
    formats = {heading: (scale, digits) for name in names for heading, _, scale, digits in CONVENTIONS[name]}
    return values.apply(lambda column: column.map(lambda v: format_value(v, *formats[column.name])))


def paper_conventions_section(run: Run, tables_dir: Path) -> str:
    """The summary's Markdown section, the table also written to `tables_dir/paper_conventions.{md,tex}`;
    '' when no framework of the run asks for a convention."""
    names = requested(run)
    if not names:
        return ""
    table = paper_conventions_table(run, names)
    caption = (f"The originals' own metric conventions ({', '.join(names)}), recomputed from this run's equity "
               "(metrics/paper_conventions.py gives each formula): labelled, not comparable with the main tables' "
               "compounded and sqrt(P)-annualised numbers; every framework in that convention, mean over tickers "
               "and seeds")
    write_table(table, "paper_conventions", tables_dir, caption)
    return f"## paper conventions\n\n{caption}.\n\n{to_markdown(table)}"
