"""The AlphaQuanter single agent: one LLM reads the date and the ticker, calls data tools one
per step, and answers BUY, SELL or HOLD (docs/single_agent.md).

Its building blocks: protocols (`protocol`, `prompting`, `offered_tools`), the turn parser
(`parser`, `failures`), the episode record (`episode`), the reward (`rewards`), the grammar
for constrained decoding (`grammar`), a scripted expert (`expert`), and the rollout engine
(`rollout`, `fragments`, `scripted_policy`) that plays episodes in token ids for both the
benchmark's frameworks and GRPO training.
"""

from single_agent.episode import Episode, TokenRecord, ToolExchange, Turn
from single_agent.expert import ExpertConfig, ScriptedExpert
from single_agent.grammar import max_turn_tokens, protocol_grammar, single_token_tags
from single_agent.parser import Step, parse_step
from single_agent.protocol import Protocol, load_protocol
from single_agent.rewards import RewardComponents, RewardConfig, episode_rewards, load_reward_config
from single_agent.rollout import EpisodeStart, TokenPolicy, TurnRequest, derive_seed, roll_out
from single_agent.scripted_policy import ScriptedPolicy, expert_policy

__all__ = ["Episode", "EpisodeStart", "ExpertConfig", "Protocol", "RewardComponents", "RewardConfig", "ScriptedExpert",
           "ScriptedPolicy", "Step", "TokenPolicy", "TokenRecord", "ToolExchange", "Turn", "TurnRequest", "derive_seed",
           "episode_rewards", "expert_policy", "load_protocol", "load_reward_config", "max_turn_tokens", "parse_step",
           "protocol_grammar", "roll_out", "single_token_tags"]
