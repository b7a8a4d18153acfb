"""What a batch of rollouts did, beyond its reward: the per-step monitoring of decisions and tool use.

Per batch of finished episodes and their regime labels:

- `regime_accuracy`: share of episodes whose answer is the regime's action (BUY↔bullish,
  SELL↔bearish, HOLD↔sideways); an episode without a valid answer counts as a miss;
- `tool_calls`: executed calls per episode;
- `informative_share`: calls of the informative tool / all executed calls (NaN without calls);
- `informative_read`: share of episodes that called the informative tool at least once;
- `format_failures`: parse failures per episode (`Episode.parse_failures()`, `no_answer` included);
- `no_answer`: share of episodes that ended without a valid answer (the fallback was executed);
- `answer_buy`, `answer_sell`, `answer_hold`: shares of the valid answers' actions.
"""

from __future__ import annotations

import math

import numpy as np

from market.decision import Action
from market.regime import ACTION_OF_REGIME
from single_agent.episode import Episode


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def episode_stats(episodes: list[Episode], regimes: list[str], informative_tool: str) -> dict[str, float]:
    """The statistics of the module docstring for `episodes` labelled `regimes`."""
    if len(episodes) != len(regimes):
        raise ValueError(f"{len(episodes)} episodes for {len(regimes)} regime labels")
    actions = [e.final_action for e in episodes]
    calls = [[x.call.name for x in e.exchanges] for e in episodes]
    every_call = [name for names in calls for name in names]
    answered = [a for a in actions if a is not None]
    stats = {
        "regime_accuracy": _mean([a is not None and a.value == ACTION_OF_REGIME[r] for a, r in zip(actions, regimes)]),
        "tool_calls": _mean([len(names) for names in calls]),
        "informative_share": _mean([name == informative_tool for name in every_call]),
        "informative_read": _mean([informative_tool in names for names in calls]),
        "format_failures": _mean([len(e.parse_failures()) for e in episodes]),
        "no_answer": _mean([e.fallback for e in episodes]),
    }
    for action in Action:
        stats[f"answer_{action.value.lower()}"] = _mean([a == action for a in answered])
    return stats
