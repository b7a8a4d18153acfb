"""The scripted expert (`single_agent.expert`) as a framework: it plays the protocol through the
same rollout engine as a model, calls the required tools and the tool it reads (news by
default), and answers from that reading. Deterministic and stateless.

On `data=synthetic`, where only the news channel carries information about forward returns,
it shows what calling the informative tool is worth; on other data it shows what a fixed
reading of that tool does. Its turns are tokenised with `tokenizer_llm`'s tokenizer (the
default, `tiny`, builds in about a second); the tokenizer changes token counts, not decisions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from configs import require_composed
from frameworks.protocol_agent import ProtocolAgent
from llm_backends.build import LLM_GROUP, build_engine
from single_agent.protocol import Protocol
from single_agent.rewards import RewardConfig
from single_agent.expert import ExpertConfig, ScriptedExpert
from single_agent.scripted_policy import expert_policy


class ScriptedExpertAgent(ProtocolAgent):
    """The scripted expert reading `read_value` of `read_tool`: BUY above `threshold`, SELL below its negative."""

    def __init__(self, *, protocol: Protocol | Mapping[str, Any], reward: RewardConfig | Mapping[str, Any],
                 tokenizer_llm: Mapping[str, Any], read_tool: str = "get_news_data", read_value: str = "mean_sentiment",
                 threshold: float = 0.1) -> None:
        """`protocol`, `reward` and `tokenizer_llm` are composed options of their config groups
        (configs/framework/scripted_expert.yaml's defaults)."""
        super().__init__(protocol, reward, constrained=False, temperature=0.0, top_p=1.0, max_new_tokens=None, samples=1)
        self.expert = ScriptedExpert(self.protocol, ExpertConfig(read_tool=read_tool, read_value=read_value,
                                                                 threshold=threshold))
        self.renderer = build_engine(require_composed("tokenizer_llm", tokenizer_llm, LLM_GROUP), "tokenizer_llm")
        self.policy = expert_policy(self.expert, self.renderer)

    def run_facts(self) -> dict[str, Any]:
        """As a model's, with constrained decoding not applicable (None): the expert writes grammar-valid turns."""
        return {**super().run_facts(), "constrained_decoding": None}

    def policy_identity(self) -> str:
        """SHA-256 over the expert's config and the tokenizer engine's fingerprint."""
        payload = f"{self.expert.config.model_dump_json()}|{self.renderer.fingerprint()}"
        return hashlib.sha256(payload.encode()).hexdigest()
