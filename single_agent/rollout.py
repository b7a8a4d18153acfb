"""The rollout engine: many single-agent episodes played together, turn by turn, in token ids.

    episodes = roll_out(policy, protocol, starts, params, constrained=True, return_logprobs=False)

Every unfinished episode advances together: one `policy.generate_tokens` call per turn for
all of them. Each episode continues from its own token ids: the prompt (the protocol's system
and user messages with the offered tool schemas, rendered once), then every turn's sampled ids
exactly as sampled and, between turns, the tool-response fragment (`single_agent.fragments`,
tokenised once). Each turn is parsed (`single_agent.parser`); its calls run through the
episode's own `ToolSet` (`offered_tools.run_call`: the protocol's defaults and result cut).
An episode ends on a valid answer, at the turn or call limit, or after a turn with neither a
call to run nor a valid answer (`parse_failure`); finished episodes leave the batch.

Per episode it returns the `Episode` record (its trace, `Episode.decision()`) with its
`TokenRecord`: `completion_ids` holds every turn's sampled ids and the fragments between turns,
`model_mask` is 1 on sampled ids, `logprobs` (with `return_logprobs`) the sampling
log-probability of each sampled id and `forced` 1 on the sampled ids the grammar left no choice.

Sampling: a turn's seed is `derive_seed(start.seed, turn)`, so an episode samples the same
turns whatever else shares its batches (a resumed run, a GRPO group with explicit seeds).
Greedy parameters ignore seeds. With `constrained`, each turn is held to the protocol's
grammar (`single_agent.grammar`, the ticker pinned, added-token tags as token references);
once the call budget is spent, or on the last allowed turn, only an answer is allowed; with the
protocol's `enforce_required_tools`, only a call until every required tool has been called.
`params.max_new_tokens` must then be at least `max_turn_tokens` so that no valid turn is cut.
The token path has no response cache.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from llm_backends.types import Conversation, GrammarSupport, SamplingParams, TokenRequest, TokenResult
from market.decision import LLMCallRecord
from single_agent.episode import EndReason, Episode, TokenRecord, ToolExchange, Turn
from single_agent.fragments import fragment_ids
from single_agent.grammar import max_turn_tokens, protocol_grammar, single_token_tags
from single_agent.offered_tools import offered_schemas, run_call
from single_agent.parser import parse_step
from single_agent.protocol import Protocol as AgentProtocol
from tools import ToolSet

ROLE = "agent"
"""`LLMCallRecord.role` of every turn."""


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed named by `parts`: the first 8 bytes of SHA-256("p1|p2|...") shifted right by one."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True)
class EpisodeStart:
    """One episode to play: the ticker, the decision date, the tool set bound to that date's
    `MarketView` (its records become the trace's tool calls), and the seed of its samples."""

    ticker: str
    date: pd.Timestamp
    toolset: ToolSet
    seed: int


@dataclass(frozen=True)
class TurnRequest(TokenRequest):
    """A token request that also carries the episode it continues; engines read only the ids,
    a scripted policy (`single_agent.expert_policy`) reads only the episode."""

    episode: Episode | None = None


class TokenPolicy(Protocol):
    """What a policy offers the rollout: the engine's token interface (`TransformersEngine`, or
    the scripted expert as `ExpertPolicy`) and the chat template to build ids with."""

    model: str
    tokenizer: Any
    eos_ids: list[int]

    def render(self, conversation: Conversation, tools: list[dict[str, Any]] | None = None) -> str: ...

    def render_ids(self, conversation: Conversation, tools: list[dict[str, Any]] | None = None) -> list[int]: ...

    def generate_tokens(self, requests: list[TokenRequest]) -> list[TokenResult]: ...


@dataclass
class _Playing:
    """One episode in play: its record, its ids so far and the calls it has run."""

    start: EpisodeStart
    episode: Episode
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    model_mask: list[int] = field(default_factory=list)
    logprobs: list[float | None] = field(default_factory=list)
    forced: list[int] = field(default_factory=list)
    grammar: list[GrammarSupport | None] = field(default_factory=list)
    calls_run: int = 0

    @property
    def ids(self) -> list[int]:
        return self.prompt_ids + self.completion_ids

    def end(self, reason: EndReason) -> None:
        self.episode.end_reason = reason

    def append(self, ids: list[int], sampled: bool, logprobs: list[float] | None = None,
               forced: list[bool] | None = None, grammar: list[GrammarSupport | None] | None = None) -> None:
        self.completion_ids += ids
        self.model_mask += [int(sampled)] * len(ids)
        self.logprobs += logprobs if logprobs is not None else [None] * len(ids)
        self.forced += [int(f) for f in forced] if forced is not None else [0] * len(ids)
        self.grammar += grammar if grammar is not None else [None] * len(ids)

    def token_record(self, with_logprobs: bool) -> TokenRecord:
        return TokenRecord(prompt_ids=self.prompt_ids, completion_ids=self.completion_ids, model_mask=self.model_mask,
                           logprobs=self.logprobs if with_logprobs else None,
                           forced=self.forced if with_logprobs else None,
                           grammar=self.grammar if with_logprobs else None)


def calls_allowed(protocol: AgentProtocol, turn: int, calls_run: int) -> bool:
    """True when turn `turn` (from 0) may still call a tool: budget left and a turn after it for the answer."""
    return calls_run < protocol.max_tool_calls and turn < protocol.max_turns - 1


def answer_allowed(protocol: AgentProtocol, episode: Episode, calls_left: bool) -> bool:
    """True unless the protocol enforces its required tools, some of them have not been called
    yet, and a call is still allowed."""
    called = {exchange.call.name for exchange in episode.exchanges}
    return not (protocol.enforce_required_tools and calls_left and set(protocol.required_tools) - called)


def _turn_params(playing: _Playing, protocol: AgentProtocol, params: SamplingParams,
                 token_tags: frozenset[str] | None) -> SamplingParams:
    """The sampling parameters of the next turn: its own seed and, when constrained, its grammar."""
    turn = len(playing.episode.turns)
    update: dict[str, Any] = {"seed": None if params.greedy else derive_seed(playing.start.seed, turn)}
    if token_tags is not None:
        calls = calls_allowed(protocol, turn, playing.calls_run)
        update["grammar"] = protocol_grammar(protocol, ticker=playing.start.ticker, token_tags=token_tags,
                                             calls_allowed=calls,
                                             answer_allowed=answer_allowed(protocol, playing.episode, calls))
    return params.model_copy(update=update)


def _check(protocol: AgentProtocol, starts: Sequence[EpisodeStart], params: SamplingParams, constrained: bool) -> None:
    """ValueError when the parameters cannot play the protocol as asked."""
    if params.grammar is not None:
        raise ValueError("params.grammar is set by the rollout (constrained=True), not by the caller")
    if constrained:
        need = max(max_turn_tokens(protocol, ticker=start.ticker) for start in starts)
        if params.max_new_tokens < need:
            raise ValueError(f"max_new_tokens {params.max_new_tokens} can cut a valid {protocol.name} turn; "
                             f"constrained decoding needs at least {need} (max_turn_tokens)")


def _record(policy: TokenPolicy, result: TokenResult) -> LLMCallRecord:
    return LLMCallRecord(role=ROLE, model=policy.model, prompt_tokens=result.prompt_tokens,
                         completion_tokens=result.completion_tokens,
                         reused_prompt_tokens=result.reused_prompt_tokens, latency_s=result.latency_s)


def _run_calls(playing: _Playing, turn: Turn, protocol: AgentProtocol) -> None:
    """Run the turn's calls that fit the remaining call budget through the episode's tool set."""
    toolset = playing.start.toolset
    for call in turn.step.calls[:protocol.max_tool_calls - playing.calls_run]:
        response = run_call(protocol, toolset, call)
        turn.exchanges.append(ToolExchange(call=call, response=response, record=toolset.records[-1]))
    playing.calls_run += len(turn.exchanges)


def _advance(playing: _Playing, result: TokenResult, policy: TokenPolicy, protocol: AgentProtocol,
             return_logprobs: bool) -> None:
    """Take one turn's result: record it, run its calls, then end the episode or append the fragment."""
    if return_logprobs and result.logprobs is None:
        raise ValueError(f"policy {policy.model} returned no logprobs although they were asked for")
    playing.append(result.completion_ids, sampled=True, logprobs=result.logprobs, forced=result.forced,
                   grammar=result.grammar)
    turn = Turn(step=parse_step(result.text, protocol.tools), llm=_record(policy, result))
    playing.episode.turns.append(turn)
    if turn.step.outcome == "answer":
        playing.end("answer")
    elif turn.step.outcome == "none":
        playing.end("parse_failure")
    elif playing.calls_run >= protocol.max_tool_calls:
        playing.end("call_limit")
    else:
        _run_calls(playing, turn, protocol)
        if len(playing.episode.turns) >= protocol.max_turns:
            playing.end("turn_limit")
        else:
            tool_messages = [exchange.message() for exchange in turn.exchanges]
            playing.append(fragment_ids(policy, result.completion_ids, tool_messages), sampled=False)


def roll_out(policy: TokenPolicy, protocol: AgentProtocol, starts: Sequence[EpisodeStart], params: SamplingParams,
             *, constrained: bool, return_logprobs: bool = False) -> list[Episode]:
    """Play one episode per start, all advancing together (see the module docstring); finished
    episodes, in the order of `starts`, each with its `TokenRecord`."""
    if not starts:
        return []
    _check(protocol, starts, params, constrained)
    token_tags = single_token_tags(policy.tokenizer) if constrained else None
    schemas = offered_schemas(protocol)
    playing = []
    for start in starts:
        episode = Episode.start(protocol, start.ticker, start.date)
        playing.append(_Playing(start, episode, policy.render_ids(episode.prompt, schemas)))
    active = playing
    while active:
        requests = [TurnRequest(p.ids, _turn_params(p, protocol, params, token_tags), return_logprobs=return_logprobs,
                                episode=p.episode) for p in active]
        for p, result in zip(active, policy.generate_tokens(requests)):
            _advance(p, result, policy, protocol, return_logprobs)
        active = [p for p in active if p.episode.end_reason is None]
    for p in playing:
        p.episode.tokens = p.token_record(return_logprobs)
    return [p.episode for p in playing]
