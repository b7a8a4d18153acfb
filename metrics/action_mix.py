"""How varied an LLM framework's actions are: a policy that answers one action every day is a
constant policy, and its returns say nothing about its reading of the data.

Per LLM framework (one that made LLM calls: `metrics.head_to_head.llm_frameworks`), over all
its decisions with an action (fallbacks included: they are what was executed):

* top action and its count n_top of the N decisions, share = n_top / N;
* entropy of the action shares, H = -sum_a p_a log2 p_a in bits (0 for a constant policy,
  log2 3 = 1.585 for BUY, SELL and HOLD equally often).

A framework is degenerate when share >= `DEGENERATE_SHARE` (90 %): the verdict names it in words
and the head-to-head tables mark every pair with a degenerate side.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.run_directory import Run
from metrics.tables import format_value

DEGENERATE_SHARE = 0.9
"""Share of the most frequent action at and above which a policy counts as constant."""


def action_entropy(actions: pd.Series) -> float:
    """Entropy in bits of the empirical distribution of `actions` (NaN for none)."""
    if actions.empty:
        return float("nan")
    p = actions.value_counts(normalize=True).to_numpy(dtype=float)
    return float(-(p * np.log2(p)).sum() + 0.0)


def action_mix(run: Run, frameworks: list[str]) -> pd.DataFrame:
    """One row per framework of `frameworks` with decisions: decisions, top_action, top_count, top_share, entropy."""
    decided = run.decisions.dropna(subset=["action"])
    rows = {}
    for framework in frameworks:
        actions = decided.loc[decided["framework"] == framework, "action"].astype(str)
        if actions.empty:
            continue
        counts = actions.value_counts()
        rows[framework] = {"decisions": len(actions), "top_action": str(counts.index[0]), "top_count": int(counts.iloc[0]),
                           "top_share": counts.iloc[0] / len(actions), "entropy": action_entropy(actions)}
    columns = ["decisions", "top_action", "top_count", "top_share", "entropy"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("framework")


def degenerate(mix: pd.DataFrame) -> pd.DataFrame:
    """The rows of `mix` whose top share is at least `DEGENERATE_SHARE`."""
    return mix[mix["top_share"] >= DEGENERATE_SHARE]


def degenerate_sentence(mix: pd.DataFrame) -> str:
    """"SA answered SELL on 12 of 12 decisions: its returns are a constant policy's." per degenerate row; '' for none."""
    rows = degenerate(mix)
    if rows.empty:
        return ""
    said = [f"{name} answered {row.top_action} on {row.top_count} of {row.decisions} decisions"
            for name, row in rows.iterrows()]
    whose = "its returns are a constant policy's" if len(said) == 1 else "their returns are constant policies'"
    return f"{'; '.join(said)}: {whose}, not evidence of reading the data."


def constant_side(mix: pd.DataFrame, a: str, b: str) -> str:
    """Which side of pair (a, b) is degenerate: "A: SELL 12/12", "B: ...", both joined, or '' for neither."""
    marks = []
    for side, name in (("A", a), ("B", b)):
        if name in mix.index and mix.loc[name, "top_share"] >= DEGENERATE_SHARE:
            row = mix.loc[name]
            marks.append(f"{side}: {row['top_action']} {row['top_count']}/{row['decisions']}")
    return "; ".join(marks)


def mix_columns(mix: pd.DataFrame) -> pd.DataFrame:
    """The formatted columns: "top action" ("SELL 100.0 %") and "action entropy bits"."""
    return pd.DataFrame({
        "top action": [f"{r.top_action} {format_value(r.top_share, 100.0, 1)} %" for r in mix.itertuples()],
        "action entropy bits": mix["entropy"].map(lambda v: format_value(v, digits=2)).to_numpy(),
    }, index=mix.index, dtype=object)
