"""What the single-agent frameworks share: a policy playing the AlphaQuanter protocol through the
rollout engine (docs/single_agent.md), one decision per context.

Every context of a batch becomes `samples` episodes, all played together by one `roll_out`;
episode k of a context samples with seed `derive_seed(context.seed, ticker, date, k)`, so a
killed and resumed run samples the same decisions. An episode's tool set is the context's
view restricted to the protocol's tools (and to the run's `tools` when it names some). With
one sample the episode's own decision is executed; with more, the majority answer
(`single_agent.self_consistency`). The trace's extra holds the protocol, the end reason, the
reward config's name and the label-free reward components (R_format, R_tool); R_result needs
the regime label, which reads prices after the decision date, so the report computes it
(`metrics.agent_rows`), never `decide`.

Subclasses build the policy (`frameworks.single_agent`: a model; `scripted_expert`: the
scripted expert) and say what identifies it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from configs import require_composed
from frameworks.base import TradingFramework
from llm_backends.types import SamplingParams
from market.decision import Decision, DecisionContext
from single_agent.context_bound import episodes_fitting
from single_agent.episode import Episode
from single_agent.grammar import max_turn_tokens, protocol_grammar, single_token_tags
from single_agent.protocol import PROTOCOL_GROUP, load_protocol
from single_agent.rewards import REWARD_GROUP, episode_rewards, load_reward_config
from single_agent.rollout import EpisodeStart, TokenPolicy, derive_seed, roll_out
from single_agent.self_consistency import consensus_decision, shown_episode
from tools import ToolSet


class ProtocolAgent(TradingFramework):
    """A policy playing a protocol; subclasses set `policy` and `policy_identity()` (module docstring)."""

    policy: TokenPolicy

    def release_memory(self) -> None:
        """The policy engine's prefix store (`ChatEngine.release_memory`)."""
        release = getattr(self.policy, "release_memory", None)
        if callable(release):
            release()

    def __init__(self, protocol: Mapping[str, Any], reward: Mapping[str, Any], constrained: bool, temperature: float, top_p: float,
                 max_new_tokens: int | None, samples: int) -> None:
        """`protocol` and `reward` are composed options of their config groups (`single_agent/protocol`,
        `single_agent/reward`); `max_new_tokens` per turn (None: `max_turn_tokens(protocol)`, which never cuts a valid turn);
        `samples` episodes per decision, the majority answer executed (self-consistency)."""
        if samples < 1:
            raise ValueError(f"samples: {samples}; at least 1 episode per decision")
        if samples > 1 and temperature == 0:
            raise ValueError(f"samples: {samples} greedy episodes would all be the same; set temperature > 0")
        self.protocol = load_protocol(require_composed("protocol", protocol, PROTOCOL_GROUP))
        self.reward = load_reward_config(require_composed("reward", reward, REWARD_GROUP))
        self.constrained = constrained
        self.params = SamplingParams(temperature=temperature, top_p=top_p,
                                     max_new_tokens=max_new_tokens or max_turn_tokens(self.protocol))
        self.samples = samples
        self.stochastic = temperature > 0

    def policy_identity(self) -> str:
        """What determines the policy's answers (an engine's fingerprint)."""
        raise NotImplementedError

    def fingerprint(self) -> str:
        """SHA-256 over the policy's identity, the protocol's digest (settings and prompt files), the grammar
        when decoding is constrained, and the reward config."""
        grammar = protocol_grammar(self.protocol, ticker="TICKER", token_tags=single_token_tags(self.policy.tokenizer)) \
            if self.constrained else None
        facts = {"policy": self.policy_identity(), "protocol": self.protocol.digest(), "constrained": self.constrained,
                 "grammar": grammar, "reward": self.reward.model_dump(mode="json")}
        return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()

    def run_facts(self) -> dict[str, Any]:
        """The policy, its knowledge cutoff, the protocol, whether decoding was constrained, the sampling."""
        return {"policy": self.policy.model, "knowledge_cutoff": getattr(self.policy, "knowledge_cutoff", None),
                "protocol": self.protocol.name, "constrained_decoding": self.constrained,
                "temperature": self.params.temperature, "samples": self.samples}

    def preferred_batch_size(self) -> int | None:
        """Decisions whose `samples` episodes fit the policy's prefix store at once
        (`single_agent.context_bound`); None without a store or without a bound on an episode."""
        store = getattr(self.policy, "kv_store_positions", 0)
        if not store:
            return None
        episodes = episodes_fitting(store, self.policy, self.protocol, self.params.max_new_tokens)
        return None if episodes is None else max(1, episodes // self.samples)

    def _toolset(self, context: DecisionContext) -> ToolSet:
        """The protocol's tools on the context's view (only those the run offers, when it restricts them)."""
        offered = context.tools.names if context.tools is not None else None
        return ToolSet(context.view, [name for name in self.protocol.tools if offered is None or name in offered],
                       terse=self.protocol.terse_results)

    def _extra(self, episode: Episode) -> dict[str, Any]:
        """The reward config's name and the label-free components of the episode's reward."""
        count = lambda text: len(self.policy.tokenizer(text, add_special_tokens=False)["input_ids"])  # noqa: E731
        components = episode_rewards(episode, None, self.reward, count)
        return {"reward_config": self.reward.name, "reward": {"format": components.format, "tool": components.tool}}

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        """Every context's `samples` episodes in one rollout, then one decision per context."""
        starts = [EpisodeStart(c.ticker, c.date, self._toolset(c), derive_seed(c.seed, c.ticker, f"{c.date:%Y-%m-%d}", k))
                  for c in batch for k in range(self.samples)]
        episodes = roll_out(self.policy, self.protocol, starts, self.params, constrained=self.constrained)
        decisions = []
        for first in range(0, len(episodes), self.samples):
            group = episodes[first:first + self.samples]
            extra = self._extra(shown_episode(group))
            decisions.append(group[0].decision(extra) if self.samples == 1 else consensus_decision(group, extra))
        return decisions
