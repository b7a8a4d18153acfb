"""How often FinAgent's answers were valid, per framework and step, from a finished run's journal.

    python benchmarks/finagent_answers.py RUN_DIR

prints, for every framework whose traces hold FinAgent's per-step answer status
(`Trace.extra["answers"]`, docs/finagent.md), its decisions, each step's valid / invalid /
skipped answers, the valid-answer rate (valid over valid + invalid, skipped steps asked nothing),
the share of decisions that executed the fallback, the LLM calls, prompt and completion tokens per
decision, and the seconds per decision (the journal's wall time of its batches).
"""

from __future__ import annotations

import argparse
from collections import Counter

from finagent.outputs import STEPS
from harness.run_directory import load_run
from metrics.agent_rows import journal_entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    entries = journal_entries(load_run(parser.parse_args().run_dir))
    by_framework: dict[str, list] = {}
    for entry in entries:
        if "answers" in entry.decision.trace.extra:
            by_framework.setdefault(entry.framework, []).append(entry)
    for framework, rows in by_framework.items():
        status = {step: Counter(r.decision.trace.extra["answers"].get(step, "off") for r in rows) for step in STEPS}
        valid = sum(c["valid"] for c in status.values())
        invalid = sum(c["invalid"] for c in status.values())
        calls = [c for r in rows for c in r.decision.trace.llm_calls]
        print(f"{framework}: {len(rows)} decisions, valid answers {valid}/{valid + invalid} "
              f"({valid / max(valid + invalid, 1):.1%}), fallback {sum(r.decision.trace.fallback for r in rows) / len(rows):.0%}, "
              f"{len(calls) / len(rows):.1f} calls, {sum(c.prompt_tokens for c in calls) / len(rows):.0f} prompt and "
              f"{sum(c.completion_tokens for c in calls) / len(rows):.0f} completion tokens, "
              f"{sum(r.wall_s for r in rows) / len(rows):.1f} s per decision")
        for step, counts in status.items():
            print(f"  {step}: " + ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())))


if __name__ == "__main__":
    main()
