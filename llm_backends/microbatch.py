"""Merge concurrent small calls into one engine call (dynamic batching for threaded callers).

LangGraph runs parallel nodes on threads, and a runner may advance many episodes on threads;
each thread asks for one completion at a time, and a local engine would serve them one by
one. `MicroBatchingEngine` queues the calls, waits up to `max_wait_s` after the first one for
more, and sends the calls that share tools and sampling parameters to the inner engine as one
batch. Callers block until their own results are ready; errors reach the caller that sent
the failing group. `close()` serves what is queued, ends the batching thread and closes the
inner engine. The inner engine keeps the cache; `wrapper.usage` counts the callers' calls
and their waits, `wrapper.inner.usage` the merged batches.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from llm_backends.engine import ChatEngine
from llm_backends.types import ChatResult, Conversation, SamplingParams, ToolSchema


def group_key(tools: list[ToolSchema] | None, params: SamplingParams) -> str:
    """Requests with equal tools and sampling parameters can share one engine call."""
    return json.dumps([tools or [], params.model_dump(mode="json")], sort_keys=True)


@dataclass
class _Request:
    conversations: list[Conversation]
    tools: list[ToolSchema] | None
    params: SamplingParams
    group: str
    future: Future = field(default_factory=Future)


class MicroBatchingEngine(ChatEngine):
    """Wraps an engine; concurrent `generate` calls within `max_wait_s` become one inner call."""

    def __init__(self, inner: ChatEngine, max_wait_s: float = 0.01, max_rows: int = 256) -> None:
        super().__init__(cache=None)
        self.inner = inner
        self.engine_id, self.model = inner.engine_id, inner.model
        self.max_wait_s = max_wait_s
        self.max_rows = max_rows
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._thread = threading.Thread(target=self._serve, name="llm-microbatch", daemon=True)
        self._thread.start()

    def __repr__(self) -> str:
        return f"MicroBatchingEngine({self.inner!r}, max_wait_s={self.max_wait_s})"

    def __getattr__(self, name: str) -> Any:
        """Everything else (tokenizer, render, hf_model, ...) is the inner engine's."""
        if name == "inner":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _generate(
        self,
        conversations: list[Conversation],
        tools: list[ToolSchema] | None,
        params: SamplingParams,
    ) -> list[ChatResult]:
        """Queue the call and wait for its share of a merged batch.

        The group key is computed here, on the caller's thread, so a payload that cannot be
        serialised fails its own caller instead of the serving thread.
        """
        request = _Request(conversations, tools, params, group_key(tools, params))
        self._queue.put(request)
        return request.future.result()

    def _collect(self) -> list[_Request | None]:
        """The first waiting request plus whatever arrives within max_wait_s (up to max_rows);
        a None (queued by `close`) ends the list."""
        pending = [self._queue.get()]
        rows = 0
        deadline = time.perf_counter() + self.max_wait_s
        while pending[-1] is not None:
            rows += len(pending[-1].conversations)
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
            groups: dict[str, list[_Request]] = {}
            for request in pending:
                if request is not None:
                    groups.setdefault(request.group, []).append(request)
            for requests in groups.values():
                self._run(requests)
            if pending[-1] is None:
                return

    def _run(self, requests: list[_Request]) -> None:
        """One inner call for a group; each request gets its slice (or the error)."""
        merged = [c for r in requests for c in r.conversations]
        try:
            results = self.inner.generate(merged, requests[0].tools, requests[0].params)
        except Exception as err:  # handed to every waiting caller of this group
            for r in requests:
                r.future.set_exception(err)
            return
        start = 0
        for r in requests:
            r.future.set_result(results[start:start + len(r.conversations)])
            start += len(r.conversations)

    def close(self) -> None:
        """Serve the calls queued so far, stop the batching thread, then close the inner engine."""
        self._queue.put(None)
        self._thread.join()
        self.inner.close()


def with_microbatching(engine: ChatEngine, batch_wait_ms: float) -> ChatEngine:
    """`engine` wrapped in a MicroBatchingEngine when batch_wait_ms > 0, else unchanged."""
    return MicroBatchingEngine(engine, max_wait_s=batch_wait_ms / 1000) if batch_wait_ms > 0 else engine
