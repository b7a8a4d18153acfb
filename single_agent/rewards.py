"""The AlphaQuanter reward of one episode, R = α·R_result + R_format + R_tool, component by component.

This is the reading in docs/single_agent.md ("Reward"), taken from the paper's Algorithms 1–2
and Table 9; every constant is a field of `RewardConfig`, loaded from
an option of the `single_agent/reward` config group (`paper`, `compact`). The label is the regime of
`market.regime`; a day without the full horizon has none, and then neither R_result nor the
total exists (leave such days out of training and out of reward means). The executed fallback
action never reaches R_result: an episode without a valid answer scores `invalid_result`.
Token counts come from the policy's tokenizer through a `count_tokens(text) -> int` function.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from configs import compose_option
from core.errors import ConfigError, one_line
from market.decision import Action
from market.regime import REGIMES, regime_labels
from single_agent.episode import Episode
from single_agent.tags import CALL_OPEN, THINK_CLOSE, THINK_OPEN
from tools import TOOLS
from tools.toolset import is_malformed

CountTokens = Callable[[str], int]


class RewardConfig(BaseModel):
    """Every constant of the reward (docs/single_agent.md names the paper's values)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    alpha: float = Field(description="weight α of R_result in the total")
    result_matrix: dict[str, dict[Action, float]] = Field(description="R_result by regime (rows) and action")
    invalid_result: float = Field(description="R_result of an episode without a valid answer")
    lookahead_result: float = Field(description="R_result when any call asked for data after the episode date")
    horizon: int = Field(ge=1, description="label horizon H in bars")
    eta: float = Field(gt=0, description="label decay η of the horizon weights")
    theta: float = Field(ge=0, description="label threshold θ on the weighted forward return")
    invalid_format: float = Field(description="R_format term of an episode without a valid answer")
    think_bonus: float = Field(description="per segment holding <think> then </think>")
    length_band: tuple[int, int] = Field(description="[lo, hi] tokens of a segment that earn length_in_band")
    length_in_band: float
    length_base: float = Field(description="b in b − s·(L − lo)(L − hi)/c outside the band")
    length_slope: float = Field(description="s in that formula")
    length_scale: float = Field(gt=0, description="c in that formula")
    empty_segment: float = Field(description="score of an empty (whitespace-only) segment")
    no_call_format: float = Field(0.0, description="R_format segment score of an episode without any tool call "
                                                   "(no segment to score; Algorithm 1: +0.001)")
    multi_call_min: int = Field(ge=2, description="k calls in one turn cost k²/divisor from this k on")
    multi_call_divisor: float = Field(gt=0)
    lookahead_penalty: float = Field(ge=0, description="subtracted per call asking for data after the episode date")
    duplicate_penalty: float = Field(ge=0, description="subtracted per repeated call (same tool, same arguments)")
    tool_count_band: tuple[int, int] = Field(description="n executed calls with n ≤ lo or n > hi are penalised")
    tool_count_expected: int = Field(ge=0, description="the count the penalty −|n − expected| measures from")
    count_valid_calls_only: bool = Field(False, description="the count band counts well-formed calls only "
                                                            "(malformed ones: `tools.toolset.is_malformed`)")
    malformed_call_penalty: float = Field(0.0, ge=0, description="subtracted per executed call of an unknown tool "
                                                                  "or with arguments that fail its schema")

    @model_validator(mode="after")
    def _full_matrix(self) -> "RewardConfig":
        if set(self.result_matrix) != set(REGIMES) or any(set(row) != set(Action) for row in self.result_matrix.values()):
            raise ValueError(f"result_matrix needs the rows {', '.join(REGIMES)}, each with BUY, SELL and HOLD")
        return self


REWARD_GROUP = "single_agent/reward"
"""The Hydra config group of reward configs; a framework composes one (`/single_agent/reward@reward: compact`)."""


def load_reward_config(config: RewardConfig | Mapping[str, Any] | str) -> RewardConfig:
    """The reward config of a composed config of the `single_agent/reward` group, or of that group's
    option `config` when it is a name (a trace records its reward config's name); ConfigError when invalid."""
    if isinstance(config, RewardConfig):
        return config
    values = compose_option(REWARD_GROUP, config) if isinstance(config, str) else config
    try:
        return RewardConfig.model_validate(dict(values))
    except ValidationError as error:
        raise ConfigError(f"reward {values.get('name', '')}: {one_line(error)}") from None


class RewardComponents(BaseModel):
    """The reward of one episode by component; `result` and `total` are None without a label."""

    result: float | None
    format: float
    tool: float
    total: float | None


def regime_label(close: pd.Series, date: pd.Timestamp | str, config: RewardConfig) -> str | None:
    """The regime of the decision on `date` from the close prices `close` (date-indexed, in order):
    `market.regime.regime_labels` with the config's H, η and θ; None without the full horizon."""
    label = regime_labels(close, config.horizon, config.eta, config.theta).get(pd.Timestamp(date))
    return label if isinstance(label, str) else None


def result_reward(action: Action | None, regime: str, lookahead_calls: int, config: RewardConfig) -> float:
    """R_result = result_matrix[regime][action]; `invalid_result` (−1) without a valid action;
    `lookahead_result` (−1) when any call asked for data after the episode date."""
    if action is None:
        return config.invalid_result
    if lookahead_calls > 0:
        return config.lookahead_result
    return config.result_matrix[regime][action]


def length_score(tokens: int, config: RewardConfig) -> float:
    """length_in_band (+0.1) if lo ≤ L ≤ hi, else length_base − length_slope·(L − lo)(L − hi)/length_scale
    (0.05 − 0.01·(L − 200)(L − 600)/30000 in the paper); L in tokens."""
    low, high = config.length_band
    if low <= tokens <= high:
        return config.length_in_band
    return config.length_base - config.length_slope * (tokens - low) * (tokens - high) / config.length_scale


def segment_score(segment: str, config: RewardConfig, count_tokens: CountTokens) -> float:
    """empty_segment (+0.001) for a whitespace-only segment; else think_bonus (+0.005) if it holds
    <think> and later </think>, plus length_score(L) with L = count_tokens(segment), tags included."""
    if not segment.strip():
        return config.empty_segment
    start = segment.find(THINK_OPEN)
    has_think = start >= 0 and segment.find(THINK_CLOSE, start + len(THINK_OPEN)) >= 0
    return (config.think_bonus if has_think else 0.0) + length_score(count_tokens(segment), config)


def format_segments(episode: Episode) -> list[str]:
    """The scored segments: for every turn whose text holds <tool_call>, the text before the first one."""
    return [turn.step.text.split(CALL_OPEN, 1)[0] for turn in episode.turns if CALL_OPEN in turn.step.text]


def format_reward(episode: Episode, config: RewardConfig, count_tokens: CountTokens) -> float:
    """R_format = invalid_format (−1) if the episode has no valid answer, plus Σ segment_score over its
    segments, or no_call_format (+0.001 in the paper) when it has none (no tool call)."""
    invalid = config.invalid_format if episode.final_action is None else 0.0
    segments = format_segments(episode)
    if not segments:
        return invalid + config.no_call_format
    return invalid + sum(segment_score(s, config, count_tokens) for s in segments)


def multi_call_penalty(calls_per_turn: list[int], config: RewardConfig) -> float:
    """−Σ k²/multi_call_divisor over the turns with k ≥ multi_call_min calls (−k²/10 for k ≥ 2)."""
    return -sum(k * k / config.multi_call_divisor for k in calls_per_turn if k >= config.multi_call_min)


def lookahead_penalty(lookahead_calls: int, config: RewardConfig) -> float:
    """−lookahead_penalty per call that asked for data after the episode date (−50 each)."""
    return -config.lookahead_penalty * lookahead_calls


def call_key(name: str, arguments: dict[str, Any]) -> str:
    """A call as `name` + its validated arguments with defaults filled in (as given when they do not validate)."""
    try:
        arguments = TOOLS[name].args_model.model_validate(arguments).model_dump()
    except (KeyError, ValidationError):
        pass
    return json.dumps([name, arguments], sort_keys=True, default=repr)


def duplicate_penalty(call_keys: list[str], config: RewardConfig) -> float:
    """−duplicate_penalty for every call after the first with the same key (−0.05 each)."""
    return -config.duplicate_penalty * sum(count - 1 for count in Counter(call_keys).values())


def tool_count_penalty(calls: int, config: RewardConfig) -> float:
    """−|n − tool_count_expected| if n ≤ lo or n > hi of tool_count_band, else 0 (paper: n ≤ 4 or n > 8 → −|n − 8|)."""
    low, high = config.tool_count_band
    return -abs(calls - config.tool_count_expected) if calls <= low or calls > high else 0.0


def malformed_penalty(malformed_calls: int, config: RewardConfig) -> float:
    """−malformed_call_penalty per executed call of an unknown tool or with arguments failing its schema."""
    return -config.malformed_call_penalty * malformed_calls


def tool_reward(episode: Episode, config: RewardConfig) -> float:
    """R_tool = multi_call_penalty (calls written per turn) + lookahead_penalty + duplicate_penalty
    + malformed_penalty + tool_count_penalty (calls executed; only well-formed ones with
    `count_valid_calls_only`, so padding the count with junk calls earns nothing)."""
    executed = episode.exchanges
    malformed = sum(is_malformed(e.record) for e in executed)
    counted = len(executed) - malformed if config.count_valid_calls_only else len(executed)
    return (multi_call_penalty([len(turn.step.calls) for turn in episode.turns], config)
            + lookahead_penalty(sum(e.record.lookahead for e in executed), config)
            + duplicate_penalty([call_key(e.record.name, e.record.arguments) for e in executed], config)
            + malformed_penalty(malformed, config)
            + tool_count_penalty(counted, config))


def total_reward(result: float, format_: float, tool: float, config: RewardConfig) -> float:
    """R = α·R_result + R_format + R_tool."""
    return config.alpha * result + format_ + tool


def episode_rewards(episode: Episode, regime: str | None, config: RewardConfig,
                    count_tokens: CountTokens) -> RewardComponents:
    """Every component of one finished episode; `regime` is its label (None: no label, no R_result)."""
    format_ = format_reward(episode, config, count_tokens)
    tool = tool_reward(episode, config)
    if regime is None:
        return RewardComponents(result=None, format=format_, tool=tool, total=None)
    lookahead = sum(e.record.lookahead for e in episode.exchanges)
    result = result_reward(episode.final_action, regime, lookahead, config)
    return RewardComponents(result=result, format=format_, tool=tool, total=total_reward(result, format_, tool, config))
