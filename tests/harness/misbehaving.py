"""Frameworks that fail in the ways plugins and LLM frameworks do."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pandas as pd

from frameworks.base import TradingFramework
from market.decision import Action, Decision, Trace


class Flaky(TradingFramework):
    """BUY when `up`; while not, it raises as an LLM client does with nothing listening at its endpoint."""

    def __init__(self, up: bool = False):
        self.up = up
        self.calls = 0

    def decide(self, batch):
        self.calls += len(batch)
        if not self.up:
            raise ConnectionError("All connection attempts failed")
        return [Decision(action=Action.BUY) for _ in batch]


class Endpoint(Flaky):
    """`Flaky`, up while the file `endpoint` exists (the same config before and after the endpoint comes up)."""

    def __init__(self, endpoint: str):
        super().__init__()
        self.endpoint = Path(endpoint)

    def decide(self, batch):
        self.up = self.endpoint.exists()
        return super().decide(batch)


class Reporting(TradingFramework):
    """Catches its own failure, as the debate does: HOLD with the error in the trace while not `up`, else SELL."""

    def __init__(self, up: bool = False):
        self.up = up

    def decide(self, batch):
        if self.up:
            return [Decision(action=Action.SELL) for _ in batch]
        return [Decision(action=Action.HOLD, trace=Trace(error="LLMCallFailed: connection refused", fallback=True))
                for _ in batch]


class Returns(TradingFramework):
    """Returns `make()` for every context (whatever it is), or `decisions` whole when given."""

    def __init__(self, make=None, decisions=None):
        self.make = make
        self.decisions = decisions

    def decide(self, batch):
        return self.decisions if self.decisions is not None else [self.make() for _ in batch]


class ConstantTarget(TradingFramework):
    """The same target exposure every day (NaN and inf included: a plugin's arithmetic gone wrong)."""

    def __init__(self, target: float):
        self.target = target

    def decide(self, batch):
        return [Decision(target=self.target) for _ in batch]


class Constructed(TradingFramework):
    """`Decision.model_construct(action=action)` every day: pydantic's validation skipped."""

    def __init__(self, action: str):
        self.action = action

    def decide(self, batch):
        return [Decision.model_construct(action=self.action, target=None, confidence=None, trace=Trace()) for _ in batch]


class Hangs(TradingFramework):
    """BUY, except that a decision on one of `hang_on` dates never returns (until `release` is set)."""

    def __init__(self, hang_on=(), limit_s: float | None = None):
        self.hang_on = {pd.Timestamp(date) for date in hang_on}
        self.limit_s = limit_s
        self.release = threading.Event()
        self.threads: set[str] = set()

    def decision_timeout_s(self):
        return self.limit_s

    def decide(self, batch):
        self.threads.add(threading.current_thread().name)
        if any(context.date in self.hang_on for context in batch):
            self.release.wait()
        return [Decision(action=Action.BUY) for _ in batch]


class Stateful(TradingFramework):
    """Stateful, shown the portfolio: BUY when flat, else SELL; raises while not `up` on `fail_on` dates."""

    stateful = True
    needs_portfolio = True

    def __init__(self, fail_on=(), up: bool = False):
        self.fail_on = set(fail_on)
        self.up = up
        self.decided: list = []

    def decide(self, batch):
        if not self.up and any(context.date in self.fail_on for context in batch):
            raise RuntimeError("boom")
        self.decided += [context.date for context in batch]
        return [Decision(action=Action.BUY if context.portfolio.shares == 0 else Action.SELL) for context in batch]


class Gate(TradingFramework):
    """BUY once the file `opens` exists (a run held open until the test lets it finish; at most 120 s)."""

    def __init__(self, opens: str):
        self.opens = Path(opens)

    def decide(self, batch):
        deadline = time.monotonic() + 120
        while not self.opens.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return [Decision(action=Action.BUY) for _ in batch]
