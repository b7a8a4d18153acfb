"""Honest rows for LLM frameworks: how often the model itself answered, what went wrong, what a
decision cost, how good the model's own answers were, and the reward components of the single
agent — read from the journal's traces and prices.parquet, recomputing no decision.

Per framework (rule baselines leave the LLM columns blank):

* valid % = decisions that execute the model's own answer (the trace is neither `fallback` nor
  `error`) / decisions; fallback % = the rest; both for frameworks that made LLM calls;
* parse failures by kind (`single_agent.failures`), most frequent first;
* tokens and tool calls per decision (all LLM calls and tool calls of the trace), and for a
  debate (traces with `analyst_tool_calls`) the tool calls per decision of each analyst;
* regime accuracy % over all decisions and over model-made decisions only (fallbacks and
  errors left out), against the label of `market.regime` (H = 7, eta = 0.8, theta = 1.5 %);
  BUY / SELL / HOLD shares over model-made decisions;
* for traces that carry the single agent's reward (`reward_config`, `reward`: R_format and
  R_tool, label-free, written at decision time), the means of R_result, R_format, R_tool and
  R = alpha R_result + R_format + R_tool (`single_agent.rewards`), R_result and R over labelled
  decisions only, R_result computed here from the executed answer (None for a fallback) and the
  regime under the reward config's own H, eta, theta;
* constrained: whether decoding was held to a grammar (run.json `framework_facts`);
* failed = decisions that failed (the framework raised, timed out, returned an invalid decision
  or reported an error: `harness.failures`), failures reused = journaled failures this run kept
  as they were (`retry_failed=false`), failures retried = journaled failures it decided again
  (run.json `failures`).

The section appears when LLM frameworks ran or any decision failed.

Warnings: a framework whose backbone's knowledge cutoff (run.json `framework_facts`) is later
than the start of the test window may have seen what followed (except on a synthetic market,
which no model has seen: the leak-free control); LLM frameworks that differ in constrained
decoding are not a like-for-like head-to-head.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

from core.errors import DataError
from harness.journal import Journal, JournalEntry
from harness.run_directory import Run
from market.regime import ACTIONS, regime_labels
from metrics import regime
from metrics.action_mix import action_mix, mix_columns
from metrics.tables import MISSING, format_columns, to_markdown, write_table
from single_agent.failures import failure_kind
from single_agent.rewards import RewardConfig, load_reward_config, result_reward, total_reward

JOURNAL = "journal.sqlite"
SYNTHETIC_TARGET = "market.synthetic"
"""Data targets under this module are synthetic markets (leak-free: no model has seen them)."""


def journal_entries(run: Run) -> list[JournalEntry]:
    """The journaled decisions of the run's decisions.parquet, found under run.json's journal keys."""
    keys = run.info.get("journal_keys", {})
    wanted = set(zip(run.decisions["framework"], run.decisions["ticker"], run.decisions["date"], run.decisions["seed"]))
    path = run.path / JOURNAL
    if not path.is_file():
        raise DataError(f"{path}: missing (expected in a run directory, see docs/run_directory.md)")
    with Journal(path, read_only=True) as journal:
        entries = [e for framework, key in keys.items() for e in journal.load(key).values()
                   if (framework, e.ticker, e.date, e.seed) in wanted]
    return entries


def _labels(run: Run, horizon: int = 7, eta: float = 0.8, theta: float = 0.015) -> dict[tuple[str, pd.Timestamp], str]:
    """(ticker, date) -> regime label from prices.parquet's closes; unlabelled days left out."""
    labels = {}
    for ticker, bars in run.prices.groupby("ticker"):
        series = regime_labels(bars.set_index("date")["close"], horizon, eta, theta).dropna()
        labels.update({(ticker, date): label for date, label in series.items()})
    return labels


def _reward(entry: JournalEntry, configs: dict[str, RewardConfig], label_sets: dict, run: Run) -> dict[str, float]:
    """R_result, R_format, R_tool and R of one decision whose trace carries the reward (NaN where unknown);
    `configs` and `label_sets` memoise reward configs by name and labels by (H, eta, theta)."""
    extra = entry.decision.trace.extra
    name = extra["reward_config"]
    if name not in configs:
        configs[name] = load_reward_config(name)
    config = configs[name]
    key = (config.horizon, config.eta, config.theta)
    if key not in label_sets:
        label_sets[key] = _labels(run, *key)
    label = label_sets[key].get((entry.ticker, entry.date))
    components = {"R_format": extra["reward"]["format"], "R_tool": extra["reward"]["tool"],
                  "R_result": np.nan, "R": np.nan}
    if label is not None:
        trace = entry.decision.trace
        answer = None if trace.fallback or trace.error is not None else entry.decision.action
        result = result_reward(answer, label, sum(c.lookahead for c in trace.tool_calls), config)
        components.update(R_result=result, R=total_reward(result, components["R_format"], components["R_tool"], config))
    return components


def decision_facts(run: Run) -> pd.DataFrame:
    """One row per decision: framework, llm, model_made, action, regime label, tokens, tool calls,
    failure kinds, and the reward components where the trace carries them."""
    labels = _labels(run)
    configs: dict[str, RewardConfig] = {}
    label_sets: dict = {}
    rows = []
    for entry in journal_entries(run):
        trace = entry.decision.trace
        row = {
            "framework": entry.framework,
            "llm": bool(trace.llm_calls),
            "model_made": not trace.fallback and trace.error is None,
            "action": entry.decision.action.value if entry.decision.action is not None else None,
            "regime": labels.get((entry.ticker, entry.date)),
            "tokens": sum(c.prompt_tokens + c.completion_tokens for c in trace.llm_calls),
            "tool_calls": len(trace.tool_calls),
            "failure_kinds": [failure_kind(line) for line in trace.parse_failures],
            "analyst_tool_calls": trace.extra.get("analyst_tool_calls"),
        }
        if "reward" in trace.extra and "reward_config" in trace.extra:
            row.update(_reward(entry, configs, label_sets, run))
        rows.append(row)
    return pd.DataFrame(rows)


def _accuracy(decisions: pd.DataFrame) -> float:
    """Regime accuracy of the labelled decisions among `decisions` (NaN for none)."""
    return regime.regime_accuracy(regime.confusion_matrix(decisions["action"].reset_index(drop=True),
                                                          decisions["regime"].reset_index(drop=True)))


def _kinds(lists: pd.Series) -> str:
    """Failure kinds with their counts, most frequent first ('' for none)."""
    counts = Counter(kind for kinds in lists for kind in kinds)
    return ", ".join(f"{kind} {n}" for kind, n in counts.most_common())


def _per_analyst(counts: pd.Series) -> str:
    """Mean tool calls per decision of each analyst ("market 1.00, news 2.00"), '' without debate traces."""
    counts = counts.dropna()
    if counts.empty:
        return ""
    means = pd.DataFrame(list(counts)).fillna(0).mean()
    return ", ".join(f"{name} {n:.2f}" for name, n in means.items())


def agent_numbers(run: Run) -> pd.DataFrame:
    """The numbers of the table, one row per framework of the run (see the module docstring)."""
    facts = decision_facts(run)
    described = run.info.get("framework_facts", {})
    failures = run.info.get("failures", {})
    rows = {}
    for framework in run.frameworks:
        mine = facts[facts["framework"] == framework]
        llm = bool(mine["llm"].any())
        made = mine[mine["model_made"]]
        row = {
            "decisions": len(mine),
            "valid": mine["model_made"].mean() if llm else np.nan,
            "fallback": 1 - mine["model_made"].mean() if llm else np.nan,
            "tokens": mine["tokens"].mean(), "tool_calls": mine["tool_calls"].mean(),
            "accuracy": _accuracy(mine), "accuracy_model": _accuracy(made) if llm else np.nan,
            **{share: (made["action"] == share).mean() if llm and len(made) else np.nan for share in ACTIONS},
            "failures": _kinds(mine["failure_kinds"]),
            "analyst_tool_calls": _per_analyst(mine["analyst_tool_calls"]),
            "constrained": described.get(framework, {}).get("constrained_decoding"),
            **{f"failures_{count}": failures.get(framework, {}).get(count, np.nan) for count in FAILURE_COUNTS},
        }
        for component in ("R_result", "R_format", "R_tool", "R"):
            row[component] = mine[component].mean() if component in mine else np.nan
        rows[framework] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("framework")


FAILURE_COUNTS = ("failed", "reused", "retried")
"""The per-framework counts of run.json `failures`."""

AGENT_FORMATS: dict[str, tuple[str, float, int]] = {
    "decisions": ("decisions", 1.0, 0), "valid": ("valid %", 100.0, 1), "fallback": ("fallback %", 100.0, 1),
    "tokens": ("tokens/dec", 1.0, 0), "tool_calls": ("tool calls/dec", 1.0, 2),
    "accuracy": ("regime acc %", 100.0, 1), "accuracy_model": ("regime acc % (model-made)", 100.0, 1),
    "BUY": ("BUY %", 100.0, 1), "SELL": ("SELL %", 100.0, 1), "HOLD": ("HOLD %", 100.0, 1),
    "R_result": ("R_result", 1.0, 3), "R_format": ("R_format", 1.0, 3), "R_tool": ("R_tool", 1.0, 3), "R": ("R", 1.0, 3),
    "failures_failed": ("failed", 1.0, 0), "failures_reused": ("failures reused", 1.0, 0),
    "failures_retried": ("failures retried", 1.0, 0),
}
"""agent_numbers column -> (table heading, scale, decimals); the text columns follow as they are."""

CAPTION = ("Decision quality and cost: valid % = decisions executing the model's own answer (no fallback, no error), "
           "fallback % = the rest; parse failures by kind; regime accuracy against the label (H = 7, eta = 0.8, "
           "theta = 1.5 %) over all decisions and over model-made ones; BUY/SELL/HOLD shares of model-made decisions; "
           "mean reward components of the single agent (R_result and R over labelled decisions; R_result of a "
           "fallback is the reward config's invalid_result); failed = decisions that failed (raised, timed out, invalid "
           "or an error the framework reported), failures reused = journaled failures kept as they were "
           "(retry_failed=false), failures retried = journaled failures decided again; "
           "constrained = decoding held to the protocol's grammar; top action = the most frequent executed action "
           "and its share of all decisions, action entropy in bits (0: a constant policy, 1.58: BUY, SELL and HOLD "
           "equally often); tool calls/dec by analyst = each debate analyst's "
           "tool calls per decision")


def agent_table(run: Run) -> pd.DataFrame:
    """The formatted table: numbers by `AGENT_FORMATS`, then parse failures and constrained decoding."""
    numbers = agent_numbers(run)
    table = format_columns(numbers, AGENT_FORMATS)
    table["parse failures"] = numbers["failures"].replace("", MISSING)
    table["tool calls/dec by analyst"] = numbers["analyst_tool_calls"].replace("", MISSING)
    table["constrained"] = numbers["constrained"].map(lambda v: MISSING if v is None else "yes" if v else "no")
    llm = numbers.index[numbers["valid"].notna()].tolist()
    mix = mix_columns(action_mix(run, llm)).reindex(numbers.index).fillna(MISSING)
    return pd.concat([table, mix], axis=1)


def _synthetic(run: Run) -> bool:
    """True when the run's data config builds a synthetic market."""
    config = run.path / "config.yaml"
    target = OmegaConf.select(OmegaConf.load(config), "data._target_") if config.is_file() else None
    return str(target or "").startswith(SYNTHETIC_TARGET)


def agent_warnings(run: Run) -> list[str]:
    """Knowledge-cutoff and constrained-decoding warnings (see the module docstring)."""
    described = run.info.get("framework_facts", {})
    start, end = run.info.get("test_window", [None, None])
    warnings = []
    if start is not None and not _synthetic(run):
        for framework, facts in described.items():
            cutoff = facts.get("knowledge_cutoff")
            if cutoff is not None and start < str(cutoff):
                warnings.append(f"{framework}: the test window {start} .. {end} precedes the knowledge cutoff of "
                                f"{facts.get('policy', 'its model')} ({cutoff}): it may have read what happened next. "
                                "A synthetic market (data=synthetic, e.g. +suite=synthetic) is the leak-free control; "
                                "+probe=memorisation measures the gap (docs/memorisation.md).")
    constrained = {f: facts["constrained_decoding"] for f, facts in described.items()
                   if facts.get("constrained_decoding") is not None}
    if len(set(constrained.values())) > 1:
        sides = ", ".join(f"{f} {'on' if on else 'off'}" for f, on in constrained.items())
        warnings.append(f"constrained decoding differs between LLM frameworks ({sides}): "
                        "not a like-for-like head-to-head.")
    return warnings


def has_agents(run: Run) -> bool:
    """True when some decision of the run made LLM calls or failed."""
    failed = run.decisions["error"].notna().any() if "error" in run.decisions.columns else False
    return bool((run.decisions["llm_calls"] > 0).any() or failed or run.info.get("failures_retried"))


def agent_section(run: Run, tables_dir: Path) -> str:
    """The summary's Markdown section (warnings, caption, table), the table also written to
    `tables_dir/agents.{md,tex}`; '' for a run without LLM decisions or failures."""
    if not has_agents(run):
        return ""
    if not (run.path / JOURNAL).is_file():
        return f"## agents\n\nNo {JOURNAL} in {run.path}: the agent rows read the decisions' traces there.\n"
    table = agent_table(run)
    write_table(table, "agents", tables_dir, CAPTION)
    warned = "".join(f"**Warning.** {line}\n\n" for line in agent_warnings(run))
    return f"## agents\n\n{warned}{CAPTION}.\n\n{to_markdown(table)}"

