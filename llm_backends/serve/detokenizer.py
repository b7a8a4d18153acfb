"""Token ids to text as they are sampled, without decoding the whole completion at every step.

Each step decodes only the ids since the last emitted text plus the few before them (the
"prefix" window, as vLLM and transformers' TextStreamer do), and holds the text back while it
ends in an unfinished UTF-8 character (a byte-level token can carry half of one: it decodes to
U+FFFD until the next token completes it). Special tokens (end of turn) decode to nothing.
"""

from __future__ import annotations

from typing import Any

REPLACEMENT = "\ufffd"


class IncrementalDetokenizer:
    """Feed it the ids of one completion as they come (`push`); it returns the text they add."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self._prefix = 0
        """Start of the window decoded for context (its text was emitted already)."""
        self._read = 0
        """End of the ids whose text has been emitted."""

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def push(self, ids: list[int]) -> str:
        """The text that `ids` (the next sampled ids) complete; "" while a character is still unfinished."""
        self.ids.extend(ids)
        before = self._decode(self.ids[self._prefix:self._read])
        after = self._decode(self.ids[self._prefix:])
        if len(after) <= len(before) or after.endswith(REPLACEMENT):
            return ""
        self._prefix, self._read = self._read, len(self.ids)
        return after[len(before):]
