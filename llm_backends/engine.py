"""The one interface every engine implements: many conversations in, one `ChatResult` each.

`ChatEngine.generate` validates the conversations and turns them into `ChatRow`s (each with
its own tools and sampling parameters), serves what it can from the response cache, asks the
concrete engine for the rest in one call, stores the new results and counts every result in
`engine.usage`. Concrete engines implement `_generate_rows` (rows may differ in tools and
parameters: one batch) or, when every call must share them, `_generate` (the rows are then
grouped by tools and parameters, one `_generate` call per group). `replay` and `remember` are
the cache's two steps on their own, for a caller that decodes rows itself (the HTTP server
streaming tokens).

Identical sampled requests inside one call are numbered (`occurrence` 0, 1, 2, ...): copy n > 0
of a seeded request samples with `repeat_seed(seed, n)`, so n rollouts of one prompt are n
different samples, each reproducible, and the response cache keeps them apart.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from llm_backends.cache import ResponseCache, cache_key, request_identity
from llm_backends.types import ChatResult, Conversation, SamplingParams, ToolSchema
from llm_backends.usage import UsageCounter

ROLES = frozenset({"system", "user", "assistant", "tool"})

ToolsArg = list[ToolSchema] | list[list[ToolSchema] | None] | None
"""One list of tool schemas for every conversation, or one list (or None) per conversation."""
ParamsArg = SamplingParams | list[SamplingParams | None] | None
"""One SamplingParams for every conversation, or one (or None for the defaults) per conversation."""


def validate_conversations(conversations: list[Conversation]) -> None:
    """Raise ValueError naming the conversation and message index of the first malformed message."""
    if not isinstance(conversations, list):
        raise ValueError(f"conversations must be a list of message lists, got {type(conversations).__name__}")
    for c, conversation in enumerate(conversations):
        if not isinstance(conversation, list) or not conversation:
            raise ValueError(f"conversation {c}: must be a non-empty list of messages")
        for m, message in enumerate(conversation):
            if not isinstance(message, dict) or message.get("role") not in ROLES:
                role = message.get("role") if isinstance(message, dict) else message
                raise ValueError(f"conversation {c}, message {m}: role must be one of {sorted(ROLES)}, got {role!r}")
            content = message.get("content")
            if content is not None and not isinstance(content, str):
                raise ValueError(f"conversation {c}, message {m}: content must be a string, got {type(content).__name__}")


def tools_per_row(tools: ToolsArg, n: int) -> list[list[ToolSchema] | None]:
    """`tools` as one entry per conversation (see `ToolsArg`); ValueError when the shape is neither."""
    if tools is None:
        return [None] * n
    if not isinstance(tools, list):
        raise ValueError(f"tools must be a list, got {type(tools).__name__}")
    if all(isinstance(t, dict) for t in tools):
        return [tools or None] * n
    if all(t is None or isinstance(t, list) for t in tools):
        if len(tools) != n:
            raise ValueError(f"tools: {len(tools)} tool lists for {n} conversations")
        return [t or None for t in tools]
    raise ValueError("tools: give one list of tool schemas for all conversations, or one list (or None) per conversation")


def params_per_row(params: ParamsArg, n: int) -> list[SamplingParams]:
    """`params` as one SamplingParams per conversation (see `ParamsArg`)."""
    if params is None or isinstance(params, SamplingParams):
        return [params or SamplingParams()] * n
    if not isinstance(params, list) or not all(p is None or isinstance(p, SamplingParams) for p in params):
        raise ValueError("params: give one SamplingParams for all conversations, or a list with one per conversation")
    if len(params) != n:
        raise ValueError(f"params: {len(params)} SamplingParams for {n} conversations")
    return [p or SamplingParams() for p in params]


def occurrences(keys: list[str]) -> list[int]:
    """For each position, how many equal items came before it: [a, b, a] -> [0, 0, 1]."""
    seen: Counter[str] = Counter()
    out = []
    for key in keys:
        out.append(seen[key])
        seen[key] += 1
    return out


def repeat_seed(seed: int, occurrence: int) -> int:
    """The seed of copy `occurrence` of a seeded request: `seed` itself for the first copy, else
    the first 63 bits of SHA-256("<seed>/<occurrence>")."""
    if occurrence == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}/{occurrence}".encode()).digest()[:8], "big") >> 1


@dataclass(frozen=True)
class ChatRow:
    """One conversation to answer, with its own tools and sampling parameters.

    `identity` is the request's digest (messages, tools, parameters) and `occurrence` how many
    identical requests came before it in the same call; `params.seed` already accounts for it.
    """

    conversation: Conversation
    tools: list[ToolSchema] | None
    params: SamplingParams
    identity: str
    occurrence: int = 0


def prepare_rows(conversations: list[Conversation], tools: ToolsArg = None, params: ParamsArg = None) -> list[ChatRow]:
    """Validated rows for `ChatEngine.generate`'s arguments; ValueError names the first bad one."""
    validate_conversations(conversations)
    n = len(conversations)
    row_tools, row_params = tools_per_row(tools, n), params_per_row(params, n)
    identities = []
    for c, (conversation, schemas, p) in enumerate(zip(conversations, row_tools, row_params)):
        try:
            identities.append(request_identity(conversation, schemas, p))
        except (TypeError, ValueError) as err:
            raise ValueError(f"conversation {c}: messages and tools must be JSON-serialisable: {err}") from None
    rows = []
    for conversation, schemas, p, identity, n_before in zip(conversations, row_tools, row_params, identities, occurrences(identities)):
        if n_before and p.seed is not None and not p.greedy:
            p = p.model_copy(update={"seed": repeat_seed(p.seed, n_before)})
        rows.append(ChatRow(conversation, schemas, p, identity, n_before))
    return rows


def group_key(row: ChatRow) -> str:
    """Rows with equal tools and sampling parameters (seed included) can share one `_generate` call."""
    return json.dumps([row.tools or [], row.params.model_dump(mode="json")], sort_keys=True)


def run_grouped(
    rows: list[ChatRow], key: Callable[[ChatRow], str], run: Callable[[list[ChatRow]], list[ChatResult]]
) -> list[ChatResult]:
    """Results in row order, with `run` called once per group of rows of equal `key`."""
    groups: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(key(row), []).append(i)
    results: list[ChatResult | None] = [None] * len(rows)
    for members in groups.values():
        for i, result in zip(members, run([rows[i] for i in members])):
            results[i] = result
    return [r for r in results if r is not None]


class ChatEngine:
    """Chat generation over many conversations at once, cached and counted.

    Subclasses set `engine_id` (which backend, e.g. "transformers" or "openai:<base_url>") and
    `model` (a display name), and implement `_generate_rows` or `_generate` (see the module
    docstring). `fingerprint()` names what determines the answers; the response cache keys by it.
    """

    engine_id: str = ""
    model: str = ""
    knowledge_cutoff: str | None = None
    """YYYY-MM: the latest month the model's training data can cover (its stated cutoff, else its
    release month, an upper bound); None when unknown. Reports warn when a test window precedes it."""
    remote: bool = False
    """True when answers come from another process over the network (an HTTP server), which may hang
    or go away; frameworks over a remote engine give their decisions a time limit."""

    def __init__(self, cache: ResponseCache | None = None) -> None:
        self.cache = cache
        self.usage = UsageCounter()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(engine_id={self.engine_id!r}, model={self.model!r}, cache={self.cache!r})"

    def fingerprint(self) -> str:
        """16 hex digits naming what determines this engine's answers; here (engine id, model name).

        Engines that know their weights (local engines) override it with a digest of weights,
        tokenizer and chat template.
        """
        return hashlib.sha256(json.dumps(["engine", self.engine_id, self.model]).encode()).hexdigest()[:16]

    def generate(
        self,
        conversations: list[Conversation],
        tools: ToolsArg = None,
        params: ParamsArg = None,
    ) -> list[ChatResult]:
        """One result per conversation, in order; cached results are replayed, the rest generated.

        `tools` and `params` are each one value for all conversations or a list with one per
        conversation (see `ToolsArg`, `ParamsArg`).
        """
        return self.generate_rows(prepare_rows(conversations, tools, params))

    def generate_one(
        self,
        conversation: Conversation,
        tools: list[ToolSchema] | None = None,
        params: SamplingParams | None = None,
    ) -> ChatResult:
        """`generate` for a single conversation."""
        return self.generate([conversation], tools, params)[0]

    def generate_rows(self, rows: list[ChatRow]) -> list[ChatResult]:
        """Answer prepared rows (see `prepare_rows`): cache, generation and counting."""
        if not rows:
            return []
        start = time.perf_counter()
        results = self._generate_cached(rows)
        self.usage.add(results, time.perf_counter() - start)
        return results

    def _cache_keys(self, rows: list[ChatRow]) -> list[str | None]:
        """The response-cache key of each reproducible row; None for unseeded sampled rows."""
        fingerprint = self.fingerprint()
        return [cache_key(fingerprint, row.identity, row.occurrence) if row.params.reproducible else None for row in rows]

    def replay(self, rows: list[ChatRow]) -> list[ChatResult | None]:
        """The cached result of each row, None where there is none (no cache, unseeded sampled row, not stored yet).

        Callers that generate rows themselves (a server decoding token by token) replay first
        and `remember` what they generated, as `generate_rows` does.
        """
        if self.cache is None:
            return [None] * len(rows)
        start = time.perf_counter()
        keys = self._cache_keys(rows)
        hits = self.cache.get_many([k for k in keys if k is not None])
        lookup_s = time.perf_counter() - start
        return [hits[k].model_copy(update={"latency_s": lookup_s}) if k in hits else None for k in keys]

    def remember(self, rows: list[ChatRow], results: list[ChatResult]) -> None:
        """Store the fresh results of reproducible rows, except those that failed or were cancelled."""
        if self.cache is None:
            return
        keep = {
            key: (self.engine_id, result)
            for key, result in zip(self._cache_keys(rows), results)
            if key is not None and result.error is None and result.finish_reason != "cancelled"
        }
        if keep:
            self.cache.put_many(keep)

    def _generate_cached(self, rows: list[ChatRow]) -> list[ChatResult]:
        """Replay what the cache holds, generate the rest, store what may be stored."""
        results = self.replay(rows)
        todo = [i for i, r in enumerate(results) if r is None]
        if todo:
            fresh = self._generate_rows([rows[i] for i in todo])
            self.remember([rows[i] for i in todo], fresh)
            for i, r in zip(todo, fresh):
                results[i] = r
        return [r for r in results if r is not None]

    def _generate_rows(self, rows: list[ChatRow]) -> list[ChatResult]:
        """Generate one fresh result per row (no cache, no counting).

        This default makes one `_generate` call per group of rows sharing tools and parameters;
        engines that batch mixed rows override it.
        """
        return run_grouped(rows, group_key, lambda group: self._generate([r.conversation for r in group], group[0].tools, group[0].params))

    def _generate(
        self,
        conversations: list[Conversation],
        tools: list[ToolSchema] | None,
        params: SamplingParams,
    ) -> list[ChatResult]:
        """Generate one fresh result per conversation, all sharing `tools` and `params`."""
        raise NotImplementedError(f"{type(self).__name__} implements neither _generate_rows nor _generate")

    def release_memory(self) -> None:
        """Free what the engine keeps between calls only to be faster (a local engine's prefix KV
        store): later calls give the same answers, only later. Default: nothing is kept."""

    def close(self) -> None:
        """Release resources (the cache connection, HTTP clients)."""
        if self.cache is not None:
            self.cache.close()

