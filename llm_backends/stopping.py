"""Stop strings matched in the generated text only (OpenAI and vLLM semantics).

A row stops at the step where its generated text first contains a stop string; the prompt is
never searched (a stop string such as "\\n\\n" must not fire because the prompt ends with
"\\n"). Each step decodes only the tail of the row's generated tokens: the last `window`
tokens, where `window` is the longest stop string's length in characters plus a margin (every
token decodes to at least one character or to a partial byte that the next token completes).
The returned text is cut before the earliest stop string.
"""

from __future__ import annotations

from typing import Any


def stop_window(stop: tuple[str, ...]) -> int:
    """Tokens to decode at each step: longest stop string in characters + 4."""
    return max(len(s) for s in stop) + 4


def hits_stop(tokenizer: Any, generated: list[int], stop: tuple[str, ...]) -> bool:
    """True when the decoded tail of `generated` contains one of `stop`."""
    tail = tokenizer.decode(generated[-stop_window(stop):], skip_special_tokens=True)
    return any(s in tail for s in stop)


def truncate_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """`text` cut before the earliest stop string, and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)
