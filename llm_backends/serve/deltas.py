"""One choice's growing text as the deltas of OpenAI's stream: content pieces and whole tool calls.

Text is released as soon as nothing that follows can change it:
- a possible start of a stop string at the end is held back (it is cut, with what follows, if
  the stop string completes);
- with tools shown, a `<tool_call>` block (or a possible start of its tag) is held back until
  its `</tool_call>` arrives; a block that parses becomes one `tool_calls` delta (id, name and
  the whole JSON-string arguments), one that does not goes out as content together with its
  line in `tool_call_parse_failures`, as in the non-streamed answer. At the end, a block left
  open is read as the engine reads it (parsed when its JSON is complete);
- with tools shown, the content is the answer's text without the calls and stripped of
  surrounding whitespace, so whitespace is released only once more content follows it.

So the pieces add up to the non-streamed message. `finish(final_text)` takes the engine's
final text (cut at a stop string, decoded in one go) as the authority for what is left.
Tool-call ids are `call_id` of the text up to the end of the call's block.
"""

from __future__ import annotations

import logging
from typing import Any

from llm_backends.messages import wire_tool_call
from llm_backends.stopping import truncate_at_stop
from llm_backends.tool_calls import CLOSE, OPEN, ToolCall, call_id, read_block

log = logging.getLogger(__name__)

Delta = dict[str, Any]


def partial_suffix(text: str, marker: str) -> int:
    """The length of the longest end of `text` that is a proper beginning of `marker`."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if text.endswith(marker[:size]):
            return size
    return 0


class ChoiceDeltas:
    """Turns one choice's text, as it grows (`add`), into stream deltas; `finish` releases the rest."""

    def __init__(self, stop: tuple[str, ...], tools_shown: bool) -> None:
        self.stop = stop
        self.tools_shown = tools_shown
        self.text = ""
        """Everything decoded so far, stop strings included."""
        self.released = 0
        """Characters of the visible text already turned into deltas."""
        self.blocks = 0
        """Tool-call blocks read so far (their position among the blocks of the text)."""
        self.calls = 0
        """Tool calls sent so far (their index in `tool_calls`)."""
        self.started = False
        """Tools shown: content has had its first non-whitespace character."""
        self.spaces = ""
        """Tools shown: whitespace at the end of the content so far, held until more content follows."""

    def visible(self, final: bool) -> str:
        """The text cut at the first stop string; before the end, less any possible start of one."""
        if not self.stop:
            return self.text
        text, stopped = truncate_at_stop(self.text, self.stop)
        if final or stopped:
            return text
        return text[: len(text) - max(partial_suffix(text, s) for s in self.stop)]

    def add(self, piece: str) -> list[Delta]:
        """The deltas that `piece` (newly decoded text) releases."""
        self.text += piece
        return self._release(self.visible(final=False), final=False)

    def finish(self, final_text: str) -> list[Delta]:
        """The deltas left once the choice has ended with `final_text`."""
        released = self.visible(final=False)[: self.released]
        if final_text.startswith(released):
            self.text = final_text
        else:
            log.warning("streamed text %r is not a beginning of the final text %r", released[-80:], final_text[-80:])
        return self._release(self.visible(final=True), final=True)

    def _release(self, visible: str, final: bool) -> list[Delta]:
        if not self.tools_shown:
            piece, self.released = visible[self.released:], len(visible)
            return [{"content": piece}] if piece else []
        deltas: list[Delta] = []
        while True:
            start = visible.find(OPEN, self.released)
            if start < 0:
                end = len(visible) - (0 if final else partial_suffix(visible[self.released:], OPEN))
                deltas += self._content(visible[self.released:end])
                self.released = end
                return deltas
            deltas += self._content(visible[self.released:start])
            close = visible.find(CLOSE, start + len(OPEN))
            if close < 0 and not final:
                self.released = start
                return deltas
            end = len(visible) if close < 0 else close + len(CLOSE)
            deltas += self._block(visible, start, end, len(visible) if close < 0 else close)
            self.released = end

    def _block(self, visible: str, start: int, end: int, body_end: int) -> list[Delta]:
        """The delta of the block visible[start:end]: a tool call, or content reporting why it does not parse."""
        read = read_block(visible[start + len(OPEN):body_end], self.blocks, call_id(visible[:end], self.blocks))
        self.blocks += 1
        if isinstance(read, ToolCall):
            self.calls += 1
            return [{"tool_calls": [{"index": self.calls - 1, **wire_tool_call(read)}]}]
        deltas = self._content(visible[start:end])
        return deltas[:-1] + [{**deltas[-1], "tool_call_parse_failures": [read]}]

    def _content(self, piece: str) -> list[Delta]:
        """Content with the answer's surrounding whitespace held back (tools shown)."""
        if not self.started:
            piece = piece.lstrip()
            self.started = bool(piece)
        text = self.spaces + piece
        body = text.rstrip()
        self.spaces = text[len(body):]
        return [{"content": body}] if body else []
