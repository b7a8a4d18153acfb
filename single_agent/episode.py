"""The record of one single-agent episode (one ticker on one day): what the model wrote each
turn, which tools it called and what it read back, how the episode ended, and — filled in by
the rollout engine — the token ids the trainer learns from.

The rewards (`single_agent.rewards`) read it; `Episode.trace()` turns it into the `Trace` the
journal stores. The action it executes is the model's answer, or the protocol's fallback when
there is none (`fallback` is then True and the reward never sees the fallback).
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, Field, model_validator

from llm_backends.tool_calls import ToolCall
from llm_backends.types import Conversation, GrammarSupport
from market.decision import Action, Decision, LLMCallRecord, ToolCallRecord, Trace
from single_agent.failures import NO_ANSWER
from single_agent.parser import Step
from single_agent.prompting import initial_conversation
from single_agent.protocol import Protocol

EndReason = Literal["answer", "turn_limit", "call_limit", "parse_failure"]
"""Why an episode ended: a valid answer, the protocol's turn or call limit, or a turn that
cannot be continued (neither a call to run nor a valid answer)."""


class ToolExchange(BaseModel):
    """One executed call: what the model asked for, the text it read back, the tool set's record."""

    call: ToolCall
    response: str
    record: ToolCallRecord

    def message(self) -> dict[str, Any]:
        """The `tool` message that answers the call in a conversation."""
        return {"role": "tool", "name": self.call.name, "tool_call_id": self.call.id, "content": self.response}


class Turn(BaseModel):
    """One assistant turn: the parsed text, its generation call, and the calls run after it."""

    step: Step
    llm: LLMCallRecord = Field(default_factory=LLMCallRecord)
    exchanges: list[ToolExchange] = Field(default_factory=list)


class TokenRecord(BaseModel):
    """The episode as token ids, for the trainer (TRL's `prompt_ids` / `completion_ids` / `env_mask`).

    `completion_ids` holds every turn: the tokens the model sampled and, between turns, the
    tokens the environment added (tool responses and the chat template around them).
    `model_mask[i]` is 1 when the model sampled `completion_ids[i]`, 0 otherwise; `logprobs`
    (optional) has the sampling log-probability of each model token, None elsewhere; `forced`
    (optional) is 1 on the model tokens that the grammar allowed alone (no choice was made);
    `grammar` (optional) has the grammar's support where it allowed several tokens
    (`llm_backends.types.GrammarSupport`), None elsewhere.
    """

    prompt_ids: list[int]
    completion_ids: list[int]
    model_mask: list[int]
    logprobs: list[float | None] | None = None
    forced: list[int] | None = None
    grammar: list[GrammarSupport | None] | None = None

    @model_validator(mode="after")
    def _aligned(self) -> "TokenRecord":
        if len(self.model_mask) != len(self.completion_ids):
            raise ValueError(f"model_mask has {len(self.model_mask)} entries for {len(self.completion_ids)} tokens")
        if set(self.model_mask) - {0, 1}:
            raise ValueError("model_mask holds values other than 0 and 1")
        if self.logprobs is not None and len(self.logprobs) != len(self.completion_ids):
            raise ValueError(f"logprobs has {len(self.logprobs)} entries for {len(self.completion_ids)} tokens")
        if self.forced is not None and len(self.forced) != len(self.completion_ids):
            raise ValueError(f"forced has {len(self.forced)} entries for {len(self.completion_ids)} tokens")
        if self.grammar is not None and len(self.grammar) != len(self.completion_ids):
            raise ValueError(f"grammar has {len(self.grammar)} entries for {len(self.completion_ids)} tokens")
        return self


class Episode(BaseModel):
    """One episode; `end_reason` is None while it runs."""

    ticker: str
    date: str
    protocol: str
    fallback_action: Action
    prompt: Conversation
    turns: list[Turn] = Field(default_factory=list)
    end_reason: EndReason | None = None
    tokens: TokenRecord | None = None

    @model_validator(mode="after")
    def _answer_ends_it(self) -> "Episode":
        if self.end_reason == "answer" and (not self.turns or self.turns[-1].step.outcome != "answer"):
            raise ValueError("end_reason 'answer' needs a last turn with a valid answer")
        return self

    @classmethod
    def start(cls, protocol: Protocol, ticker: str, date: pd.Timestamp | str) -> "Episode":
        """A new episode of `protocol` for `ticker` on `date`, with its system and user prompt."""
        return cls(ticker=ticker, date=f"{pd.Timestamp(date):%Y-%m-%d}", protocol=protocol.name,
                   fallback_action=protocol.fallback_action, prompt=initial_conversation(protocol, ticker, date))

    @property
    def final_action(self) -> Action | None:
        """The model's answer, or None when the episode did not end on a valid one."""
        return self.turns[-1].step.answer if self.end_reason == "answer" else None

    @property
    def fallback(self) -> bool:
        """True when the episode ended without a valid answer (the fallback action is executed)."""
        return self.end_reason is not None and self.final_action is None

    @property
    def executed_action(self) -> Action:
        """The action the simulator executes: the answer, else the fallback action."""
        return self.final_action or self.fallback_action

    @property
    def exchanges(self) -> list[ToolExchange]:
        """Every executed call, in order."""
        return [exchange for turn in self.turns for exchange in turn.exchanges]

    def parse_failures(self) -> list[str]:
        """Trace lines `"<kind>: turn <i>: <detail>"`, plus a `no_answer` line when the fallback is executed."""
        lines = [f"{failure.kind}: turn {index}: {failure.detail}"
                 for index, turn in enumerate(self.turns) for failure in turn.step.failures]
        if self.fallback:
            lines.append(f"{NO_ANSWER}: ended by {self.end_reason}; {self.fallback_action.value} executed")
        return lines

    def messages(self) -> Conversation:
        """The conversation so far: the prompt, each assistant text as written, each tool response."""
        messages = [dict(message) for message in self.prompt]
        for turn in self.turns:
            messages.append({"role": "assistant", "content": turn.step.text})
            messages.extend(exchange.message() for exchange in turn.exchanges)
        return messages

    def trace(self, extra: dict[str, Any] | None = None) -> Trace:
        """The journal's trace: messages, tool calls, one LLM call per turn, parse failures, fallback flag;
        `extra` holds the protocol, the end reason and anything given (e.g. reward components)."""
        return Trace(
            messages=self.messages(),
            tool_calls=[exchange.record for exchange in self.exchanges],
            llm_calls=[turn.llm for turn in self.turns],
            parse_failures=self.parse_failures(),
            fallback=self.fallback,
            extra={"protocol": self.protocol, "end_reason": self.end_reason, **(extra or {})},
        )

    def decision(self, extra: dict[str, Any] | None = None) -> Decision:
        """The executed action with the episode's trace."""
        return Decision(action=self.executed_action, trace=self.trace(extra))
