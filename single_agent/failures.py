"""The kinds of parse failure of the single agent's protocol, and how traces count them.

A failure is recorded in `Trace.parse_failures` as one line `"<kind>: <detail>"`, so the kinds
of a run can be counted from its journal (`failure_counts`). Turn-level kinds come from the
parser (`single_agent.parser`); `NO_ANSWER` is the episode's: it ended without a valid
answer and the protocol's fallback action was executed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

MISSING_THINK = "missing_think"
"""The turn has no `<think>` block at all."""
BROKEN_TAG = "broken_tag"
"""A tag opened and not closed, or closed and never opened."""
BAD_JSON = "bad_json"
"""A tool-call block whose body is not JSON."""
BAD_CALL = "bad_call"
"""A tool-call block whose JSON is not `{"name": <text>, "arguments": {...}}` (or a list of those)."""
UNKNOWN_TOOL = "unknown_tool"
"""A call of a tool the protocol does not offer (it is still answered, with an error)."""
MULTIPLE_CALLS = "multiple_calls"
"""More than one call in one turn (the protocol allows one per step)."""
CALL_IN_THINK = "call_in_think"
"""A tool-call block inside the `<think>` block (ignored)."""
ANSWER_IN_THINK = "answer_in_think"
"""An answer inside the `<think>` block (ignored)."""
ANSWER_AND_CALL = "answer_and_call"
"""An answer and a call in one turn: the answer is dropped, the call is kept."""
MULTIPLE_ANSWERS = "multiple_answers"
"""More than one answer outside the `<think>` block: none of them counts."""
INVALID_ANSWER = "invalid_answer"
"""An answer that is not BUY, SELL or HOLD (case and padding aside)."""
NO_ACTION = "no_action"
"""A turn with neither a tool-call nor an answer tag."""
NO_ANSWER = "no_answer"
"""The episode ended without a valid answer; the fallback action was executed."""

FAILURE_KINDS: tuple[str, ...] = (
    MISSING_THINK, BROKEN_TAG, BAD_JSON, BAD_CALL, UNKNOWN_TOOL, MULTIPLE_CALLS, CALL_IN_THINK,
    ANSWER_IN_THINK, ANSWER_AND_CALL, MULTIPLE_ANSWERS, INVALID_ANSWER, NO_ACTION, NO_ANSWER,
)


class ParseFailure(BaseModel):
    """One failure: its kind (one of `FAILURE_KINDS`) and a short detail."""

    model_config = ConfigDict(frozen=True)

    kind: str
    detail: str

    def line(self) -> str:
        """The trace line `"<kind>: <detail>"`."""
        return f"{self.kind}: {self.detail}"


def failure_kind(line: str) -> str:
    """The kind of a trace line `"<kind>: <detail>"` (the whole line when it has no kind prefix)."""
    return line.split(":", 1)[0].strip()


def failure_counts(lines: Iterable[str]) -> Counter[str]:
    """How often each kind occurs among trace lines (e.g. every `Trace.parse_failures` of a run)."""
    return Counter(failure_kind(line) for line in lines)
