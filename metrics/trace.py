"""Print one decision's trace from a run directory's journal.

    python -m metrics.trace RUN_DIR TICKER DATE [FRAMEWORK] [--seed N] [--max-chars N]

Shows, for every matching journaled decision (each framework and seed unless narrowed): the
action and whether it was the fallback, the error if any, the LLM calls with their tokens and
latency, the tool calls with their arguments and flags, the parse failures, the messages, and
the trace's extra fields (e.g. an episode's reward components), and in a run with a risk overlay
what was executed and which overlay parts fired (overlays.parquet). A rule baseline's trace has
none of these and says so. A decision that is not in the journal gives one line saying what
the run does hold.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from core.errors import USER_ERROR_EXIT, DataError, UserError, one_line
from harness.journal import Journal, JournalEntry
from harness.overlay import OVERLAY_PARTS
from harness.run_directory import load_overlays
from market.decision import Trace

JOURNAL = "journal.sqlite"


def _indented(text: str, max_chars: int, prefix: str = "    ") -> str:
    """`text` cut to `max_chars` (0: whole), every line indented by `prefix`."""
    if max_chars and len(text) > max_chars:
        text = f"{text[:max_chars]}\n[… {len(text) - max_chars} more characters]"
    return "\n".join(prefix + line for line in text.splitlines() or [""])


def _value(value: Any) -> str:
    """A value of `Trace.extra`: a mapping as `k=v` pairs, text as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in value.items())
    return json.dumps(value, default=str)


def _llm_lines(trace: Trace) -> list[str]:
    if not trace.llm_calls:
        return ["LLM calls: none"]
    lines = [f"LLM calls ({len(trace.llm_calls)}):"]
    for index, call in enumerate(trace.llm_calls, start=1):
        cached = ", cached" if call.cached else ""
        lines.append(f"  {index}. {call.role or 'llm'} {call.model}: {call.prompt_tokens} prompt + "
                     f"{call.completion_tokens} completion tokens, {call.latency_s:.2f} s{cached}")
    prompt = sum(c.prompt_tokens for c in trace.llm_calls)
    completion = sum(c.completion_tokens for c in trace.llm_calls)
    lines.append(f"  total: {prompt} prompt + {completion} completion tokens")
    return lines


def _tool_lines(trace: Trace) -> list[str]:
    if not trace.tool_calls:
        return ["Tool calls: none"]
    lines = [f"Tool calls ({len(trace.tool_calls)}):"]
    for index, call in enumerate(trace.tool_calls, start=1):
        flags = (" LOOK-AHEAD" if call.lookahead else "") + (f" error: {call.error}" if call.error else "")
        lines.append(f"  {index}. {call.name} {json.dumps(call.arguments)}: {call.result_chars} chars, "
                     f"{1000 * call.latency_s:.1f} ms{flags}")
    return lines


def _message_lines(trace: Trace, max_chars: int) -> list[str]:
    if not trace.messages:
        return ["Messages: none"]
    lines = [f"Messages ({len(trace.messages)}):"]
    for message in trace.messages:
        name = f" {message['name']}" if message.get("name") else ""
        lines.append(f"  [{message.get('role', '?')}{name}]")
        lines.append(_indented(str(message.get("content") or ""), max_chars))
    return lines


def format_entry(entry: JournalEntry, max_chars: int = 1500) -> str:
    """One journaled decision as readable text (message contents cut to `max_chars`; 0: whole)."""
    decision, trace = entry.decision, entry.decision.trace
    what = decision.action.value if decision.action is not None else f"target {decision.target}"
    lines = [f"== {entry.ticker} {entry.date:%Y-%m-%d} · {entry.framework} · seed {entry.seed} "
             f"(journal key {entry.key})",
             f"action: {what}   fallback: {'yes' if trace.fallback else 'no'}   wall: {entry.wall_s:.3f} s",
             f"error: {trace.error or 'none'}",
             *_llm_lines(trace), *_tool_lines(trace)]
    lines.append(f"Parse failures ({len(trace.parse_failures)}):" if trace.parse_failures else "Parse failures: none")
    lines.extend(f"  - {line}" for line in trace.parse_failures)
    lines.extend(_message_lines(trace, max_chars))
    lines.extend([f"{key}: {_value(value)}" for key, value in trace.extra.items()])
    return "\n".join(lines)


def overlay_line(overlays: pd.DataFrame, entry: JournalEntry) -> str | None:
    """What the risk overlay executed for `entry` and which parts fired; None when overlays has no row for it."""
    row = overlays.loc[(overlays["framework"] == entry.framework) & (overlays["ticker"] == entry.ticker)
                       & (overlays["date"] == entry.date) & (overlays["seed"] == entry.seed)]
    if row.empty:
        return None
    row = row.iloc[0]
    executed = row["executed_action"] if pd.notna(row["executed_action"]) else f"target {row['executed_target']:.4g}"
    fired = ", ".join(part for part in OVERLAY_PARTS if row[part]) or "none"
    what = "in place of the framework's decision" if row["changed"] else "as the framework decided"
    return f"overlay: executed {executed}, {what}; parts fired: {fired}; day's equity change {0.0 - row['day_loss']:+.2%}"


def find_entries(run_dir: Path, ticker: str, date: pd.Timestamp, framework: str | None = None,
                 seed: int | None = None) -> list[JournalEntry]:
    """The journaled decisions of `run_dir` on `ticker` at `date`, narrowed to a framework and seed if given."""
    path = run_dir / JOURNAL
    if not path.is_file():
        raise DataError(f"{path}: missing (expected in a run directory, see docs/run_directory.md)")
    with Journal(path, read_only=True) as journal:
        entries = journal.at(ticker, date)
    return [e for e in entries if (framework is None or e.framework == framework) and (seed is None or e.seed == seed)]


def _not_found(run_dir: Path, ticker: str, date: pd.Timestamp, framework: str | None, seed: int | None) -> str:
    """One line saying that no decision matches, and what the run holds instead."""
    wanted = " ".join(filter(None, [ticker, f"{date:%Y-%m-%d}", framework, None if seed is None else f"seed {seed}"]))
    decisions = run_dir / "decisions.parquet"
    if not decisions.is_file():
        return f"no decision for {wanted} in {run_dir / JOURNAL}"
    held = pd.read_parquet(decisions, columns=["date", "framework", "ticker"])
    mine = held.loc[held["ticker"] == ticker, "date"]
    dates = f"{ticker} dates {mine.min():%Y-%m-%d}..{mine.max():%Y-%m-%d}" if len(mine) else \
        f"no {ticker}; tickers {', '.join(sorted(held['ticker'].unique()))}"
    return (f"no decision for {wanted} in {run_dir / JOURNAL}; the run holds {dates}, "
            f"frameworks {', '.join(dict.fromkeys(held['framework']))}")


def decision_date(text: str) -> pd.Timestamp:
    """The command line's decision date, midnight of that day; argparse names a malformed one."""
    try:
        return pd.Timestamp(text).normalize()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring); exit code 1 when nothing matches or the run directory is unusable."""
    parser = argparse.ArgumentParser(prog="python -m metrics.trace", description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("ticker")
    parser.add_argument("date", type=decision_date, help="decision date, YYYY-MM-DD")
    parser.add_argument("framework", nargs="?", help="framework name as in the run (default: all)")
    parser.add_argument("--seed", type=int, default=None, help="only this seed (default: all)")
    parser.add_argument("--max-chars", type=int, default=1500, help="cut each message to this many characters (0: whole)")
    args = parser.parse_args(argv)
    try:
        date = args.date
        entries = find_entries(args.run_dir, args.ticker, date, args.framework, args.seed)
        overlays = load_overlays(args.run_dir)
    except UserError as error:
        print(f"error: {one_line(error)}", file=sys.stderr)
        return USER_ERROR_EXIT
    if not entries:
        print(_not_found(args.run_dir, args.ticker, date, args.framework, args.seed))
        return 1
    texts = []
    for entry in entries:
        line = overlay_line(overlays, entry) if overlays is not None else None
        texts.append(format_entry(entry, args.max_chars) + (f"\n{line}" if line else ""))
    print("\n\n".join(texts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
