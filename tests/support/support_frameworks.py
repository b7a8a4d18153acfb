"""Frameworks used by the tests to drive the runner into its corners."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from frameworks.base import TradingFramework
from frameworks.baselines.random_policy import RandomPolicy
from market.data import MarketData
from market.decision import Action, Decision
from market.sources.embedded import load_embedded


class SlowRandom(RandomPolicy):
    """The random policy, `delay_s` seconds per decision (room to kill a run mid-way)."""

    def __init__(self, delay_s: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        self.delay_s = delay_s

    def decide(self, batch):
        time.sleep(self.delay_s * len(batch))
        return super().decide(batch)


class FailsOnMondays(TradingFramework):
    """BUY, except that it raises for any batch holding a Monday."""

    def decide(self, batch):
        if any(ctx.date.dayofweek == 0 for ctx in batch):
            raise RuntimeError("no decisions on Mondays")
        return [Decision(action=Action.BUY) for _ in batch]


class ExposureTargeter(TradingFramework):
    """Stateful: alternates between fully long and flat, using the portfolio it is shown."""

    stateful = True
    needs_portfolio = True

    def __init__(self):
        self.seen_exposures: list[float] = []

    def decide(self, batch):
        decisions = []
        for ctx in batch:
            assert ctx.portfolio is not None
            self.seen_exposures.append(ctx.portfolio.exposure)
            decisions.append(Decision(action=Action.SELL if ctx.portfolio.shares > 0 else Action.BUY))
        return decisions


class PromptedRule(TradingFramework):
    """The action written in a prompt file, every day; its fingerprint hashes the file, so an
    edited prompt under an unchanged config is a changed input."""

    def __init__(self, prompt: str):
        self.prompt = Path(prompt)

    def fingerprint(self) -> str:
        return hashlib.sha256(self.prompt.read_bytes()).hexdigest()

    def decide(self, batch):
        action = Action(self.prompt.read_text().strip())
        return [Decision(action=action) for _ in batch]


HOSTILE_TURNS = (
    '<think>Reading <script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned = 2"></think>\n'
    '<tool_call>{"name": "get_market_data", "arguments": {"ticker": "<script>window.__pwned = 3</script>"}}</tool_call>',
    "<think>Done: <b>bold?</b></think>\n<answer>HOLD</answer>",
)
"""What `HostileText` "writes": markup and scripts in its reasoning and in a tool argument."""


class HostileText(TradingFramework):
    """A single-agent episode of the compact protocol whose turns are `HOSTILE_TURNS`, parsed by
    the real parser and answered by the real tools: a model that writes HTML and scripts."""

    def decide(self, batch):
        from expert_episodes import step_once

        from single_agent.episode import Episode
        from single_agent.offered_tools import protocol_toolset
        from single_agent.protocol import load_protocol

        protocol = load_protocol("compact")
        decisions = []
        for ctx in batch:
            episode = Episode.start(protocol, ctx.ticker, ctx.date)
            toolset = protocol_toolset(protocol, ctx.view)
            for text in HOSTILE_TURNS:
                step_once(episode, text, protocol, toolset)
            episode.end_reason = "answer"
            decisions.append(episode.decision())
        return decisions


class InconsistentMarket(MarketData):
    """A market whose bar lookup fails with a plain ValueError: an internal fault, not bad input."""

    def frame(self, ticker: str):
        raise ValueError(f"internal invariant broken while reading {ticker}")


def inconsistent_market(tickers: list[str]) -> InconsistentMarket:
    """The embedded market of `tickers`, whose every bar lookup is the fault above."""
    return InconsistentMarket(**vars(load_embedded(tickers)))
