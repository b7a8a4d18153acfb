"""A policy whose turns a Python function writes, behind the token interface of the rollout engine.

`ScriptedPolicy(write, renderer, name)` answers each `TurnRequest` with `write(episode)` for the
episode the request carries, tokenised with the renderer's tokenizer and closed with its first
end-of-turn id, as a model ends its turn. Its log-probabilities are 0 (the text is written with
probability 1). The renderer (an engine, usually the policy being trained) supplies the
tokenizer and the chat template, so the episodes are token-for-token in that model's format.

`expert_policy(expert, renderer)` is the scripted expert (`single_agent.expert`) as such a
policy: it plays through the same rollout engine as a model and supplies demonstrations.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from llm_backends.types import Conversation, TokenRequest, TokenResult
from single_agent.episode import Episode
from single_agent.expert import ScriptedExpert
from single_agent.rollout import TokenPolicy, TurnRequest


class ScriptedPolicy:
    """Turns written by `write(episode)`; see the module docstring."""

    def __init__(self, write: Callable[[Episode], str], renderer: TokenPolicy, name: str) -> None:
        self.write = write
        self.renderer = renderer
        self.tokenizer = renderer.tokenizer
        self.eos_ids = list(renderer.eos_ids)
        self.model = name

    def render(self, conversation: Conversation, tools: list[dict[str, Any]] | None = None) -> str:
        return self.renderer.render(conversation, tools)

    def render_ids(self, conversation: Conversation, tools: list[dict[str, Any]] | None = None) -> list[int]:
        return self.renderer.render_ids(conversation, tools)

    def generate_tokens(self, requests: list[TokenRequest]) -> list[TokenResult]:
        """The next turn of each request's episode; TypeError for a request that carries none."""
        started = time.perf_counter()
        texts = []
        for index, request in enumerate(requests):
            if not isinstance(request, TurnRequest) or request.episode is None:
                raise TypeError(f"request {index}: a scripted policy needs a TurnRequest that carries its episode")
            texts.append(self.write(request.episode))
        latency = time.perf_counter() - started
        results = []
        for request, text in zip(requests, texts):
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"] + self.eos_ids[:1]
            results.append(TokenResult(completion_ids=ids, text=text, finish_reason="stop",
                                       prompt_tokens=len(request.prompt_ids), latency_s=latency,
                                       logprobs=[0.0] * len(ids) if request.return_logprobs else None))
        return results


def expert_policy(expert: ScriptedExpert, renderer: TokenPolicy) -> ScriptedPolicy:
    """The scripted expert as a token policy named `scripted-expert:<protocol>`."""
    return ScriptedPolicy(expert.next_text, renderer, f"scripted-expert:{expert.protocol.name}")
