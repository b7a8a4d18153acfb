"""The verdict paragraph that opens a report, written from the numbers of the tests.

Five parts, each computed, none canned:

0. the LLM frameworks that answered one action on at least 90 % of their decisions, named with
   that action and its count (`metrics.action_mix`): their returns are a constant policy's;
1. what is significant at 5 % after Holm's correction — against the benchmark (mean daily
   return and Sharpe ratio), Hansen's SPA, and the head-to-head pairs — and what is not;
2. the power: the minimum detectable effect (MDE) of the mean-difference tests at this window
   length, MDE = (t_{nu, 1-alpha/2} + t_{nu, power}) x SE at alpha = 5 %, power = 80 %, as a
   median over the comparisons, in bp/day, over the window (x T) and as an annualised Sharpe
   difference (the Sharpe tests' MDE x sqrt(P));
3. which framework leads, by point estimate on two metrics (portfolio SR_ann, mean daily
   return) and by the Model Confidence Set — a best is named only when the MCS keeps one;
4. the caveats of the setup: one window (one market regime), the number of tickers and seeds,
   tests on equal-weight portfolios, indicative MDD intervals.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from harness.run_directory import Run
from market.calendar import bar_adjective
from metrics.action_mix import action_mix, degenerate_sentence
from metrics.head_to_head import llm_frameworks
from metrics.significance import Significance

LEVEL = 0.05


def _label(name: object) -> str:
    """A framework name, or ``a vs b`` for a pair."""
    return " vs ".join(name) if isinstance(name, tuple) else str(name)


def _names(rows: pd.DataFrame, test: str, bar: str) -> str:
    """``a (+1.23 bp/day, Holm p = 0.003), ...`` (``test`` "mean") or ``a (+0.123 SR_day, ...)`` ("sharpe")."""
    estimate, scale, unit, digits = ("dmean", 1e4, f"bp/{bar}", 2) if test == "mean" else ("dsharpe", 1.0, "SR_day", 3)
    return ", ".join(
        f"{_label(name)} ({row[estimate] * scale:+.{digits}f} {unit}, Holm p = {row[f'p_{test}_holm']:.3f})"
        for name, row in rows.iterrows()
    )


def _family_sentence(rows: pd.DataFrame, subject: str, family: str, bar: str) -> str:
    """What survives Holm in one family of comparisons, in mean daily return and in Sharpe ratio."""
    means = rows[rows["p_mean_holm"] < LEVEL]
    sharpes = rows[rows["p_sharpe_holm"] < LEVEL]
    returns = f"mean {bar_adjective(bar)} return"
    if len(means):
        text = f"{subject}, {_names(means, 'mean', bar)} differ{'s' if len(means) == 1 else ''} in {returns}"
    else:
        raw = rows["p_mean"].astype(float)
        detail = ""
        if raw.notna().any():
            closest = raw.idxmin()
            detail = (f" (closest: {_label(closest)}, p = {raw[closest]:.3f}, Holm-adjusted "
                      f"{rows.loc[closest, 'p_mean_holm']:.3f})")
        text = f"{subject}, no {returns} differs{detail}"
    text += f" at 5 % after Holm's correction over {len(rows)} {family}"
    if len(sharpes):
        text += f"; in Sharpe ratio {_names(sharpes, 'sharpe', bar)} do"
    else:
        text += "; nor does any Sharpe ratio"
    return text + "."


def significance_sentences(result: Significance, pairs: pd.DataFrame) -> list[str]:
    """Part 1: what is and is not significant after Holm, SPA, and the head-to-head pairs."""
    sentences = []
    comparisons = result.comparisons
    if not comparisons.empty and result.benchmark in comparisons.index.get_level_values("against"):
        rows = comparisons.xs(result.benchmark, level="against")
        sentences.append(_family_sentence(rows, f"Against {result.benchmark}", "frameworks", result.bar))
    if result.spa is not None:
        finds = "finds" if result.spa["consistent"] < LEVEL else "does not find"
        sentences.append(f"Hansen's SPA {finds} a framework that beats {result.benchmark} "
                         f"(consistent p = {result.spa['consistent']:.3f}).")
    if not pairs.empty:
        sentences.append(_family_sentence(pairs, "Head to head", "pairs", result.bar))
    return sentences


def power_sentence(result: Significance, pairs: pd.DataFrame, periods_per_year: float) -> str:
    """Part 2: the median MDE of the mean-difference tests, per day, over the window, and in SR_ann."""
    rows = pd.concat([frame for frame in (result.comparisons, pairs) if not frame.empty])
    mde = rows["mde_mean"].to_numpy(dtype=float)
    mde = mde[np.isfinite(mde)]
    if not len(mde):
        return "The tests have no standard error on this window, so their power is unknown."
    sharpe = rows["mde_sharpe"].to_numpy(dtype=float)
    sharpe = sharpe[np.isfinite(sharpe)]
    nu = int(rows["df"].max())
    median = float(np.median(mde))
    bar = result.bar
    text = (f"At T = {result.days} {bar}s a 5 % test reaches 80 % power only for mean {bar_adjective(bar)}-return "
            f"differences of about {median * 1e4:.1f} bp/{bar} or more ({mde.min() * 1e4:.1f} to {mde.max() * 1e4:.1f} over the "
            f"comparisons; MDE = (t_nu,0.975 + t_nu,0.80) x SE, nu = {nu}), about {median * result.days * 100:.1f} % "
            "over the window")
    if len(sharpe):
        annualised = np.median(sharpe) * math.sqrt(periods_per_year)
        text += f", or an annualised Sharpe-ratio difference of about {annualised:.2f}"
    return text + "."


def leader_sentence(result: Significance) -> str:
    """Part 3: the leaders by point estimate, and what the Model Confidence Set says about a best."""
    portfolio = result.portfolio
    if len(portfolio) < 2:
        return "There is one framework, so nothing to rank."
    by_sharpe = str(portfolio["SR_ann"].astype(float).idxmax())
    by_mean = str(portfolio["mean"].astype(float).idxmax())
    if by_sharpe == by_mean:
        text = (f"By point estimate {by_sharpe} leads on both portfolio SR_ann "
                f"({portfolio.loc[by_sharpe, 'SR_ann']:.2f}) and mean {bar_adjective(result.bar)} return")
    else:
        text = (f"By point estimate {by_sharpe} has the highest portfolio SR_ann "
                f"({portfolio.loc[by_sharpe, 'SR_ann']:.2f}) and {by_mean} the highest mean {bar_adjective(result.bar)} return")
    if "included" not in portfolio:
        return text + f"; no Model Confidence Set on {result.days} {result.bar}s, so no best is named."
    members = [str(name) for name in portfolio.index[portfolio["included"].astype(bool)]]
    if len(members) == 1:
        return text + f"; the 90 % Model Confidence Set keeps only {members[0]}, the best at that level."
    if len(members) == len(portfolio):
        return text + f"; the 90 % Model Confidence Set keeps all {len(members)}, so the data single out no best."
    return text + (f"; the 90 % Model Confidence Set keeps {len(members)} of {len(portfolio)} "
                   f"({', '.join(members)}), so no single best is named.")


def caveat_sentence(run: Run, result: Significance, pairs: pd.DataFrame) -> str:
    """Part 4: window and regime, tickers and seeds, what the tests are on, what is indicative."""
    start, end = run.equity["date"].min(), run.equity["date"].max()
    text = f"Caveats: one {result.days}-{result.bar} window ({start:%Y-%m-%d} .. {end:%Y-%m-%d}), one market regime"
    if result.benchmark in result.portfolio.index:
        returned = result.portfolio.loc[result.benchmark, "TR"] * 100
        text += f" (the {result.benchmark} portfolio returned {returned:+.1f} %)"
    seeds = run.equity["seed"].nunique()
    text += f"; {len(run.tickers)} ticker{'s' if len(run.tickers) != 1 else ''}"
    text += f" and {seeds} seeds" if seeds > 1 else ""
    text += ("; the tests compare equal-weight portfolios over tickers (and seeds), not the per-ticker means of "
             "the paper's layout; the MDD intervals are indicative (block resampling breaks drawdown paths)")
    if not pairs.empty:
        text += "; McNemar's test treats decisions as independent, though neighbouring regime labels overlap"
    return text + "."


def verdict(run: Run, result: Significance, pairs: pd.DataFrame) -> str:
    """The verdict paragraph of a run: degenerate policies, significance, power, leaders, caveats."""
    constant = degenerate_sentence(action_mix(run, llm_frameworks(run)))
    if result.days < 2:
        parts = [f"Too few {result.bar}s ({result.days}) for any test or interval: the numbers below are descriptive only.",
                 constant, caveat_sentence(run, result, pairs)]
    else:
        parts = [constant, *significance_sentences(result, pairs), power_sentence(result, pairs, run.periods_per_year),
                 leader_sentence(result), caveat_sentence(run, result, pairs)]
    return " ".join(part for part in parts if part)
