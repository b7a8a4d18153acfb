"""The episode runner: frameworks × tickers × seeds over a test window.

An episode is one framework trading one ticker with one seed over the window. For every bar
of the window the framework decides on a point-in-time `MarketView`; decisions go through the
journal and then the execution simulator.

- Stateless frameworks are fanned out: every (ticker, date, seed) context of the framework
  that the journal does not already hold is handed over in batches of `batch_size`, so a
  batched LLM backend sees large batches.
- Stateful frameworks are stepped bar by bar, all their episodes in lock-step (one batch per
  bar index), and see the portfolio at the close of the decision bar if they ask for it.
- Deterministic frameworks run the first seed only; stochastic ones run every seed.
- A framework that raises, returns the wrong number of decisions or a decision of the wrong
  kind gets a recorded failure and the fallback decision (HOLD, or flat in target mode) for
  the contexts concerned; the run goes on.
- Journaled decisions are reused only under the same journal key: the same framework config,
  framework fingerprint and data (`harness.decision_inputs`). When a framework's inputs changed
  since decisions it journaled, one warning line names what changed and its decisions are
  made afresh; the old ones stay in the journal (restoring the inputs reuses them again).
- A ticker whose bars start after or end before the test window (by more than a few holidays)
  is traded over the bars it has, with one warning line; a window of fewer than 2 bars (no
  return to measure) is an error.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd
from tqdm.auto import tqdm

from core.errors import ConfigError
from harness.decision_inputs import DecisionInputs, data_fingerprint
from harness.execution import EpisodeResult, ExecutionConfig, Simulator
from harness.journal import Journal, JournalEntry
from harness.schema import EpisodeKey
from market.data import MarketData
from market.decision import Action, Decision, DecisionContext, Trace
from market.view import MarketView

MIN_WINDOW_BARS = 2
"""Bars an episode needs: one daily return."""

UNCOVERED_DAYS_TOLERATED = 3
"""Business days at either end of the test window that a ticker's bars may miss without a
warning: exchange holidays (a window starting on New Year's Day is covered)."""


class DecisionMaker(Protocol):
    """What the runner needs of a framework (see `frameworks.base.TradingFramework`)."""

    stateful: bool
    needs_portfolio: bool
    stochastic: bool

    def decide(self, batch: list[DecisionContext]) -> list[Decision]: ...


@dataclass(frozen=True)
class FrameworkEntry:
    """A framework instance under its run name, the hash of its resolved config and its
    fingerprint (`TradingFramework.fingerprint()`)."""

    name: str
    framework: DecisionMaker
    config_hash: str
    fingerprint: str = ""


@dataclass(frozen=True)
class RunSpec:
    """Which episodes to run and how to execute them."""

    tickers: list[str]
    seeds: list[int]
    start: pd.Timestamp
    end: pd.Timestamp
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    batch_size: int = 256

    def __post_init__(self) -> None:
        for name, values, example in (("tickers", self.tickers, "NVDA"), ("seeds", self.seeds, "0")):
            if not values:
                raise ConfigError(f"{name}: empty; name at least one, e.g. {name}=[{example}]")
            repeated = sorted({str(v) for v in values if values.count(v) > 1})
            if repeated:
                raise ConfigError(f"{name}: {', '.join(repeated)} named more than once")
        if self.batch_size < 1:
            raise ConfigError(f"batch_size: {self.batch_size}; it must be at least 1")


@dataclass
class RunResult:
    """Every episode's simulation and every decision, plus what was computed vs reused."""

    episodes: dict[EpisodeKey, EpisodeResult]
    decisions: list[JournalEntry]
    made: int = 0
    reused: int = 0
    failed: int = 0
    journal_keys: dict[str, str] = field(default_factory=dict)
    """Framework name -> the journal key its decisions are stored under."""


ToolsetFactory = Callable[[MarketView], Any]


def warn_on_stderr(line: str) -> None:
    """Print `line` as one `warning:` line on stderr."""
    print(f"warning: {line}", file=sys.stderr)


class EpisodeRunner:
    """Runs a `RunSpec` for several frameworks on one market, journaling every decision.

    `warn` receives each warning as one line (a window the data does not cover, decisions
    made afresh because their inputs changed).
    """

    def __init__(self, data: MarketData, spec: RunSpec, journal: Journal,
                 toolset_factory: ToolsetFactory | None = None, progress: bool = True,
                 warn: Callable[[str], None] = warn_on_stderr):
        self.data = data
        self.spec = spec
        self.journal = journal
        self.toolset_factory = toolset_factory
        self.progress = progress
        self.warn = warn
        self._days = {t: data.trading_days(t, spec.start, spec.end) for t in spec.tickers}
        for ticker in spec.tickers:
            self._check_window(ticker)
        self.data_fingerprint = data_fingerprint(data, spec.end)

    @property
    def traded_windows(self) -> dict[str, tuple[pd.Timestamp, pd.Timestamp]]:
        """Ticker -> (first, last) bar date traded in the test window."""
        return {ticker: (days[0], days[-1]) for ticker, days in self._days.items()}

    def _check_window(self, ticker: str) -> None:
        """Refuse a window of fewer than `MIN_WINDOW_BARS` bars; warn when the data covers only
        part of it (more than `UNCOVERED_DAYS_TOLERATED` business days before its first or after
        its last bar)."""
        days, start, end = self._days[ticker], self.spec.start, self.spec.end
        window = f"the test window {start.date()} .. {end.date()}"
        if len(days) < MIN_WINDOW_BARS:
            raise ConfigError(f"{self.data.origin.get(ticker, ticker)}: {window} holds only {len(days)} bar of "
                              f"{ticker} ({days[0].date()}); a run needs at least {MIN_WINDOW_BARS}")
        gaps = []
        if len(pd.bdate_range(start, days[0] - pd.Timedelta(days=1))) > UNCOVERED_DAYS_TOLERATED:
            gaps.append(f"starts {days[0].date()}, after")
        if len(pd.bdate_range(days[-1] + pd.Timedelta(days=1), end)) > UNCOVERED_DAYS_TOLERATED:
            gaps.append(f"ends {days[-1].date()}, before")
        if gaps:
            self.warn(f"{ticker}: data {' and '.join(gaps)} {window}; traded {days[0].date()} .. "
                      f"{days[-1].date()} ({len(days)} bars)")

    def run(self, frameworks: list[FrameworkEntry]) -> RunResult:
        """Every episode of every framework; journaled decisions with the same inputs are reused.

        Start-up objects (modules, data, models) are frozen out of the garbage collector while
        frameworks decide: otherwise the first full collection, which scans all of them, is
        timed as part of whichever batch triggers it (0.5 ms per decision on the first batch
        of the quick suite, 0.003 ms on the next).
        """
        result = RunResult(episodes={}, decisions=[])
        gc.collect()
        gc.freeze()
        try:
            for entry in frameworks:
                self._run_framework(entry, result)
        finally:
            gc.unfreeze()
        return result

    def _run_framework(self, entry: FrameworkEntry, result: RunResult) -> None:
        inputs = DecisionInputs(entry.config_hash, entry.fingerprint, self.data_fingerprint)
        self.journal.record_inputs(entry.name, inputs)
        result.journal_keys[entry.name] = inputs.key
        journaled = self.journal.load(inputs.key)
        seeds = self.spec.seeds if entry.framework.stochastic else self.spec.seeds[:1]
        episodes = [(ticker, seed) for ticker in self.spec.tickers for seed in seeds]
        keys = [(t, d, s) for t, s in episodes for d in self._days[t]]
        missing = [key for key in keys if key not in journaled]
        result.reused += len(keys) - len(missing)
        previous = self.journal.previous_inputs(entry.name, inputs.key) if missing else None
        if previous is not None:
            before, count = previous
            self.warn(f"{entry.name}: {count} journaled decisions were made on other inputs (changed: "
                      f"{', '.join(inputs.changes_from(before))}); deciding afresh, the old ones stay in the journal")
        bar = tqdm(total=len(missing), desc=entry.name, unit="decision", disable=not self.progress, leave=False)
        if entry.framework.stateful:
            self._run_stateful(entry, episodes, journaled, result, bar)
        else:
            self._run_stateless(entry, episodes, missing, journaled, result, bar)
        bar.close()

    def _context(self, entry: FrameworkEntry, ticker: str, date: pd.Timestamp, seed: int,
                 portfolio=None) -> DecisionContext:
        view = MarketView(self.data, date)
        tools = self.toolset_factory(view) if self.toolset_factory else None
        shown = portfolio if entry.framework.needs_portfolio else None
        return DecisionContext(ticker=ticker, date=date, view=view, seed=seed, tools=tools,
                               portfolio=shown)

    def _simulator(self, ticker: str) -> Simulator:
        return Simulator(self.data.frame(ticker).loc[self._days[ticker]], self.spec.execution)

    def _run_stateless(self, entry, episodes, missing, journaled, result, bar) -> None:
        for lo in range(0, len(missing), self.spec.batch_size):
            contexts = [self._context(entry, t, d, s) for t, d, s in missing[lo:lo + self.spec.batch_size]]
            fresh = self._decide(entry, contexts, result)
            journaled.update({(e.ticker, e.date, e.seed): e for e in fresh})
            bar.update(len(fresh))
        for ticker, seed in episodes:
            simulator = self._simulator(ticker)
            for date in self._days[ticker]:
                journal_entry = journaled[(ticker, date, seed)]
                result.decisions.append(journal_entry)
                simulator.submit(journal_entry.decision)
            result.episodes[EpisodeKey(entry.name, ticker, seed)] = simulator.result()

    def _run_stateful(self, entry, episodes, journaled, result, bar) -> None:
        simulators = {(t, s): self._simulator(t) for t, s in episodes}
        while active := [(t, s) for (t, s), sim in simulators.items() if not sim.done]:
            pending = [(t, s) for t, s in active if (t, simulators[t, s].date, s) not in journaled]
            contexts = [self._context(entry, t, simulators[t, s].date, s, simulators[t, s].portfolio)
                        for t, s in pending]
            for lo in range(0, len(contexts), self.spec.batch_size):
                fresh = self._decide(entry, contexts[lo:lo + self.spec.batch_size], result)
                journaled.update({(e.ticker, e.date, e.seed): e for e in fresh})
                bar.update(len(fresh))
            for t, s in active:
                journal_entry = journaled[(t, simulators[t, s].date, s)]
                result.decisions.append(journal_entry)
                simulators[t, s].submit(journal_entry.decision)
        for (t, s), simulator in simulators.items():
            result.episodes[EpisodeKey(entry.name, t, s)] = simulator.result()

    def _decide(self, entry: FrameworkEntry, contexts: list[DecisionContext],
                result: RunResult) -> list[JournalEntry]:
        """Decide a batch, isolate failures, journal the decisions in one transaction."""
        started = time.perf_counter()
        decisions = self._decide_isolating_failures(entry.framework, contexts)
        wall_s = (time.perf_counter() - started) / max(len(contexts), 1)
        entries = [
            JournalEntry(framework=entry.name, key=result.journal_keys[entry.name], ticker=c.ticker,
                         date=c.date, seed=c.seed, decision=d, wall_s=wall_s)
            for c, d in zip(contexts, decisions)
        ]
        self.journal.append(entries)
        result.made += len(entries)
        result.failed += sum(1 for d in decisions if d.trace.error is not None)
        return entries

    def _decide_isolating_failures(self, framework: DecisionMaker,
                                   contexts: list[DecisionContext]) -> list[Decision]:
        try:
            decisions = framework.decide(contexts)
            if len(decisions) != len(contexts):
                raise RuntimeError(f"returned {len(decisions)} decisions for {len(contexts)} contexts")
        except Exception as error:  # noqa: BLE001 - a framework's failure must not end the run
            if len(contexts) > 1:
                return [d for c in contexts for d in self._decide_isolating_failures(framework, [c])]
            return [self._fallback(f"{type(error).__name__}: {error}")]
        return [self._checked(d) for d in decisions]

    def _checked(self, decision: Decision) -> Decision:
        """The decision itself if the execution mode can fill it, else a recorded fallback."""
        discrete = self.spec.execution.mode == "discrete"
        if not isinstance(decision, Decision):
            return self._fallback(f"framework returned {type(decision).__name__}, not a Decision")
        if discrete and decision.action is None:
            return self._fallback("a target decision in discrete execution mode")
        if not discrete and decision.target is None:
            return self._fallback("an action decision in target execution mode")
        return decision

    def _fallback(self, error: str) -> Decision:
        if self.spec.execution.mode == "discrete":
            return Decision(action=Action.HOLD, trace=Trace(error=error))
        return Decision(target=0.0, trace=Trace(error=error))
