"""The memorisation gap of every framework: the real run against its anonymised replay.

A run with `+probe=memorisation` holds the replay in its `anonymised/` folder (a run directory
of its own: the same frameworks on the same days, deciding on anonymised data, simulated on the
real prices; docs/memorisation.md). Per framework, on its equal-weight daily portfolio returns
(the series of every test of the report):

* the mean daily return of the real run and of the replay, and the gap = real - anonymised
  with the report's calibrated paired test (:func:`metrics.paired.mean_difference_test`: EWC
  long-run variance, t with nu = floor(0.4 T^(2/3)) d.f.), its 95 % CI, p raw and Holm-adjusted
  over the frameworks, and its MDE; a framework that decides identically on both has a gap of
  exactly 0 and p = 1;
* decision agreement: the share of (ticker, date, seed) decisions with the same action;
* regime accuracy of each run and McNemar's test on regime-correct decisions
  (:func:`metrics.head_to_head.mcnemar_row`, real = A, anonymised = B);
* the cutoff split: a framework whose model states a knowledge cutoff (run.json
  `framework_facts`) has each decision marked before (dated in or before the cutoff's month:
  the model may have read what followed) or after it; when the window spans the cutoff, the
  same numbers are reported on the days of each side (a day's return on the side of its date).

The verdict line (:func:`memorisation_sentence`) names every framework whose gap survives
Holm at 5 %: its result may rest on memory.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from harness.run_directory import Run, load_run
from metrics.head_to_head import mcnemar_row
from metrics.paired import holm
from metrics.returns import daily_returns, portfolio_returns
from metrics.run_tables import labelled_decisions
from metrics.significance import paired_row
from metrics.significance_tables import BASIS_POINTS, difference_cells
from metrics.tables import MISSING, format_rate, format_value, to_markdown, write_table
from metrics.verdict import LEVEL

ALL, BEFORE, AFTER = "all", "before cutoff", "after cutoff"


def replay_of(run: Run) -> Run | None:
    """The anonymised replay of `run` when run.json says the probe ran (None otherwise)."""
    folder = run.info.get("memorisation_replay")
    return load_run(run.path / folder) if folder else None


def cutoff_day(cutoff: object) -> pd.Timestamp | None:
    """The last day a model's knowledge may reach: the end of a `YYYY-MM` month, or a `YYYY-MM-DD` day."""
    if cutoff is None or str(cutoff).strip() == "":
        return None
    return pd.Period(str(cutoff)).end_time.normalize()


def _paired_decisions(real: Run, replay: Run, framework: str) -> pd.DataFrame:
    """The framework's real and replayed decisions side by side (action_a real, action_b anonymised, regime_a)."""
    keys = ["ticker", "date", "seed"]
    left = labelled_decisions(real).query("framework == @framework")[[*keys, "action", "regime"]]
    right = labelled_decisions(replay).query("framework == @framework")[[*keys, "action", "regime"]]
    return left.merge(right, on=keys, suffixes=("_a", "_b"))


def _row(real: pd.Series, shown: pd.Series, pairs: pd.DataFrame) -> dict[str, float]:
    """The numbers of one table row from the two portfolio series and the paired decisions."""
    both = pd.concat({"real": real, "shown": shown}, axis=1)
    return {
        "real": float(both["real"].mean()), "anonymised": float(both["shown"].mean()),
        **paired_row(both["real"].to_numpy(), both["shown"].to_numpy()),
        "decisions": float(len(pairs)), "agree": float((pairs["action_a"] == pairs["action_b"]).sum()),
        **mcnemar_row(pairs),
    }


def memorisation_numbers(real: Run, replay: Run) -> pd.DataFrame:
    """One row per (framework, window): `all`, plus `before cutoff` and `after cutoff` when the window spans it."""
    real_portfolio = portfolio_returns(daily_returns(real))
    shown_portfolio = portfolio_returns(daily_returns(replay))
    facts = real.info.get("framework_facts", {})
    rows = {}
    for framework in real.frameworks:
        if framework not in shown_portfolio:
            continue
        pairs = _paired_decisions(real, replay, framework)
        a, b = real_portfolio[framework].dropna(), shown_portfolio[framework].dropna()
        cutoff = facts.get(framework, {}).get("knowledge_cutoff")
        last = cutoff_day(cutoff)
        before = pairs["date"] <= last if last is not None else pd.Series(False, index=pairs.index)
        row = _row(a, b, pairs)
        row.update(cutoff=str(cutoff) if last is not None else None,
                   decisions_before=float(before.sum()) if last is not None else math.nan,
                   decisions_after=float((~before).sum()) if last is not None else math.nan)
        rows[(framework, ALL)] = row
        if last is not None and before.any() and (~before).any():
            rows[(framework, BEFORE)] = _row(a[a.index <= last], b[b.index <= last], pairs[before])
            rows[(framework, AFTER)] = _row(a[a.index > last], b[b.index > last], pairs[~before])
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.names = ["framework", "window"]
    whole = frame.index.get_level_values("window") == ALL
    frame["p_mean_holm"] = np.nan
    frame.loc[whole, "p_mean_holm"] = holm(frame.loc[whole, "p_mean"].tolist())
    return frame


def memorisation_table(numbers: pd.DataFrame, min_count: int = 5) -> pd.DataFrame:
    """The formatted table of :func:`memorisation_numbers`."""
    bp = lambda v: format_value(v, BASIS_POINTS, 2)  # noqa: E731
    p = lambda v: format_value(v, digits=3)  # noqa: E731
    rows = list(numbers.itertuples())
    table = pd.DataFrame({
        "days": numbers["days"].map(lambda v: f"{v:.0f}"),
        "real bp/day": numbers["real"].map(bp), "anonymised bp/day": numbers["anonymised"].map(bp),
        "gap bp/day [95 % CI]": difference_cells(numbers),
        "p": numbers["p_mean"].map(p), "p Holm": numbers["p_mean_holm"].map(p),
        "MDE bp/day": numbers["mde_mean"].map(lambda v: format_value(v, BASIS_POINTS, 1)),
        "agreement %": [format_rate(r.agree, r.decisions, min_count) for r in rows],
        "regime acc real %": [format_rate(r.a_right, r.labelled, min_count) for r in rows],
        "regime acc anonymised %": [format_rate(r.b_right, r.labelled, min_count) for r in rows],
        "McNemar p": numbers["p_mcnemar"].map(p),
        "cutoff": numbers["cutoff"].map(lambda v: MISSING if v is None or v != v else str(v)),
        "decisions before / after cutoff": [
            MISSING if math.isnan(r.decisions_before) else f"{r.decisions_before:.0f} / {r.decisions_after:.0f}"
            for r in rows],
    }, index=numbers.index)
    return table


def _records(count: int) -> str:
    return f"{count} text record{'' if count == 1 else 's'}"


def _withheld(replay: Run) -> dict[str, int]:
    return replay.info.get("anonymisation", {}).get("withheld_records", {})


def caption(replay: Run, min_count: int = 5) -> str:
    """The table's caption: what each column is, and the records the replay went without."""
    withheld = _withheld(replay)
    left_out = (f"; {_records(sum(withheld.values()))} could not be cleaned and were left out of the replay "
                f"({', '.join(f'{c} {n}' for c, n in withheld.items())})" if withheld else
                "; every text record was cleaned")
    return ("Memorisation gap: each framework on the real data against its replay on anonymised data (tickers as codes, "
            "prices and share counts scaled by powers of two, dates moved by whole weeks, text cleaned), same days, "
            "simulated on the real prices; mean daily portfolio return of each, gap = real - anonymised [95 % CI] "
            "with the calibrated paired test (EWC, t(nu)), p raw and Holm-adjusted over the frameworks, MDE at 80 % "
            "power; agreement = same action on the same (ticker, date, seed); regime accuracy of each run and "
            "McNemar's test on regime-correct decisions; cutoff = the model's stated knowledge cutoff, with its "
            "decisions dated in or before the cutoff month / after it, and rows per side when the window spans it; "
            f"rates from fewer than {min_count} cases suppressed{left_out}")


def _p_text(value: float) -> str:
    return "p < 0.001" if value < 0.001 else f"p = {value:.3f}"


def memorisation_sentence(numbers: pd.DataFrame, replay: Run) -> str:
    """The verdict's memorisation line: the frameworks whose gap survives Holm at 5 %, or the largest gap."""
    rows = numbers.xs(ALL, level="window")
    identical = int((rows["agree"] == rows["decisions"]).sum())
    significant = rows[rows["p_mean_holm"] < LEVEL]
    if len(significant):
        text = "Memorisation probe: " + "; ".join(
            f"{name}: {row.dmean * BASIS_POINTS:+.1f} bp/day on real names vs anonymised, {_p_text(row.p_mean)} "
            f"(Holm {row.p_mean_holm:.3f}) — its result may rest on memory" for name, row in significant.iterrows())
    else:
        largest = rows["dmean"].abs().idxmax()
        text = (f"Memorisation probe: no framework's mean daily return differs between real and anonymised data at 5 % "
                f"after Holm's correction over {len(rows)} frameworks (largest gap: {largest}, "
                f"{rows.loc[largest, 'dmean'] * BASIS_POINTS:+.1f} bp/day, {_p_text(rows.loc[largest, 'p_mean'])})")
    text += f"; {identical} of {len(rows)} decide identically on both"
    withheld = sum(_withheld(replay).values())
    if withheld:
        text += f"; {_records(withheld)} could not be cleaned and were left out of the replay"
    return text + "."


def memorisation_report(run: Run, tables_dir: Path, min_count: int = 5) -> tuple[str, str]:
    """(verdict line, summary section) of a run with the probe, the table also written to
    `tables_dir/memorisation.{md,tex}`; ("", "") for a run without it."""
    replay = replay_of(run)
    if replay is None:
        return "", ""
    numbers = memorisation_numbers(run, replay)
    table = memorisation_table(numbers, min_count)
    text = caption(replay, min_count)
    write_table(table, "memorisation", tables_dir, text)
    return memorisation_sentence(numbers, replay), f"## memorisation\n\n{text}.\n\n{to_markdown(table)}"
