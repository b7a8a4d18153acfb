"""Read one assistant turn of the protocol into a `Step`, whatever a small model wrote.

A valid turn is `<think>…</think>`, then one `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
or one `<answer>BUY|SELL|HOLD</answer>`. The parser never raises: every deviation is a
`ParseFailure` of a named kind (`single_agent.failures`), and it keeps what can be used.

- Think: the first `<think>…</think>` block. Unclosed, it ends at the first call or answer tag;
  a `</think>` without `<think>` closes a block that starts the turn. Calls and answers inside
  the block are ignored (`call_in_think`, `answer_in_think`).
- Calls: every `<tool_call>` block after the think block; a block left open ends at the next
  call or answer tag or at the end of the text. A block holding a JSON list of calls gives
  each of them. Calls of tools the protocol does not offer are kept (the tool set answers
  them with an error) and flagged.
- Answer: the single `<answer>` after the think block, compared after `strip().upper()`, so
  padded or lower-case actions count. Several answers count as none. An answer in a turn that
  also calls a tool is dropped (it was written without the data it asked for).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Literal

from pydantic import BaseModel, Field

from llm_backends.tool_calls import ToolCall, call_id, parse_tool_call
from market.decision import Action
from single_agent import failures as kinds
from single_agent.failures import ParseFailure
from single_agent.tags import ANSWER_CLOSE, ANSWER_OPEN, CALL_CLOSE, CALL_OPEN, THINK_CLOSE, THINK_OPEN


def _block(open_tag: str, close_tag: str) -> re.Pattern[str]:
    """`open_tag` (body) up to `close_tag`, or up to the next call or answer tag, or the end."""
    ends = "|".join(map(re.escape, (CALL_OPEN, ANSWER_OPEN)))
    return re.compile(f"{re.escape(open_tag)}(.*?)({re.escape(close_tag)}|(?={ends})|\\Z)", re.DOTALL)


_CALL_BLOCK = _block(CALL_OPEN, CALL_CLOSE)
_ANSWER_BLOCK = _block(ANSWER_OPEN, ANSWER_CLOSE)
_ACTION_TAG = re.compile("|".join(map(re.escape, (CALL_OPEN, ANSWER_OPEN))))


class Step(BaseModel):
    """One parsed assistant turn: its think text, the calls to run, the answer, the failures."""

    text: str
    think: str | None = None
    calls: list[ToolCall] = Field(default_factory=list)
    answer: Action | None = None
    failures: list[ParseFailure] = Field(default_factory=list)

    @property
    def outcome(self) -> Literal["call", "answer", "none"]:
        """"call" when there is a call to run, "answer" for a valid answer, else "none"."""
        return "call" if self.calls else "answer" if self.answer is not None else "none"

    def failure_lines(self) -> list[str]:
        """The failures as trace lines `"<kind>: <detail>"`."""
        return [failure.line() for failure in self.failures]


def _split_think(text: str, failures: list[ParseFailure]) -> tuple[str | None, str]:
    """(think text or None, the text outside the think block)."""
    start = text.find(THINK_OPEN)
    end = text.find(THINK_CLOSE, max(start, 0))
    if start >= 0 and end >= 0:
        return text[start + len(THINK_OPEN):end], text[:start] + text[end + len(THINK_CLOSE):]
    if start >= 0:
        failures.append(ParseFailure(kind=kinds.BROKEN_TAG, detail=f"{THINK_OPEN} is never closed"))
        body = text[start + len(THINK_OPEN):]
        action = _ACTION_TAG.search(body)
        cut = action.start() if action else len(body)
        return body[:cut], text[:start] + body[cut:]
    if end >= 0:
        failures.append(ParseFailure(kind=kinds.BROKEN_TAG, detail=f"{THINK_CLOSE} without {THINK_OPEN}"))
        return text[:end], text[end + len(THINK_CLOSE):]
    failures.append(ParseFailure(kind=kinds.MISSING_THINK, detail=f"no {THINK_OPEN} block"))
    return None, text


def _bodies(pattern: re.Pattern[str], close_tag: str, text: str, what: str,
            failures: list[ParseFailure]) -> list[str]:
    """The bodies of the `pattern` blocks in `text`; unclosed blocks and stray close tags are flagged."""
    bodies, closed = [], 0
    for index, match in enumerate(pattern.finditer(text)):
        bodies.append(match.group(1))
        if match.group(2) == close_tag:
            closed += 1
        else:
            failures.append(ParseFailure(kind=kinds.BROKEN_TAG, detail=f"{what} {index} is never closed"))
    strays = text.count(close_tag) - closed
    if strays > 0:
        failures.append(ParseFailure(kind=kinds.BROKEN_TAG, detail=f"{strays} {close_tag} without an opening tag"))
    return bodies


def _calls_in(body: str, block: int, text: str, first_index: int, failures: list[ParseFailure]) -> list[ToolCall]:
    """The calls in one tool-call block: one JSON object, or a JSON list of them."""
    try:
        payload = json.loads(body)
    except json.JSONDecodeError as error:
        failures.append(ParseFailure(kind=kinds.BAD_JSON,
                                     detail=f"block {block}: {error.msg} at char {error.pos}: {body.strip()[:80]!r}"))
        return []
    items = payload if isinstance(payload, list) else [payload]
    if not items:
        failures.append(ParseFailure(kind=kinds.BAD_CALL, detail=f"block {block}: an empty list of calls"))
    calls = []
    for item in items:
        try:
            calls.append(parse_tool_call(json.dumps(item), call_id(text, first_index + len(calls))))
        except ValueError as error:
            failures.append(ParseFailure(kind=kinds.BAD_CALL, detail=f"block {block}: {error}"))
    return calls


def _action(body: str, failures: list[ParseFailure]) -> Action | None:
    """BUY, SELL or HOLD from an answer body (case and surrounding whitespace ignored)."""
    word = body.strip().upper()
    if word in Action.__members__:
        return Action(word)
    failures.append(ParseFailure(kind=kinds.INVALID_ANSWER, detail=f"{body.strip()[:40]!r} is not BUY, SELL or HOLD"))
    return None


def parse_step(text: str, tools: Collection[str]) -> Step:
    """Parse one assistant turn; `tools` are the names the protocol offers."""
    failures: list[ParseFailure] = []
    think, outside = _split_think(text, failures)
    if think is not None and CALL_OPEN in think:
        failures.append(ParseFailure(kind=kinds.CALL_IN_THINK, detail=f"a tool call inside {THINK_OPEN} is ignored"))
    if think is not None and ANSWER_OPEN in think:
        failures.append(ParseFailure(kind=kinds.ANSWER_IN_THINK, detail=f"an answer inside {THINK_OPEN} is ignored"))
    calls: list[ToolCall] = []
    call_bodies = _bodies(_CALL_BLOCK, CALL_CLOSE, outside, "tool call", failures)
    for block, body in enumerate(call_bodies):
        calls.extend(_calls_in(body, block, text, len(calls), failures))
    for call in calls:
        if call.name not in tools:
            failures.append(ParseFailure(kind=kinds.UNKNOWN_TOOL, detail=f"{call.name!r} is not offered"))
    if len(calls) > 1:
        failures.append(ParseFailure(kind=kinds.MULTIPLE_CALLS, detail=f"{len(calls)} calls in one turn"))
    answer_bodies = _bodies(_ANSWER_BLOCK, ANSWER_CLOSE, outside, "answer", failures)
    answer = None
    if len(answer_bodies) > 1:
        failures.append(ParseFailure(kind=kinds.MULTIPLE_ANSWERS, detail=f"{len(answer_bodies)} answers in one turn"))
    elif answer_bodies:
        answer = _action(answer_bodies[0], failures)
    if answer is not None and calls:
        failures.append(ParseFailure(kind=kinds.ANSWER_AND_CALL, detail=f"answer {answer.value} dropped for the call"))
        answer = None
    if not call_bodies and not answer_bodies:
        failures.append(ParseFailure(kind=kinds.NO_ACTION, detail="neither a tool call nor an answer"))
    return Step(text=text, think=think, calls=calls, answer=answer, failures=failures)
