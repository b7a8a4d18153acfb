"""The per-step decision statistics, on expert episodes whose actions and calls are known."""

from __future__ import annotations

import math

from market.regime import ACTION_OF_REGIME
from training.episode_stats import episode_stats


def test_statistics_of_expert_episodes(expert_episodes):
    episodes, _ = expert_episodes
    regimes = ["bullish"] * len(episodes)
    stats = episode_stats(episodes, regimes, informative_tool="get_news_data")
    buys = sum(e.final_action.value == ACTION_OF_REGIME["bullish"] for e in episodes)
    assert math.isclose(stats["regime_accuracy"], buys / len(episodes))
    assert stats["tool_calls"] == 3                     # market data, indicators, news
    assert math.isclose(stats["informative_share"], 1 / 3)
    assert stats["informative_read"] == 1
    assert stats["no_answer"] == 0 and stats["format_failures"] == 0
    assert math.isclose(stats["answer_buy"] + stats["answer_sell"] + stats["answer_hold"], 1)


def test_an_episode_without_an_answer_is_a_miss(expert_episodes):
    episodes, _ = expert_episodes
    unfinished = episodes[0].model_copy(update={"turns": episodes[0].turns[:-1], "end_reason": "turn_limit"})
    regime = {a: r for r, a in ACTION_OF_REGIME.items()}[episodes[0].final_action.value]
    stats = episode_stats([unfinished], [regime], informative_tool="get_news_data")
    assert stats["regime_accuracy"] == 0 and stats["no_answer"] == 1 and stats["format_failures"] == 1
    assert math.isnan(stats["answer_buy"])
