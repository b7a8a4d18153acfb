"""Head-to-head comparisons of chosen pairs of frameworks (A vs B), not only against the benchmark.

Default pairs: every LLM framework against every other, where an LLM framework is one whose
decisions made at least one LLM call (``decisions.parquet`` ``llm_calls``). For each pair:

* the paired tests of :func:`metrics.significance.paired_row` on the two equal-weight daily
  portfolio returns (the mean difference A - B with its 95 % CI and MDE, the Sharpe-ratio
  difference), Holm over the pairs;
* decision agreement: the share of paired decisions where A and B chose the same action;
* McNemar's test on regime accuracy (``statsmodels.stats.contingency_tables.mcnemar``): over
  the decisions both made on days with a regime label, the 2 x 2 table of (A right, B right);
  exact binomial when fewer than 25 decisions are discordant, chi-square with continuity
  correction otherwise. It treats decisions as independent; the 7-day regime labels of
  neighbouring days overlap, so its p-value is optimistic.

A pair is marked `constant` when either side answered one action on at least 90 % of its
decisions (`metrics.action_mix`): its returns then compare a constant policy, not a reading.

Decisions are paired on (ticker, date, seed) over the seeds both ran — a deterministic
framework runs only the first seed, so against it a stochastic framework's first seed counts —
and on (ticker, date) between the first seeds of each when they ran no seed in common. Each
decision is used once, so McNemar's counts are not inflated by repeating one framework's
decisions against several seeds of the other.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar

from harness.run_directory import Run
from market.regime import ACTION_OF_REGIME
from metrics.action_mix import action_mix, constant_side
from metrics.returns import portfolio_returns
from metrics.run_tables import labelled_decisions
from metrics.significance import paired_row, with_holm
from metrics.significance_tables import comparison_columns
from metrics.tables import format_rate, format_value

EXACT_BELOW = 25
"""Discordant pairs below which McNemar's test is the exact binomial one."""


def llm_frameworks(run: Run) -> list[str]:
    """Frameworks of ``run`` whose decisions made at least one LLM call, in run order."""
    calls = run.decisions.groupby("framework")["llm_calls"].sum()
    return [framework for framework in run.frameworks if calls.get(framework, 0) > 0]


def default_pairs(run: Run) -> list[tuple[str, str]]:
    """Every LLM framework against every other (in run order)."""
    return list(combinations(llm_frameworks(run), 2))


def paired_decisions(decisions: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """A's and B's decisions side by side (columns ``action_a``, ``action_b`` and whatever else ``decisions`` has)."""
    left = decisions[decisions["framework"] == a]
    right = decisions[decisions["framework"] == b]
    common = set(left["seed"]) & set(right["seed"])
    if common:
        return left[left["seed"].isin(common)].merge(right, on=["ticker", "date", "seed"], suffixes=("_a", "_b"))
    first_left = left[left["seed"] == left["seed"].min()]
    first_right = right[right["seed"] == right["seed"].min()]
    return first_left.merge(first_right, on=["ticker", "date"], suffixes=("_a", "_b"))


def mcnemar_row(pairs: pd.DataFrame) -> dict[str, float]:
    """Counts of the (A right, B right) table over labelled pairs and McNemar's p-value (1 when none is discordant)."""
    labelled = pairs.dropna(subset=["regime_a"])
    right = labelled["regime_a"].map(ACTION_OF_REGIME)
    a_right = (labelled["action_a"] == right).to_numpy()
    b_right = (labelled["action_b"] == right).to_numpy()
    table = np.array([[np.sum(a_right & b_right), np.sum(a_right & ~b_right)],
                      [np.sum(~a_right & b_right), np.sum(~a_right & ~b_right)]])
    discordant = int(table[0, 1] + table[1, 0])
    if discordant == 0:
        pvalue = 1.0
    else:
        pvalue = float(mcnemar(table, exact=discordant < EXACT_BELOW, correction=True).pvalue)
    return {"labelled": float(len(labelled)), "a_only": float(table[0, 1]), "b_only": float(table[1, 0]),
            "a_right": float(a_right.sum()), "b_right": float(b_right.sum()), "p_mcnemar": pvalue}


def head_to_head(run: Run, returns: pd.DataFrame, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """One row per pair (index a, b): paired tests (Holm over pairs), agreement counts and McNemar's test.

    Pairs naming a framework that is not in the run are refused with a ``ValueError``.
    """
    unknown = sorted({name for pair in pairs for name in pair} - set(run.frameworks))
    if unknown:
        raise ValueError(f"head-to-head pairs name frameworks not in the run: {', '.join(unknown)}")
    if not pairs:
        return pd.DataFrame()
    portfolio = portfolio_returns(returns)
    decisions = labelled_decisions(run)
    rows = {}
    for a, b in pairs:
        matched = paired_decisions(decisions, a, b)
        rows[(a, b)] = {
            **paired_row(portfolio[a].to_numpy(), portfolio[b].to_numpy()),
            "decisions": float(len(matched)), "agree": float((matched["action_a"] == matched["action_b"]).sum()),
            **mcnemar_row(matched),
        }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.names = ["A", "B"]
    frame = with_holm(frame)
    mix = action_mix(run, sorted({name for pair in pairs for name in pair}))
    frame["constant"] = [constant_side(mix, a, b) for a, b in frame.index]
    return frame


def head_to_head_table(rows: pd.DataFrame, min_count: int = 5, bar: str = "day") -> pd.DataFrame:
    """The formatted head-to-head table: paired tests, agreement and accuracies with their counts, McNemar."""
    if rows.empty:
        return pd.DataFrame()
    table = comparison_columns(rows, bar)
    table["agreement %"] = [format_rate(r.agree, r.decisions, min_count) for r in rows.itertuples()]
    table["accuracy A %"] = [format_rate(r.a_right, r.labelled, min_count) for r in rows.itertuples()]
    table["accuracy B %"] = [format_rate(r.b_right, r.labelled, min_count) for r in rows.itertuples()]
    table["A only / B only right"] = [f"{r.a_only:.0f} / {r.b_only:.0f}" for r in rows.itertuples()]
    table["McNemar p"] = rows["p_mcnemar"].map(lambda v: format_value(v, digits=3))
    table["constant policy"] = rows["constant"].replace("", "-") if "constant" in rows else "-"
    return table
