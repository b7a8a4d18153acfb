"""One accepted chat job on the engine, in two synchronous stages run on worker threads.

`plan_choices` does everything that can refuse the request before an answer starts (so its
APIErrors are plain 400s, also for a stream): the prompt is rendered and counted against the
context, the grammar of the request's constraints is built and compiled, the `n` rows are
prepared (choice i samples with seed + i), and choices are replayed from the response cache
where they can be (not when log-probabilities are asked: the cache does not keep them); the
replayed answers are counted in `engine.usage` as `generate` counts them.

`decode` generates the rest. On a local engine (one with a token path: `render_ids`,
`generate_tokens`) every choice is a `TokenRequest` carrying the request's cancel event (set
when the client goes away or the request times out: the row ends before its next step) and,
when streaming, a callback that receives the choice's ids as they are sampled, on the decoding
thread. Fresh answers go to the response cache unless cancelled. Other engines (an HTTP engine,
vLLM) answer whole choices through `generate_rows`, with their own cache: they cannot stream,
report log-probabilities or be stopped, and such requests are refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from llm_backends.engine import ChatEngine, ChatRow, prepare_rows
from llm_backends.serve.constraints import job_grammar
from llm_backends.serve.errors import bad_request, unsupported
from llm_backends.serve.limits import ContextWindow
from llm_backends.serve.request import ChatJob
from llm_backends.types import ChatResult, TokenRequest, TokenResult

ChoiceTokens = Callable[[int, list[int]], None]
"""Receives (choice index, newly sampled ids) on the decoding thread."""


@dataclass(frozen=True)
class Choice:
    """One choice's answer, with the engine's token result when it was decoded here (None when replayed)."""

    result: ChatResult
    sampled: TokenResult | None = None


@dataclass(frozen=True)
class Plan:
    """An accepted job made ready for the engine."""

    rows: list[ChatRow]
    replayed: list[ChatResult | None]
    """Each choice's answer from the response cache, None where it must be generated."""
    prompt_ids: list[int] | None
    """The rendered prompt (local engines), None for engines that take whole conversations."""
    logprobs: bool

    @property
    def cached(self) -> bool:
        """True when every choice is replayed from the cache."""
        return all(r is not None for r in self.replayed)


def has_token_path(engine: ChatEngine) -> bool:
    """True for local engines (or a micro-batching wrapper around one): they render ids and decode token requests."""
    return hasattr(engine, "render_ids") and hasattr(engine, "generate_tokens")


def grammar_param(job: ChatJob) -> str:
    """The request field a grammar came from, named when it does not compile."""
    if job.grammar is not None:
        return "structured_outputs"
    return "tool_choice" if job.forced_tools else "response_format"


def refuse_whole_answer_engine(engine: ChatEngine, job: ChatJob) -> None:
    """A 400 for what an engine without a token path cannot do (stream, log-probabilities)."""
    why = f"the engine behind this server ({engine.engine_id}) returns whole answers"
    if job.stream:
        raise unsupported("stream", f"{why}; send stream=false")
    if job.logprobs:
        raise unsupported("logprobs", f"{why} without log-probabilities")


def check_grammar(engine: Any, job: ChatJob, grammar: str | None) -> None:
    """Compile `grammar` with the engine's tokenizer now (memoised there), so that an error is the request's 400."""
    if grammar is None:
        return
    try:
        engine.grammars.matcher(grammar)
    except ValueError as err:
        param = grammar_param(job)
        raise bad_request(param, f"{param}: cannot be enforced: {err}") from None


def plan_choices(engine: ChatEngine, window: ContextWindow, job: ChatJob) -> Plan:
    """The job ready for `decode`, or the APIError that refuses it."""
    local = has_token_path(engine)
    if not local:
        refuse_whole_answer_engine(engine, job)
    try:
        prompt_ids = engine.render_ids(job.conversation, job.tools) if local else None
        budget = window.completion_budget(job.max_tokens, job.max_tokens_param, None if prompt_ids is None else len(prompt_ids))
        grammar = job_grammar(job, engine.tokenizer if local else None)
        if local:
            check_grammar(engine, job, grammar)
        rows = prepare_rows([job.conversation] * job.n, job.tools, job.params(budget, grammar))
    except ValueError as err:  # the engine's word on malformed messages or tools
        raise bad_request(None, str(err)) from None
    replayed = engine.replay(rows) if local and not job.logprobs else [None] * len(rows)
    hits = [r for r in replayed if r is not None]
    if hits:
        engine.usage.add(hits, 0.0)
    return Plan(rows, replayed, prompt_ids, job.logprobs)


def decode(engine: Any, plan: Plan, cancel: threading.Event, on_tokens: ChoiceTokens | None = None) -> list[Choice]:
    """Every choice of `plan`: replayed ones as they are, the rest generated (see the module docstring)."""
    if plan.prompt_ids is None:
        return [Choice(result) for result in engine.generate_rows(plan.rows)]
    todo = [i for i, replayed in enumerate(plan.replayed) if replayed is None]
    requests = [
        TokenRequest(
            plan.prompt_ids, plan.rows[i].params, return_logprobs=plan.logprobs, cancel=cancel,
            on_tokens=None if on_tokens is None else partial(on_tokens, i),
        )
        for i in todo
    ]
    sampled = engine.generate_tokens(requests) if requests else []
    fresh = [engine.chat_result(s) for s in sampled]
    engine.remember([plan.rows[i] for i in todo], fresh)
    choices = [Choice(r) if r is not None else None for r in plan.replayed]
    for i, result, tokens in zip(todo, fresh, sampled):
        choices[i] = Choice(result, tokens)
    return [c for c in choices if c is not None]
