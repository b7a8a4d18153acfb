"""Merge concurrent small calls into one engine call (dynamic batching for threaded callers).

LangGraph runs parallel nodes on threads, and a runner or a server may advance many episodes
on threads; each thread asks for one completion at a time, and a local engine would serve
them one by one. `MicroBatchingEngine` queues the calls, waits up to `max_wait_s` after the
first one for more, and sends every chat call that arrived to the inner engine as one batch,
whatever their tools and sampling parameters (rows carry their own), and every token call
(`generate_tokens`) as another. Each caller's rows keep the seeds and cache occurrences of its
own call. Callers block until their own results are ready. When a merged batch fails, each
call in it is retried alone, so an error reaches only the caller that caused it. `close()`
serves what is queued, ends the batching thread and closes the inner engine. The inner engine
keeps the cache; `wrapper.usage` counts the callers' calls and their waits,
`wrapper.inner.usage` the merged batches.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from llm_backends.engine import ChatEngine, ChatRow
from llm_backends.types import ChatResult, TokenRequest, TokenResult


@dataclass
class _Call:
    """One caller's rows (chat rows or token requests) and the future its results go to."""

    rows: list[ChatRow] | list[TokenRequest]
    tokens: bool
    future: Future = field(default_factory=Future)


class MicroBatchingEngine(ChatEngine):
    """Wraps an engine; concurrent calls within `max_wait_s` become one inner call per kind."""

    def __init__(self, inner: ChatEngine, max_wait_s: float = 0.01, max_rows: int = 256) -> None:
        super().__init__(cache=None)
        self.inner = inner
        self.engine_id, self.model, self.knowledge_cutoff = inner.engine_id, inner.model, inner.knowledge_cutoff
        self.max_wait_s = max_wait_s
        self.max_rows = max_rows
        self._queue: queue.Queue[_Call | None] = queue.Queue()
        self._thread = threading.Thread(target=self._serve, name="llm-microbatch", daemon=True)
        self._thread.start()

    def __repr__(self) -> str:
        return f"MicroBatchingEngine({self.inner!r}, max_wait_s={self.max_wait_s})"

    def __getattr__(self, name: str) -> Any:
        """Everything else (tokenizer, render_ids, clear_kv_cache, ...) is the inner engine's."""
        if name == "inner":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def fingerprint(self) -> str:
        """The inner engine's fingerprint."""
        return self.inner.fingerprint()

    def release_memory(self) -> None:
        """The inner engine's."""
        self.inner.release_memory()

    def replay(self, rows: list[ChatRow]) -> list[ChatResult | None]:
        """The inner engine's cached results (it holds the cache)."""
        return self.inner.replay(rows)

    def remember(self, rows: list[ChatRow], results: list[ChatResult]) -> None:
        """Stored in the inner engine's cache."""
        self.inner.remember(rows, results)

    def _submit(self, call: _Call) -> Any:
        self._queue.put(call)
        return call.future.result()

    def _generate_rows(self, rows: list[ChatRow]) -> list[ChatResult]:
        """Queue the rows and wait for their share of a merged batch."""
        return self._submit(_Call(rows, tokens=False))

    def generate_tokens(self, requests: list[TokenRequest]) -> list[TokenResult]:
        """`generate_tokens` of the inner engine, merged with concurrent token calls; counted here too."""
        if not hasattr(self.inner, "generate_tokens"):
            raise AttributeError(f"{type(self.inner).__name__} takes no token requests (local engines only)")
        start = time.perf_counter()
        results = self._submit(_Call(list(requests), tokens=True))
        self.usage.add(results, time.perf_counter() - start)
        return results

    def _collect(self) -> list[_Call | None]:
        """The first waiting call plus whatever arrives within max_wait_s (up to max_rows);
        a None (queued by `close`) ends the list."""
        pending = [self._queue.get()]
        rows = 0
        deadline = time.perf_counter() + self.max_wait_s
        while pending[-1] is not None:
            rows += len(pending[-1].rows)
            if rows >= self.max_rows:
                break
            remaining = deadline - time.perf_counter()
            try:
                pending.append(self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait())
            except queue.Empty:
                break
        return pending

    def _serve(self) -> None:
        """Run merged batches until `close` queues None."""
        while True:
            pending = self._collect()
            calls = [c for c in pending if c is not None]
            for tokens in (False, True):
                group = [c for c in calls if c.tokens == tokens]
                if group:
                    self._run(group)
            if pending[-1] is None:
                return

    def _run(self, calls: list[_Call]) -> None:
        """One inner call for the group; each call gets its slice, or, on failure, its own retry."""
        merged: list[Any] = [row for call in calls for row in call.rows]
        try:
            results = self.inner.generate_tokens(merged) if calls[0].tokens else self.inner.generate_rows(merged)
        except Exception as err:  # handed to the caller that caused it
            if len(calls) > 1:
                for call in calls:
                    self._run([call])
            else:
                calls[0].future.set_exception(err)
            return
        start = 0
        for call in calls:
            call.future.set_result(results[start:start + len(call.rows)])
            start += len(call.rows)

    def close(self) -> None:
        """Serve the calls queued so far, stop the batching thread, then close the inner engine."""
        self._queue.put(None)
        self._thread.join()
        self.inner.close()


def with_microbatching(engine: ChatEngine, batch_wait_ms: float) -> ChatEngine:
    """`engine` wrapped in a MicroBatchingEngine when batch_wait_ms > 0, else unchanged."""
    return MicroBatchingEngine(engine, max_wait_s=batch_wait_ms / 1000) if batch_wait_ms > 0 else engine
