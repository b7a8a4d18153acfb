"""A scripted expert: a deterministic policy that writes well-formed protocol text.

Given an episode so far (ticker, date, the results read), it writes the next assistant turn:
a short `<think>` that restates what the last result said, then either the next call of its
plan — every required tool, then the tool it reads (news sentiment by default) — or, when the
plan is done, the answer that reading implies: BUY when the mean sentiment is above
`threshold`, SELL when below −`threshold`, HOLD otherwise or without a reading.

With `terse`, a call's think only names the call (`Next: get_news_data.`) and the answer's think
is one fixed sentence (`TERSE_ANSWER_THINK`) that restates nothing and names no answer: the text
is several times shorter, and the answer can only follow the results themselves. (A restatement
sampled at temperature 1 garbles the digits it copies, so the answer would follow noise.)

With `randomise`, the plan calls the required tools and then a random non-empty subset of the
other offered tools in random order, and the answer is uniform over BUY/SELL/HOLD; every draw
comes from (seed, ticker, date), so the text stays a pure function of the episode. Such
demonstrations teach the format and nothing about which tool matters or what to answer.
"""

from __future__ import annotations

import hashlib

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from llm_backends.tool_calls import render_tool_call
from market.decision import Action
from single_agent.episode import Episode, ToolExchange
from single_agent.offered_tools import offered_parameters
from single_agent.protocol import Protocol
from single_agent.tags import ANSWER_CLOSE, ANSWER_OPEN, THINK_CLOSE, THINK_OPEN
from tools.render import summary_entries

TERSE_ANSWER_THINK = "All planned results are read; now the answer."
"""The terse answer's think: within the compact reward's 20-60 token band for the tiny tokenizer."""
_VERBS = {Action.BUY: "buy", Action.SELL: "sell", Action.HOLD: "hold"}


class ExpertConfig(BaseModel):
    """What the expert reads and how it decides."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    read_tool: str = "get_news_data"
    read_value: str = Field(default="mean_sentiment", description="summary entry of read_tool's result it decides on")
    threshold: float = Field(default=0.1, ge=0, description="BUY above it, SELL below its negative, else HOLD")
    randomise: bool = False
    terse: bool = Field(default=False, description="thinks that only name the call, and a fixed one before the answer")
    seed: int = 0


def summary_values(text: str) -> dict[str, float]:
    """The numbers of a rendered tool result's summary line, either rendering (entries that are
    not plain numbers, abbreviated ones included, are left out)."""
    values = {}
    for key, value in summary_entries(text).items():
        try:
            values[key] = float(value)
        except ValueError:
            continue
    return values


def _restate(exchange: ToolExchange) -> str:
    """One sentence on what a result said: its summary, else its first line."""
    values = summary_values(exchange.response)
    said = ", ".join(f"{k} {v:g}" for k, v in values.items()) or exchange.response.split("\n", 1)[0]
    return f"{exchange.call.name} says: {said}."


class ScriptedExpert:
    """The expert for one protocol (see the module docstring)."""

    def __init__(self, protocol: Protocol, config: ExpertConfig | None = None):
        self.protocol = protocol
        self.config = config or ExpertConfig()
        if self.config.read_tool not in protocol.tools:
            raise ValueError(f"the expert reads {self.config.read_tool}, which protocol {protocol.name} does not offer")

    def _rng(self, episode: Episode) -> np.random.Generator:
        """The episode's own random stream: from SHA-256 of (seed, ticker, date)."""
        key = f"{self.config.seed}|{episode.ticker}|{episode.date}".encode()
        return np.random.default_rng(int.from_bytes(hashlib.sha256(key).digest()[:8], "little"))

    def plan(self, episode: Episode) -> list[str]:
        """The tools it calls, in order, within the protocol's call and turn budgets."""
        required = list(self.protocol.required_tools)
        budget = min(self.protocol.max_tool_calls, self.protocol.max_turns - 1)
        if not self.config.randomise:
            tools = required + [self.config.read_tool]
        else:
            others = [name for name in self.protocol.tools if name not in required]
            rng = self._rng(episode)
            count = int(rng.integers(1, max(budget - len(required), 1) + 1))
            tools = required + [others[i] for i in rng.permutation(len(others))[:count]]
        return list(dict.fromkeys(tools))[:budget]

    def decide(self, episode: Episode) -> tuple[Action, str]:
        """The answer and the sentence that justifies it."""
        if self.config.randomise:
            action = list(Action)[int(self._rng(episode).integers(len(Action)))]
            return action, f"Weighing what I read, I {_VERBS[action]}."
        reads = [e for e in episode.exchanges if e.call.name == self.config.read_tool]
        value = summary_values(reads[-1].response).get(self.config.read_value) if reads else None
        if value is None:
            return Action.HOLD, f"{self.config.read_tool} gave no {self.config.read_value}, so I hold."
        threshold = self.config.threshold
        action = Action.BUY if value > threshold else Action.SELL if value < -threshold else Action.HOLD
        return action, f"The {self.config.read_value} {value:+.3f} against ±{threshold:g} says {_VERBS[action]}."

    def next_text(self, episode: Episode) -> str:
        """The next assistant turn of `episode`: a think, then the next planned call or the answer."""
        said = _restate(episode.exchanges[-1]) if episode.exchanges else f"Deciding on {episode.ticker} at {episode.date}."
        plan = self.plan(episode)
        step = len(episode.turns)
        if step < len(plan):
            tool = plan[step]
            arguments = {"ticker": episode.ticker} if "ticker" in offered_parameters(self.protocol, tool)["properties"] else {}
            think = f"Next: {tool}." if self.config.terse else f"{said} Next: {tool}."
            return f"{THINK_OPEN}{think}{THINK_CLOSE}\n{render_tool_call(tool, arguments)}"
        action, reason = self.decide(episode)
        think = TERSE_ANSWER_THINK if self.config.terse else f"{said} {reason}"
        return f"{THINK_OPEN}{think}{THINK_CLOSE}\n{ANSWER_OPEN}{action.value}{ANSWER_CLOSE}"
