"""Episodes played by the scripted expert through a protocol's real tools, for tests."""

from __future__ import annotations

import pandas as pd

from market.data import MarketData
from market.view import MarketView
from single_agent.episode import Episode, ToolExchange, Turn
from single_agent.expert import ScriptedExpert
from single_agent.offered_tools import protocol_toolset, run_call
from single_agent.parser import parse_step
from single_agent.protocol import Protocol
from tools import ToolSet


def step_once(episode: Episode, text: str, protocol: Protocol, toolset: ToolSet) -> Turn:
    """Parse `text` as the next turn, run its calls through `toolset`, append the turn."""
    step = parse_step(text, protocol.tools)
    turn = Turn(step=step, exchanges=[ToolExchange(call=call, response=run_call(protocol, toolset, call),
                                                   record=toolset.records[-1]) for call in step.calls])
    episode.turns.append(turn)
    return turn


def play(expert: ScriptedExpert, market: MarketData, ticker: str, day: pd.Timestamp) -> Episode:
    """One episode driven by the expert, ending on its answer (or at the protocol's turn limit)."""
    episode = Episode.start(expert.protocol, ticker, day)
    toolset = protocol_toolset(expert.protocol, MarketView(market, day))
    for _ in range(expert.protocol.max_turns):
        if step_once(episode, expert.next_text(episode), expert.protocol, toolset).step.outcome == "answer":
            episode.end_reason = "answer"
            return episode
    episode.end_reason = "turn_limit"
    return episode
