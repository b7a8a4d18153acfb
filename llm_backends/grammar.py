"""Grammar-constrained decoding with llguidance: grammars in its Lark dialect, one matcher per row.

A request's `SamplingParams.grammar` is grammar text in llguidance's Lark dialect
(https://github.com/guidance-ai/llguidance/blob/main/docs/syntax.md): rules, string literals,
`/regex/` terminals, `%json {schema}` sub-grammars, `rule[max_tokens=N]` bounds. The engine
compiles each grammar once (memoised by its text), gives every row its own copy of the
matcher, masks the logits to the tokens the grammar allows before temperature and top-p, and
feeds each sampled token back. When the grammar is complete only end-of-sequence tokens are
allowed, so the row ends there. The grammar does not know `max_new_tokens`: bound free text
(`[max_tokens=N]`, character counts) or a cut-off completion will not parse.

Added tokens: llguidance treats every token the tokenizer added to its vocabulary (ChatML
markers, Qwen's `<tool_call>`, the tiny model's `<tool_call>`) as special: a string literal
cannot produce it, and a literal spelling its text is unsatisfiable on such a tokenizer. Write
fixed text with `lark_text(tokenizer, text)`, which turns each added token into a token
reference `<[id]>` and the rest into literals, so one protocol grammar works on SmolLM2
(where `<tool_call>` is plain text) and on the tiny model or Qwen2.5 (where it is one token).

The mask is unpacked here with plain torch: `llguidance.torch.apply_token_bitmask_inplace`
compiles its kernel with `torch.compile`, which took 27 s on its first call on CPU.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import llguidance
import llguidance.hf
import torch
from llguidance.torch import allocate_token_bitmask, fill_next_token_bitmask

from llm_backends.types import GrammarSupport

JSON_SEPARATORS = {"item_separator": ", ", "key_separator": ": ", "whitespace_flexible": False}
"""The one JSON layout `json_value` allows: Python's `json.dumps` default, as chat templates render tool calls."""


def grammar_support(allowed: torch.Tensor) -> GrammarSupport:
    """The support of one row's boolean mask [vocab]: its allowed ids, or its ruled-out ids when
    those are fewer."""
    count = int(allowed.sum())
    side = allowed if 2 * count <= allowed.numel() else ~allowed
    return GrammarSupport(allowed=side is allowed, ids=tuple(side.nonzero().flatten().tolist()))


def json_value(schema: dict[str, Any]) -> str:
    """A Lark expression for one JSON value valid under `schema`: `%json {...}`.

    The layout is fixed to `JSON_SEPARATORS` unless the schema's own `x-guidance` says otherwise.
    """
    options = {**JSON_SEPARATORS, **schema.get("x-guidance", {})}
    return "%json " + json.dumps({**schema, "x-guidance": options}, ensure_ascii=False)


def json_schema_grammar(schema: dict[str, Any]) -> str:
    """A whole grammar whose language is the JSON documents valid under `schema`."""
    return f"start: {json_value(schema)}"


def lark_text(tokenizer: Any, text: str) -> str:
    """A Lark expression producing exactly `text`: its added tokens as `<[id]>`, the rest as literals."""
    added = sorted(tokenizer.get_added_vocab().items(), key=lambda item: -len(item[0]))
    if not added:
        return json.dumps(text, ensure_ascii=False)
    pattern = re.compile("|".join(re.escape(token) for token, _ in added))
    ids = dict(added)
    parts, position = [], 0
    for match in pattern.finditer(text):
        if match.start() > position:
            parts.append(json.dumps(text[position:match.start()], ensure_ascii=False))
        parts.append(f"<[{ids[match.group()]}]>")
        position = match.end()
    if position < len(text):
        parts.append(json.dumps(text[position:], ensure_ascii=False))
    return " ".join(parts) if parts else '""'


class GrammarCompiler:
    """Compiles grammars for one tokenizer and masks logits row by row.

    `vocab_size` is the width of the model's logits (it may exceed the tokenizer's length);
    `eos_ids` are the tokens that end a row once its grammar is complete. The llguidance
    tokenizer is built on first use (about 2 s for a 49K vocabulary).
    """

    def __init__(self, tokenizer: Any, vocab_size: int, eos_ids: list[int]) -> None:
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size
        self.eos_ids = eos_ids
        self._ll_tokenizer: llguidance.LLTokenizer | None = None
        self._compiled: dict[str, llguidance.LLMatcher] = {}
        self._lock = threading.Lock()

    def _tokenizer(self) -> llguidance.LLTokenizer:
        if self._ll_tokenizer is None:
            self._ll_tokenizer = llguidance.hf.from_tokenizer(self.tokenizer, n_vocab=self.vocab_size, eos_token=self.eos_ids)
        return self._ll_tokenizer

    def matcher(self, grammar: str) -> llguidance.LLMatcher:
        """A fresh matcher for `grammar`; ValueError with llguidance's message when it does not compile."""
        with self._lock:
            compiled = self._compiled.get(grammar)
            if compiled is None:
                compiled = llguidance.LLMatcher(self._tokenizer(), llguidance.LLMatcher.grammar_from_lark(grammar), log_level=0)
                if compiled.is_error():
                    raise ValueError(f"grammar does not compile: {compiled.get_error().strip()}")
                self._compiled[grammar] = compiled
        return compiled.deep_copy()

    def allowed(self, matchers: list[llguidance.LLMatcher | None], device: torch.device) -> torch.Tensor | None:
        """The boolean mask [rows, vocab_size] of the tokens each row's matcher allows next (a row
        without a matcher allows everything); None when no row has one."""
        if all(m is None for m in matchers):
            return None
        bitmask = allocate_token_bitmask(len(matchers), self.vocab_size)
        for row, matcher in enumerate(matchers):
            if matcher is not None:
                fill_next_token_bitmask(matcher, bitmask, row)
        bits = (bitmask.unsqueeze(-1) >> torch.arange(32, dtype=torch.int32)) & 1
        return bits.flatten(1)[:, : self.vocab_size].bool().to(device)
