"""What each role of a multi-role LLM framework costs, read from the journal's traces.

Every `LLMCallRecord` names the role that made it (a debate node: `market_analyst`, `trader`,
...). Per (framework, role), over the framework's journaled decisions D:

* calls/dec = calls of the role / D;
* prompt/dec, reused/dec, completion/dec = the role's prompt tokens, prompt tokens taken from a
  local engine's prefix KV store (not recomputed), completion tokens, each summed / D;
* share % = the role's prompt + completion tokens / the framework's;
* latency s/call = mean `latency_s` (the wall time of the engine batch the call rode in).

Only frameworks whose calls name two or more roles get rows (one role says nothing the agents
table does not).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.run_directory import Run
from metrics.agent_rows import JOURNAL, journal_entries
from metrics.tables import format_columns, to_markdown, write_table

ROLE_FORMATS: dict[str, tuple[str, float, int]] = {
    "calls": ("calls/dec", 1.0, 2), "prompt": ("prompt/dec", 1.0, 0), "reused": ("reused/dec", 1.0, 0),
    "completion": ("completion/dec", 1.0, 0), "share": ("share %", 100.0, 1), "latency": ("latency s/call", 1.0, 2),
}
CAPTION = ("LLM cost by role, per decision of the framework: calls, prompt tokens (reused = taken from the "
           "engine's prefix KV store), completion tokens, share of the framework's tokens, mean latency of the "
           "engine batch a call rode in")


def role_numbers(run: Run) -> pd.DataFrame:
    """One row per (framework, role) of multi-role frameworks, in order of first call (module docstring)."""
    calls, decisions = [], {}
    for entry in journal_entries(run):
        decisions[entry.framework] = decisions.get(entry.framework, 0) + 1
        calls += [{"framework": entry.framework, "role": c.role, "prompt": c.prompt_tokens,
                   "reused": c.reused_prompt_tokens, "completion": c.completion_tokens, "latency": c.latency_s}
                  for c in entry.decision.trace.llm_calls]
    table = pd.DataFrame(calls, columns=["framework", "role", "prompt", "reused", "completion", "latency"])
    table = table[table.groupby("framework")["role"].transform("nunique") > 1]
    grouped = table.groupby(["framework", "role"], sort=False)
    numbers = grouped[["prompt", "reused", "completion"]].sum()
    numbers.insert(0, "calls", grouped.size())
    per_decision = numbers.index.get_level_values("framework").map(decisions).to_numpy(dtype=float)
    numbers = numbers.div(per_decision, axis=0)
    tokens = numbers["prompt"] + numbers["completion"]
    numbers["share"] = tokens / tokens.groupby(level="framework").transform("sum")
    numbers["latency"] = grouped["latency"].mean()
    return numbers


def role_section(run: Run, tables_dir: Path) -> str:
    """The summary's Markdown section (caption, table), also written to `tables_dir/roles.{md,tex}`;
    '' when no framework's calls name two roles or the run has no journal."""
    if not (run.path / JOURNAL).is_file():
        return ""
    numbers = role_numbers(run)
    if numbers.empty:
        return ""
    table = format_columns(numbers, ROLE_FORMATS)
    write_table(table, "roles", tables_dir, CAPTION)
    return f"## roles\n\n{CAPTION}.\n\n{to_markdown(table)}"
