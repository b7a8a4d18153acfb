"""The AlphaQuanter paper's table layout, in the paper's conventions (its Tables 5 and 10-11).

Per framework and ticker: ARR % = ((V_T / V_0)^(P / T) - 1) x 100, SR = SR_ann = mean / std
(ddof=1) of daily returns x sqrt(P) — the paper's Sharpe ratio is annualised (its buy-and-hold
per-stock SRs match that scale, not the per-day ratio) — and MDD %; then AVG = the plain mean of
the per-ticker values. Point values with two decimals as in the paper, means over seeds, no CIs
(the main table has them). ARR annualises the window: on a half-year window its exponent is
about 2, so read it beside the period's total return in the main table.
"""

from __future__ import annotations

import pandas as pd

from harness.run_directory import Run
from metrics.episodes import AVERAGE_TICKER
from metrics.run_tables import seed_means
from metrics.tables import format_value

PAPER_COLUMNS: tuple[tuple[str, str, float], ...] = (
    ("ARR", "ARR %", 100.0), ("SR_ann", "SR", 1.0), ("MDD", "MDD %", 100.0),
)
"""metrics.csv column, the paper's heading, scale."""


def paper_table(run: Run) -> pd.DataFrame:
    """Rows = frameworks; for each ticker and then AVG: ARR %, SR (annualised), MDD %, two decimals."""
    means = seed_means(run)
    rows = {}
    for framework in run.frameworks:
        rows[framework] = {
            f"{ticker} {heading}": format_value(means.loc[(framework, ticker), column], scale, 2)
            for ticker in [*run.tickers, AVERAGE_TICKER]
            for column, heading, scale in PAPER_COLUMNS
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("framework")
