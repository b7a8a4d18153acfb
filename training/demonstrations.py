"""Demonstrations for the warm start: the scripted expert's episodes, token for token in the
policy's format.

The expert (`single_agent.expert.ScriptedExpert`) plays through the same rollout engine as the
model (`single_agent.scripted_policy.expert_policy`), with the policy's tokenizer and chat
template, on a tool set bound to each day's point-in-time view. With `randomise` its tool
choice (after the required tools) and its answer are drawn at random from (seed, ticker, date):
such demonstrations teach the protocol's format and nothing about which tool matters or what
to answer. With `terse` the expert's thinks only name each call (`Next: <tool>.`) and, before
the answer, are one fixed sentence (`single_agent.expert`): rollouts are several times shorter,
and the answer can only follow the tool results themselves. As a supervised example an
episode is `input_ids` = prompt + completion ids with `assistant_masks` = 0 on the prompt and on
tool/template tokens, 1 on the expert's own tokens.
"""

from __future__ import annotations

import pandas as pd
from datasets import Dataset

from llm_backends.types import SamplingParams
from market.data import MarketData
from market.view import MarketView
from single_agent.episode import Episode
from single_agent.expert import ExpertConfig, ScriptedExpert
from single_agent.offered_tools import protocol_toolset
from single_agent.protocol import Protocol
from single_agent.rollout import EpisodeStart, TokenPolicy, roll_out
from single_agent.scripted_policy import expert_policy


def demonstration_episodes(renderer: TokenPolicy, protocol: Protocol, data: MarketData, days: pd.DataFrame,
                           count: int, seed: int, randomise: bool, terse: bool) -> list[Episode]:
    """The expert's episodes on `count` distinct days drawn from `days` (columns ticker, date) with `seed`."""
    chosen = days.sample(n=min(count, len(days)), random_state=seed)
    expert = expert_policy(ScriptedExpert(protocol, ExpertConfig(randomise=randomise, terse=terse, seed=seed)), renderer)
    starts = [EpisodeStart(ticker=row.ticker, date=row.date, seed=seed,
                           toolset=protocol_toolset(protocol, MarketView(data, row.date)))
              for row in chosen.itertuples(index=False)]
    return roll_out(expert, protocol, starts, SamplingParams(temperature=0.0), constrained=False)


def supervised_dataset(episodes: list[Episode], results_loss: bool = False) -> Dataset:
    """The episodes as pre-tokenised SFT examples: `input_ids` and `assistant_masks`.

    The mask covers the demonstrator's tokens; with `results_loss` every completion token, so the
    model also learns to predict the tool results it reads (what it reads, not what to answer)."""
    rows = []
    for episode in episodes:
        tokens = episode.tokens
        completion_mask = [1] * len(tokens.completion_ids) if results_loss else tokens.model_mask
        rows.append({"input_ids": tokens.prompt_ids + tokens.completion_ids,
                     "assistant_masks": [0] * len(tokens.prompt_ids) + completion_mask})
    return Dataset.from_list(rows)
