"""A killed and resumed run rebuilds FinAgent's memory from the journal and ends with the same decisions."""

from __future__ import annotations

import pytest
from finagent_runs import make_agent, run

from frameworks.finagent import FinAgent
from llm_backends.build import engine_config


class Killed(BaseException):
    """Ends the run like a kill: the runner isolates `Exception`s, not this."""


class DiesOnDay(FinAgent):
    """FinAgent that is killed when asked for its `day`-th batch of decisions."""

    def __init__(self, day: int, **config):
        super().__init__(**config)
        self.day, self.calls = day, 0

    def decide(self, batch):
        self.calls += 1
        if self.calls == self.day:
            raise Killed
        return super().decide(batch)


def view(decisions):
    return [(e.ticker, e.date, e.decision.action, e.decision.trace.messages, e.decision.trace.extra) for e in decisions]


@pytest.mark.slow
def test_a_resumed_run_rebuilds_the_memory_and_decides_as_the_uninterrupted_one(market, tmp_path):
    whole = make_agent()
    reference = run(market, whole, tmp_path / "whole.sqlite")
    dying = DiesOnDay(3, llm=engine_config("tiny"))
    with pytest.raises(Killed):
        run(market, dying, tmp_path / "resumed.sqlite")
    resumed_agent = make_agent()
    resumed = run(market, resumed_agent, tmp_path / "resumed.sqlite")
    assert resumed.reused == 4 and resumed.made == len(reference.decisions) - 4  # 2 days x 2 tickers journaled
    assert view(resumed.decisions) == view(reference.decisions)
    for ticker in ("ALFA", "BRVO"):
        assert resumed_agent.pipeline.memory.entries(ticker, 0) == whole.pipeline.memory.entries(ticker, 0)
    # the resumed decisions read what the journaled ones wrote: without recall their prompts would differ
    later = [e for e in resumed.decisions if e.date > resumed.decisions[3].date]
    assert any(dates for e in later for dates in e.decision.trace.extra["retrieved"].values())
