"""Stop strings matched in the generated text only (OpenAI and vLLM semantics).

transformers' own `stop_strings` match the token stream including the prompt, so a stop
string such as "\\n\\n" fires at once when the prompt ends with "\\n". This criterion decodes
only the tail of each row's generated tokens: the last `window` tokens, where `window` is the
longest stop string's length in characters plus a margin (every token decodes to at least
one character or to a partial byte that the next token completes).
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import StoppingCriteria


class GeneratedStopStrings(StoppingCriteria):
    """True for rows whose generated text (after `prompt_length` tokens) contains a stop string."""

    def __init__(self, tokenizer: Any, stop: tuple[str, ...], prompt_length: int) -> None:
        self.tokenizer = tokenizer
        self.stop = stop
        self.prompt_length = prompt_length
        self.window = max(len(s) for s in stop) + 4

    def __call__(self, input_ids: torch.LongTensor, scores: Any = None, **kwargs: Any) -> torch.BoolTensor:
        generated = input_ids[:, self.prompt_length:]
        tails = self.tokenizer.batch_decode(generated[:, -self.window:].tolist(), skip_special_tokens=True)
        done = [any(s in tail for s in self.stop) for tail in tails]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)
