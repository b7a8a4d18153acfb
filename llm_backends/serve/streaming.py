"""A streamed answer (`stream=true`): the engine's sampled ids, as server-sent chunks, while they are sampled.

The decode runs on a worker thread; its per-token callback only hands (choice, ids) to the
event loop's queue. The event loop decodes each choice's ids incrementally
(`detokenizer`), turns the growing text into content and tool-call deltas (`deltas`) and sends
each as a `chat.completion.chunk`. When the engine is done, each choice gets what is left of
its text (the engine's final text is the authority), a last chunk with its finish reason and,
when asked, its log-probabilities (all of them in that chunk: the engine reports them at the
end); then the usage chunk (`include_usage`) and `data: [DONE]`. Choices replayed from the
response cache arrive whole at the end.

However the response ends — finished, the client gone (Starlette stops the stream when uvicorn
reports the disconnect), the request timeout (an error event, then `[DONE]`) or an error — the
generation's cancel event is set, so the engine stops decoding it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Mapping
from typing import Any

from fastapi.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from llm_backends.serve.deltas import ChoiceDeltas
from llm_backends.serve.detokenizer import IncrementalDetokenizer
from llm_backends.serve.errors import APIError
from llm_backends.serve.generation import Choice, Plan, decode
from llm_backends.serve.lifetime import Deadline, log_failure
from llm_backends.serve.request import ChatJob
from llm_backends.serve.response import DONE, ChunkWriter, finish_reason, logprobs_body

log = logging.getLogger(__name__)


class GenerationStream(StreamingResponse):
    """Server-sent events of one generation; however the response ends, the generation's `cancel` is set."""

    def __init__(self, events: AsyncIterator[str], cancel: threading.Event, headers: Mapping[str, str]) -> None:
        super().__init__(events, media_type="text/event-stream", headers={"Cache-Control": "no-cache", **headers})
        self.cancel = cancel

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.cancel.set()


async def chunk_events(engine: Any, job: ChatJob, plan: Plan, cancel: threading.Event, deadline: Deadline) -> AsyncIterator[str]:
    """The events of one streamed answer (see the module docstring)."""
    writer = ChunkWriter(engine.model, job.include_usage, plan.cached)
    loop = asyncio.get_running_loop()
    arrivals: asyncio.Queue[tuple[int, list[int]] | None] = asyncio.Queue()

    def on_tokens(index: int, ids: list[int]) -> None:
        loop.call_soon_threadsafe(arrivals.put_nowait, (index, ids))

    work = asyncio.ensure_future(run_in_threadpool(decode, engine, plan, cancel, on_tokens))
    work.add_done_callback(lambda _: arrivals.put_nowait(None))
    detokenizers = [IncrementalDetokenizer(engine.tokenizer) for _ in range(job.n)]
    texts = [ChoiceDeltas(job.stop, bool(job.tools)) for _ in range(job.n)]
    try:
        for index in range(job.n):
            yield writer.delta(index, {"role": "assistant", "content": ""})
        while (item := await asyncio.wait_for(arrivals.get(), deadline.left())) is not None:
            index, ids = item
            for delta in texts[index].add(detokenizers[index].push(ids)):
                yield writer.delta(index, delta)
        choices: list[Choice] = work.result()
    except TimeoutError:
        cancel.set()
        log.info("a streamed answer ran past the request timeout; its generation was stopped")
        yield writer.error(deadline.error())
        yield DONE
        return
    except Exception as err:  # the stream has begun: the error goes to the client as an event
        log.exception("streamed generation failed")
        yield writer.error(APIError(500, f"{type(err).__name__}: {err}", kind="server_error"))
        yield DONE
        return
    finally:
        if not work.done():
            work.add_done_callback(log_failure)
    for index, choice in enumerate(choices):
        for delta in texts[index].finish(choice.result.text):
            yield writer.delta(index, delta)
        logprobs = logprobs_body(engine.tokenizer, choice.sampled) if job.logprobs and choice.sampled else None
        yield writer.delta(index, {}, finish_reason(choice.result, bool(job.tools)), logprobs)
    if job.include_usage:
        yield writer.usage([choice.result for choice in choices])
    yield DONE
