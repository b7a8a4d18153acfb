"""Token requests decoded over a causal LM's forward pass: prefill with reused prefixes, then
step-by-step decoding with per-row sampling, grammars, stop strings and cancellation.

One batch at a time (see `batching` for how rows are grouped):

    columns:  | cached prefixes (max c) | prompt tokens to compute (max n) | generated tokens |
    row i:    | pad .. c_i cached       | pad .. n_i new                   | t0 t1 t2 ...     |

A row's cached keys and values come from the prefix store (`kv_store`) and are copied into the
batch's cache; the rest of the prompt is prefilled in column chunks of at most
`prefill_chunk_tokens` tokens of the batch per forward pass (which bounds attention memory);
then each step feeds every running row its last sampled token. The 2D attention mask marks
the real tokens, so the holes between a row's cached prefix and its new tokens are masked out;
position ids are explicit, so every token keeps the position it has in its own sequence and
reused keys and values equal those of a cold prefill to float tolerance. Causality follows
the columns, which keep each row's order.

When a row finishes, the keys and values of its prompt and of the completion tokens fed so far
go to the prefix store, so a continuing episode finds its previous turn there. Finished rows
leave the batch (the cache is compacted) once they are at least half of it. Prompts that two
or more requests of one call share, and that the store lacks, are prefilled once first.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import DynamicCache, PreTrainedModel

from llm_backends.batching import RowShape, plan_batches
from llm_backends.grammar import GrammarCompiler, grammar_support
from llm_backends.kv_buffer import buffered_cache
from llm_backends.kv_store import PrefixKVStore, block_digests
from llm_backends.sampling import choose_tokens, row_generator
from llm_backends.stopping import hits_stop, truncate_at_stop
from llm_backends.types import GrammarSupport, SamplingParams, TokenRequest, TokenResult

log = logging.getLogger(__name__)

PREFILL_ONLY = SamplingParams(max_new_tokens=1)
"""Parameters of the internal rows that only prefill a shared prefix (they sample nothing)."""


@dataclass
class DecodeTotals:
    """Where a decoder's time went: prefill (keys and values of prompt tokens) against decoding."""

    prefill_s: float = 0.0
    prefill_tokens: int = 0
    """Prompt tokens computed (reused and padding tokens excluded)."""
    reused_tokens: int = 0
    """Prompt tokens whose keys and values came from the prefix store."""
    decode_s: float = 0.0
    decode_steps: int = 0
    """Forward passes after the prefill (one per generated token of the longest row of a batch)."""


@dataclass
class Row:
    """The decoding state of one request."""

    request: TokenRequest
    generator: torch.Generator | None = None
    matcher: Any = None
    prefill_only: bool = False
    prefix: list[torch.Tensor] = field(default_factory=list)
    """Prefix-store blocks covering the first `cached` prompt tokens (dropped once copied)."""
    cached: int = 0
    completion: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    forced: list[bool] = field(default_factory=list)
    """Per completion token (with `return_logprobs`): True where the grammar allowed that token only."""
    grammar: list[GrammarSupport | None] = field(default_factory=list)
    """Per completion token (with `return_logprobs`): the grammar's support where it allowed several."""
    finish: str | None = None
    stored: bool = False
    """True once the row's keys and values went to the prefix store."""
    fed: int = 0
    """Completion tokens whose keys and values are in the batch cache."""
    slot: int = 0
    """This row's index in the batch cache."""
    columns: torch.Tensor | None = None
    """The batch-cache column of each prompt token."""

    @property
    def prompt(self) -> list[int]:
        return self.request.prompt_ids

    @property
    def params(self) -> SamplingParams:
        return self.request.params

    @property
    def shape(self) -> RowShape:
        return RowShape(self.cached, len(self.prompt) - self.cached, 0 if self.prefill_only else self.params.max_new_tokens)


class Decoder:
    """Runs token requests on one model; not thread-safe (the engine holds a lock around `run`)."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: Any,
        eos_ids: list[int],
        grammars: GrammarCompiler,
        store: PrefixKVStore | None,
        *,
        max_batch_tokens: int,
        max_batch_size: int,
        prefill_chunk_tokens: int = 2048,
    ) -> None:
        self.model = model
        text_config = model.config.get_text_config(decoder=True)
        full = set(getattr(text_config, "layer_types", None) or ["full_attention"]) == {"full_attention"}
        self.full_attention_layers = text_config.num_hidden_layers if full else None
        """Layer count when every layer attends to all positions (batch caches use `kv_buffer`), else None."""
        self.tokenizer = tokenizer
        self.eos_ids = frozenset(eos_ids)
        self.pad_id = tokenizer.pad_token_id
        self.grammars = grammars
        self.store = store
        self.max_batch_tokens = max_batch_tokens
        self.max_batch_size = max_batch_size
        self.prefill_chunk_tokens = prefill_chunk_tokens
        self.totals = DecodeTotals()

    @property
    def device(self) -> torch.device:
        return self.model.device

    @torch.inference_mode()
    def run(self, requests: list[TokenRequest]) -> list[TokenResult]:
        """One result per request, in order (requests already validated)."""
        start = time.perf_counter()
        rows = [self._row(i, r) for i, r in enumerate(requests)]
        if self.store is not None:
            self._prefill_shared_prefixes(rows)
            for row in rows:
                self._attach_prefix(row)
        results: list[TokenResult | None] = [None] * len(rows)
        for batch in plan_batches([r.shape for r in rows], self.max_batch_tokens, self.max_batch_size):
            self._run_batch([rows[i] for i in batch])
            latency = time.perf_counter() - start
            for i in batch:
                results[i] = self._result(rows[i], latency)
        return [r for r in results if r is not None]

    def _row(self, index: int, request: TokenRequest) -> Row:
        params = request.params
        try:
            matcher = self.grammars.matcher(params.grammar) if params.grammar else None
        except ValueError as err:
            raise ValueError(f"request {index}: {err}") from None
        generator = None if params.greedy else row_generator(params.seed)
        return Row(request, generator=generator, matcher=matcher)

    def _attach_prefix(self, row: Row) -> None:
        """Take the longest stored prefix of the row's prompt, leaving at least one token to
        compute for a row that samples (its logits come from the last prompt token)."""
        assert self.store is not None
        blocks = self.store.lookup(row.prompt)
        size = self.store.block_size
        row.cached = min(len(blocks) * size, len(row.prompt) - (0 if row.prefill_only else 1))
        row.prefix = blocks[: -(-row.cached // size)]

    def _prefill_shared_prefixes(self, rows: list[Row]) -> None:
        """Prefill once, into the store, every block-aligned prefix that two or more rows share.

        Only the longest shared prefix of each family is prefilled: it stores the shorter ones
        on the way.
        """
        assert self.store is not None
        size = self.store.block_size
        chains = [block_digests(row.prompt, size) for row in rows]
        counts = Counter(d for chain in chains for d in chain)
        ends: dict[bytes, tuple[int, int]] = {}
        for i, chain in enumerate(chains):
            depth = sum(1 for d in chain if counts[d] >= 2)
            if depth:
                ends[chain[depth - 1]] = (i, depth)
        inner = {chains[i][j] for i, depth in ends.values() for j in range(depth - 1)}
        shared = [
            Row(TokenRequest(rows[i].prompt[: depth * size], PREFILL_ONLY), prefill_only=True)
            for digest, (i, depth) in ends.items()
            if digest not in inner
        ]
        for row in shared:
            self._attach_prefix(row)
        todo = [row for row in shared if row.shape.new > 0]
        for batch in plan_batches([r.shape for r in todo], self.max_batch_tokens, self.max_batch_size):
            self._run_batch([todo[i] for i in batch])

    def _batch_cache(self, rows: list[Row], c_max: int, width: int) -> DynamicCache:
        """A cache of `width` columns (`llm_backends.kv_buffer`; transformers' own for models with
        other than full-attention layers) holding each row's reused prefix right-aligned in the
        first `c_max` columns."""
        buffered = self.full_attention_layers is not None
        if c_max == 0:
            return buffered_cache(self.full_attention_layers, width) if buffered else DynamicCache(config=self.model.config)
        first = next(r.prefix[0] for r in rows if r.prefix)
        layers, _, heads, _, dim = first.shape
        kv = torch.zeros((layers, 2, len(rows), heads, c_max, dim), dtype=first.dtype, device=first.device)
        for row in rows:
            if row.cached:
                kv[:, :, row.slot, :, c_max - row.cached:] = torch.cat(row.prefix, dim=3)[:, :, :, : row.cached]
            row.prefix = []
        if buffered:
            return buffered_cache(layers, width, kv)
        return DynamicCache(ddp_cache_data=[(kv[i, 0], kv[i, 1]) for i in range(layers)], config=self.model.config)

    def _forward(self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: DynamicCache) -> torch.Tensor:
        """Float32 logits [batch, vocab] of the last column after feeding `ids` [batch, columns]."""
        out = self.model(
            input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache, use_cache=True, logits_to_keep=1
        )
        return out.logits[:, -1].float()

    def _sync(self) -> None:
        """Wait for queued GPU work, so phase timings are honest."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def _run_batch(self, rows: list[Row]) -> None:
        """Prefill and decode one batch until every row has finished."""
        start = time.perf_counter()
        c_max = max(r.shape.cached for r in rows)
        n_max = max(r.shape.new for r in rows)
        width = c_max + n_max + max(r.shape.max_new for r in rows)
        ids = torch.full((len(rows), n_max), self.pad_id)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        positions = torch.zeros((len(rows), n_max), dtype=torch.long)
        for slot, row in enumerate(rows):
            row.slot = slot
            new = row.shape.new
            ids[slot, n_max - new:] = torch.tensor(row.prompt[row.cached:])
            mask[slot, c_max - row.cached:c_max] = 1
            mask[slot, c_max + n_max - new:c_max + n_max] = 1
            positions[slot, n_max - new:] = torch.arange(row.cached, len(row.prompt))
            row.columns = torch.cat([torch.arange(c_max - row.cached, c_max), torch.arange(c_max + n_max - new, c_max + n_max)])
        cache = self._batch_cache(rows, c_max, width)
        ids, mask, positions = ids.to(self.device), mask.to(self.device), positions.to(self.device)
        chunk = max(1, self.prefill_chunk_tokens // len(rows))
        for begin in range(0, n_max, chunk):
            end = min(n_max, begin + chunk)
            logits = self._forward(ids[:, begin:end], mask[:, :c_max + end], positions[:, begin:end], cache)
        self._sync()
        prefilled = time.perf_counter()
        self.totals.prefill_s += prefilled - start
        self.totals.prefill_tokens += sum(r.shape.new for r in rows)
        self.totals.reused_tokens += sum(r.cached for r in rows)
        self.totals.decode_steps += self._decode(rows, logits, mask, cache, c_max + n_max)
        self._sync()
        self.totals.decode_s += time.perf_counter() - prefilled

    def _decode(self, rows: list[Row], logits: torch.Tensor, mask: torch.Tensor, cache: DynamicCache, column: int) -> int:
        """Sample, feed and repeat until every row has finished; returns the forward passes made.

        `column` is the first decode column."""
        first_decode_column = column
        live = rows
        steps = 0
        while True:
            self._advance([r for r in live if r.finish is None], logits)
            for row in live:
                if row.finish is not None and not row.stored and self.store is not None:
                    self._store(row, cache, first_decode_column)
            running = [r for r in live if r.finish is None]
            if not running:
                return steps
            if 2 * len(running) <= len(live):
                keep = torch.tensor([r.slot for r in running], device=self.device)
                cache.batch_select_indices(keep)
                mask = mask[keep]
                for slot, row in enumerate(running):
                    row.slot = slot
                live = running
            step = torch.full((len(live), 1), self.pad_id)
            positions = torch.zeros((len(live), 1), dtype=torch.long)
            for row in running:
                step[row.slot, 0] = row.completion[-1]
                positions[row.slot, 0] = len(row.prompt) + len(row.completion) - 1
                mask[row.slot, column] = 1
            logits = self._forward(step.to(self.device), mask[:, :column + 1], positions.to(self.device), cache)
            for row in running:
                row.fed = len(row.completion)
            column += 1
            steps += 1

    def _advance(self, rows: list[Row], logits: torch.Tensor) -> None:
        """Choose the next token of every running row from the batch's logits, or end the row."""
        for row in rows:
            if row.prefill_only:
                row.finish = "prefill"
            elif row.request.cancel is not None and row.request.cancel.is_set():
                row.finish = "cancelled"
        rows = [r for r in rows if r.finish is None]
        if not rows:
            return
        allowed = self.grammars.allowed([r.matcher for r in rows], logits.device)
        if allowed is not None:
            dead = (~allowed.any(dim=-1)).tolist()
            for row in (r for r, d in zip(rows, dead) if d):
                row.finish = "grammar_error"
            allowed = allowed[[not d for d in dead]]
            rows = [r for r, d in zip(rows, dead) if not d]
            if not rows:
                return
        wanted = [r.request.return_logprobs for r in rows]
        choices = allowed.sum(dim=-1).tolist() if allowed is not None and any(wanted) else [0] * len(rows)
        tokens, logprobs = choose_tokens(
            logits[[r.slot for r in rows]], [r.params for r in rows], [r.generator for r in rows], allowed, wanted,
        )
        for index, (row, token, logprob, choice) in enumerate(zip(rows, tokens, logprobs, choices)):
            row.completion.append(token)
            if logprob is not None:
                row.logprobs.append(logprob)
                row.forced.append(choice == 1)
                row.grammar.append(grammar_support(allowed[index]) if choice > 1 else None)
            row.finish = self._finish_after(row, token)
            if row.request.on_tokens is not None:
                try:
                    row.request.on_tokens([token])
                except Exception:  # a failing consumer (a closed stream) ends its own row, not the batch
                    log.warning("token callback failed; row cancelled", exc_info=True)
                    row.finish = row.finish or "cancelled"

    def _finish_after(self, row: Row, token: int) -> str | None:
        """Why the row ends after sampling `token`, or None when it goes on."""
        if row.matcher is not None and not row.matcher.consume_token(token):
            return "grammar_error"
        if token in self.eos_ids:
            return "stop"
        if row.params.stop and hits_stop(self.tokenizer, row.completion, row.params.stop):
            return "stop"
        if len(row.completion) >= row.params.max_new_tokens:
            return "length"
        return None

    def _store(self, row: Row, cache: DynamicCache, first_decode_column: int) -> None:
        """Give the prefix store the keys and values of the row's prompt and fed completion tokens."""
        assert self.store is not None and row.columns is not None
        columns = torch.cat([row.columns, torch.arange(first_decode_column, first_decode_column + row.fed)]).to(self.device)

        def kv(start: int, end: int) -> torch.Tensor:
            picked = columns[start:end]
            return torch.stack([torch.stack((layer.keys[row.slot, :, picked], layer.values[row.slot, :, picked])) for layer in cache.layers])

        self.store.insert(row.prompt + row.completion[: row.fed], kv)
        row.stored = True

    def _result(self, row: Row, latency: float) -> TokenResult:
        text = self.tokenizer.decode(row.completion, skip_special_tokens=True)
        if row.params.stop:
            text, _ = truncate_at_stop(text, row.params.stop)
        return TokenResult(
            completion_ids=row.completion,
            text=text,
            finish_reason=row.finish or "length",
            prompt_tokens=len(row.prompt),
            reused_prompt_tokens=row.cached,
            logprobs=row.logprobs if row.request.return_logprobs else None,
            forced=row.forced if row.request.return_logprobs else None,
            grammar=row.grammar if row.request.return_logprobs else None,
            latency_s=latency,
        )
