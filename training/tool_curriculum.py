"""A tool curriculum: a smaller call budget early in training, enforced by the grammar only.

`CallBudgetPolicy` wraps the rollout's token policy: for a turn of an episode that has already
run `budget` calls, it swaps the turn's grammar for the answer-only grammar of the protocol
(`protocol_grammar(calls_allowed=False)`), so the model must answer. The prompt, the tools
offered and the reward stay the protocol's, so the curriculum changes what is explored, not
what is asked. `training.config.ToolCurriculum` says how the budget grows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from llm_backends.types import Conversation, TokenRequest, TokenResult
from single_agent.grammar import protocol_grammar, single_token_tags
from single_agent.protocol import Protocol
from single_agent.rollout import TokenPolicy, TurnRequest


class CallBudgetPolicy:
    """`policy` with at most `budget` tool calls per episode (see the module docstring)."""

    def __init__(self, policy: TokenPolicy, protocol: Protocol, budget: int) -> None:
        self.policy = policy
        self.protocol = protocol
        self.budget = budget
        self.model = policy.model
        self.tokenizer = policy.tokenizer
        self.eos_ids = policy.eos_ids
        self._token_tags = single_token_tags(policy.tokenizer)

    def render(self, conversation: Conversation, tools: list[dict[str, Any]] | None = None) -> str:
        return self.policy.render(conversation, tools)

    def render_ids(self, conversation: Conversation, tools: list[dict[str, Any]] | None = None) -> list[int]:
        return self.policy.render_ids(conversation, tools)

    def _held(self, request: TokenRequest) -> TokenRequest:
        """`request` with the answer-only grammar when its episode has spent the budget."""
        episode = request.episode if isinstance(request, TurnRequest) else None
        if episode is None or request.params.grammar is None or len(episode.exchanges) < self.budget:
            return request
        grammar = protocol_grammar(self.protocol, ticker=episode.ticker, token_tags=self._token_tags,
                                   calls_allowed=False)
        return replace(request, params=request.params.model_copy(update={"grammar": grammar}))

    def generate_tokens(self, requests: list[TokenRequest]) -> list[TokenResult]:
        return self.policy.generate_tokens([self._held(request) for request in requests])
