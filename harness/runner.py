"""The episode runner: frameworks × episodes × seeds over a test window.

An episode is one framework with one seed over the window on one of the task's episodes
(`harness.tasks`): a ticker (trading, futures) or a universe (portfolio). For every bar of the
window the framework decides on a point-in-time `MarketView`; decisions go through the journal
(keyed by episode name, bar stamp and seed) and then the task's simulator.

- Stateless frameworks are fanned out: every (ticker, date, seed) context of the framework
  that the journal does not already hold is handed over in batches of `batch_size` (or fewer,
  when the framework prefers: `harness.batch_size`), so a batched LLM backend sees large batches.
- Stateful frameworks are stepped bar by bar, all their episodes in lock-step (one batch per
  bar index), and see the portfolio at the close of the decision bar if they ask for it. A
  journaled decision reused in place of deciding is handed to the framework's `recall`
  (`TradingFramework.recall`), so that a resumed run rebuilds the state it left.
- Deterministic frameworks run the first seed only; stochastic ones run every seed.
- A framework that raises, takes longer than its per-decision time limit, returns the wrong
  number of decisions or a decision that is not valid for the task (`harness.decision_checks`)
  gets a recorded failure (`harness.failures`: kind and a message naming framework, ticker,
  date and seed) and the task's fallback decision (HOLD, or flat in target mode) for the contexts
  concerned; a failing batch is decided again one context at a time; the run goes on.
- The time limit (`RunSpec.decision_timeout_s`): `auto` asks each framework
  (`decision_timeout_s()`: none for local engines, set by frameworks whose decisions wait on
  an HTTP engine and by plugins that opt in); a number applies to every framework; None: no
  limit. A call deciding n contexts may take n times the limit. A timed-out call is abandoned
  on its thread (`harness.time_limit`).
- Failed decisions are journaled with their failure and count as failed in every run that
  reads them. By default (`retry_failed`) a rerun decides them again; otherwise they are kept.
  A journaled decision that does not validate for the task is named in one warning line and
  decided again. For a stateful framework, every later decision of an episode is decided
  again after one that is (it followed from the state the earlier one left).
- Journaled decisions are reused only under the same journal key: the same framework config,
  framework fingerprint and data (`harness.decision_inputs`). When a framework's inputs changed
  since decisions it journaled, one warning line names what changed and its decisions are
  made afresh; the old ones stay in the journal (restoring the inputs reuses them again).
- With an overlay (`harness.overlay`, the `overlay` config) each episode's simulator sits behind an
  `OverlayBook`: the journal keeps the framework's decisions, the book executes what the overlay
  makes of them and records both (`RunResult.overlay_records`); the drift monitor's episodes are
  named in one warning line per framework.
- An episode whose bars start after or end before the test window (by more than a few
  holidays, or bars of the calendar: `Calendar.expected_bars`) is traded over the bars it has,
  with one warning line; a window of fewer than 2 bars (no return to measure) is an error.
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
from harness.batch_size import stateless_batch_size
from harness.decision_checks import stored_form, task_problem
from harness.decision_inputs import DecisionInputs, data_fingerprint
from harness.execution import EpisodeResult, ExecutionConfig
from harness.failures import Failure, FailureKind, decision_place
from harness.journal import Journal, JournalEntry, JournalRead
from harness.overlay import (
    OverlayBook,
    OverlayConfig,
    baseline_decisions,
    drift_warning,
)
from harness.resources import return_freed_memory
from harness.schema import EpisodeKey
from harness.tasks.base import Episode, Task, TaskSimulator
from harness.tasks.trading import TradingTask
from harness.time_limit import TimedOut, call_within
from market.data import MarketData
from market.decision import Decision, DecisionContext
from market.view import MarketView

MIN_WINDOW_BARS = 2
"""Bars an episode needs: one daily return."""

INVALID_ROWS_NAMED = 3
"""Journaled rows that do not validate named in the warning line (the rest are counted)."""

UNCOVERED_DAYS_TOLERATED = 3
"""Bars of the calendar (business days for daily exchange bars) at either end of the test
window that an episode's bars may miss without a warning: exchange holidays (a window starting
on New Year's Day is covered)."""


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
class DeferredEntry:
    """A framework built when its turn comes, from what the run has decided so far (the compute-matched
    self-consistency row: `frameworks.compute_match`); `build` returns None when it cannot be built."""

    name: str
    build: Callable[["RunResult"], FrameworkEntry | None]


@dataclass(frozen=True)
class RunSpec:
    """Which episodes to run and how to execute them.

    `task` (`harness.tasks`) makes the episodes of `tickers` and fills their decisions; None:
    the trading task under `execution`."""

    tickers: list[str]
    seeds: list[int]
    start: pd.Timestamp
    end: pd.Timestamp
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    batch_size: int = 256
    retry_failed: bool = True
    """Decide journaled failures again (False: keep them, counted as failed)."""
    decision_timeout_s: float | str | None = "auto"
    """Seconds one decision may take: "auto" (each framework's own), a number for all, None for no limit."""
    task: Task | None = None

    def __post_init__(self) -> None:
        if self.task is None:
            object.__setattr__(self, "task", TradingTask(self.execution))
        for name, values, example in (("tickers", self.tickers, "NVDA"), ("seeds", self.seeds, "0")):
            if not values:
                raise ConfigError(f"{name}: empty; name at least one, e.g. {name}=[{example}]")
            repeated = sorted({str(v) for v in values if values.count(v) > 1})
            if repeated:
                raise ConfigError(f"{name}: {', '.join(repeated)} named more than once")
        if self.batch_size < 1:
            raise ConfigError(f"batch_size: {self.batch_size}; it must be at least 1")
        if not isinstance(self.retry_failed, bool):
            raise ConfigError(f"retry_failed: {self.retry_failed!r}; it must be true or false")
        limit = self.decision_timeout_s
        number = isinstance(limit, (int, float)) and not isinstance(limit, bool)
        if not (limit is None or limit == "auto" or (number and 0 < limit < float("inf"))):
            raise ConfigError(f"decision_timeout_s: {limit!r}; it must be auto, null or a positive number of seconds")


@dataclass
class FailureCounts:
    """One framework's failed decisions in a run: all of them, those reused from the journal as
    they were, and journaled failures decided again (whatever the new attempt gave)."""

    failed: int = 0
    reused: int = 0
    retried: int = 0


@dataclass
class RunResult:
    """Every episode's simulation and every decision, plus what was computed vs reused."""

    episodes: dict[EpisodeKey, EpisodeResult]
    decisions: list[JournalEntry]
    made: int = 0
    reused: int = 0
    failed: int = 0
    failures_reused: int = 0
    failures_retried: int = 0
    journal_keys: dict[str, str] = field(default_factory=dict)
    """Framework name -> the journal key its decisions are stored under."""
    failures: dict[str, FailureCounts] = field(default_factory=dict)
    """Framework name -> its failure counts."""
    overlay_records: list[dict] = field(default_factory=list)
    """With an overlay: one row per decision (`harness.overlay.book`), with framework, ticker and seed."""
    entries: list[FrameworkEntry] = field(default_factory=list)
    """The frameworks that ran, in order (deferred ones as they were built)."""


ToolsetFactory = Callable[[MarketView], Any]


def release_memory(framework: DecisionMaker) -> None:
    """The framework's `release_memory()` (`frameworks.base.TradingFramework`), where it has one: it has
    decided every episode, and the frameworks after it run in the memory it frees."""
    release = getattr(framework, "release_memory", None)
    if callable(release):
        release()


def warn_on_stderr(line: str) -> None:
    """Print `line` as one `warning:` line on stderr."""
    print(f"warning: {line}", file=sys.stderr)


class EpisodeRunner:
    """Runs a `RunSpec` for several frameworks on one market, journaling every decision.

    `warn` receives each warning as one line (a window the data does not cover, decisions
    made afresh because their inputs changed). `overlay`: the risk overlay executed around every
    framework (None or all parts off: none); `baseline`: its cold start's baseline framework.
    """

    def __init__(self, data: MarketData, spec: RunSpec, journal: Journal,
                 toolset_factory: ToolsetFactory | None = None, progress: bool = True,
                 warn: Callable[[str], None] = warn_on_stderr, overlay: OverlayConfig | None = None,
                 baseline: DecisionMaker | None = None):
        self.overlay = overlay if overlay is not None and overlay.enabled else None
        if self.overlay is not None and self.overlay.cold_start.enabled and baseline is None:
            raise ConfigError("overlay.cold_start.baseline is not set: add +framework@overlay.cold_start.baseline=buy_and_hold")
        self.baseline = baseline
        self.data = data
        self.spec = spec
        self.journal = journal
        self.toolset_factory = toolset_factory
        self.progress = progress
        self.warn = warn
        self.task: Task = spec.task
        if self.overlay is not None and self.task.name != "trading":
            raise ConfigError(f"overlay: the risk overlays wrap the trading task only, not task={self.task.name}; "
                              "run it with overlay=disabled")
        self._episodes: dict[str, Episode] = {e.name: e for e in self.task.episodes(data, spec.tickers, spec.start, spec.end)}
        self._days = {name: episode.times for name, episode in self._episodes.items()}
        for name in self._episodes:
            self._check_window(name)
        self.data_fingerprint = data_fingerprint(data, spec.end)

    @property
    def episode_names(self) -> list[str]:
        """The episodes' names (tickers, or universes), in the task's order."""
        return list(self._episodes)

    @property
    def traded_windows(self) -> dict[str, tuple[pd.Timestamp, pd.Timestamp]]:
        """Episode name -> (first, last) bar stamp traded in the test window."""
        return {name: (days[0], days[-1]) for name, days in self._days.items()}

    def _check_window(self, name: str) -> None:
        """Refuse a window of fewer than `MIN_WINDOW_BARS` bars; warn when the data covers only
        part of it (more than `UNCOVERED_DAYS_TOLERATED` bars of the calendar before its first or
        after its last bar)."""
        days, start, end = self._days[name], self.spec.start, self.spec.end
        calendar = self.data.calendar
        stamp = (lambda t: t.date()) if calendar.daily else str
        window = f"the test window {start.date()} .. {end.date()}"
        if len(days) < MIN_WINDOW_BARS:
            shown = f" ({stamp(days[0])})" if len(days) else ""
            raise ConfigError(f"{self.data.origin.get(name, name)}: {window} holds only {len(days)} bar of "
                              f"{name}{shown}; a run needs at least {MIN_WINDOW_BARS}")
        step = pd.Timedelta(days=1) if calendar.daily else calendar.frequency
        gaps = []
        if calendar.expected_bars(start, days[0] - step) > UNCOVERED_DAYS_TOLERATED:
            gaps.append(f"starts {stamp(days[0])}, after")
        if calendar.expected_bars(days[-1] + step, end) > UNCOVERED_DAYS_TOLERATED:
            gaps.append(f"ends {stamp(days[-1])}, before")
        if gaps:
            self.warn(f"{name}: data {' and '.join(gaps)} {window}; traded {stamp(days[0])} .. "
                      f"{stamp(days[-1])} ({len(days)} bars)")

    def run(self, frameworks: list[FrameworkEntry | DeferredEntry]) -> RunResult:
        """Every episode of every framework, in order; journaled decisions with the same inputs are reused.
        A `DeferredEntry` is built when its turn comes (skipped when it builds None).

        Start-up objects (modules, data, models) are frozen out of the garbage collector while
        frameworks decide: otherwise the first full collection, which scans all of them, is
        timed as part of whichever batch triggers it (0.5 ms per decision on the first batch
        of the quick suite, 0.003 ms on the next). So is what each framework leaves for the
        rest of the run (its decisions and episodes, about 14 tracked objects per decision),
        after a collection of what it left as garbage: otherwise every later full collection
        scans all decisions so far, a third of the CPU time of 75,600 rule decisions
        (`benchmarks/baseline_speed.py`). Everything is unfrozen when the run ends. Before that
        collection a framework frees what it keeps only to decide faster (`release_memory`), and
        after it the allocator gives what was freed back to the system (`return_freed_memory`).
        """
        result = RunResult(episodes={}, decisions=[])
        gc.collect()
        gc.freeze()
        try:
            for entry in frameworks:
                built = entry.build(result) if isinstance(entry, DeferredEntry) else entry
                if built is None:
                    continue
                result.entries.append(built)
                self._run_framework(built, result)
                release_memory(built.framework)
                gc.collect()
                return_freed_memory()
                gc.freeze()
        finally:
            gc.unfreeze()
        for journal_entry in result.decisions:
            if journal_entry.failure is not None:
                result.failures.setdefault(journal_entry.framework, FailureCounts()).failed += 1
        counts = result.failures.values()
        result.failed = sum(c.failed for c in counts)
        result.failures_reused, result.failures_retried = sum(c.reused for c in counts), sum(c.retried for c in counts)
        return result

    def _run_framework(self, entry: FrameworkEntry, result: RunResult) -> None:
        inputs = DecisionInputs(entry.config_hash, entry.fingerprint, self.data_fingerprint)
        self.journal.record_inputs(entry.name, inputs)
        result.journal_keys[entry.name] = inputs.key
        seeds = self.spec.seeds if entry.framework.stochastic else self.spec.seeds[:1]
        episodes = [(name, seed) for name in self._episodes for seed in seeds]
        keys = [(t, d, s) for t, s in episodes for d in self._days[t]]
        result.failures[entry.name] = FailureCounts()
        journaled = self._reusable(entry, self.journal.read(inputs.key), keys, result)
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
            self._run_stateless(entry, episodes, keys, missing, journaled, result, bar)
        bar.close()
        if self.overlay is not None and (line := drift_warning(entry.name, result.overlay_records, self.overlay.drift)):
            self.warn(line)

    def _reusable(self, entry: FrameworkEntry, read: JournalRead, keys: list[tuple[str, pd.Timestamp, int]],
                  result: RunResult) -> dict[tuple[str, pd.Timestamp, int], JournalEntry]:
        """The journaled decisions among `keys` that this run takes as they are (see the module docstring)."""
        wanted = set(keys)
        invalid = [(row.ticker, row.date, row.seed, row.problem) for row in read.unreadable
                   if (row.ticker, row.date, row.seed) in wanted]
        reusable = {}
        for key in keys:
            journaled = read.entries.get(key)
            if journaled is None:
                continue
            problem = self._problem(journaled.decision, key[0], key[1])
            if problem is None:
                reusable[key] = journaled
            else:
                invalid.append((*key, problem))
        if invalid:
            named = "; ".join(f"{decision_place(entry.name, t, d, s)}: {problem}"
                              for t, d, s, problem in invalid[:INVALID_ROWS_NAMED])
            more = f"; and {len(invalid) - INVALID_ROWS_NAMED} more" if len(invalid) > INVALID_ROWS_NAMED else ""
            self.warn(f"{self.journal.path}: {len(invalid)} journaled decisions under key {result.journal_keys[entry.name]} do not "
                      f"validate and are decided again: {named}{more}")
        failed = [key for key, journaled in reusable.items() if journaled.failure is not None]
        counts = result.failures[entry.name]
        if failed and self.spec.retry_failed:
            counts.retried = len(failed)
            for key in failed:
                del reusable[key]
            self.warn(f"{entry.name}: {len(failed)} journaled failed decisions are decided again (retry_failed=false keeps them)")
        elif failed:
            counts.reused = len(failed)
            self.warn(f"{entry.name}: {len(failed)} journaled failed decisions are kept as they are (retry_failed=false); "
                      "they count as failed")
        if entry.framework.stateful:
            self._drop_after_gaps(entry, reusable, keys)
        return reusable

    def _drop_after_gaps(self, entry: FrameworkEntry, reusable: dict, keys: list[tuple[str, pd.Timestamp, int]]) -> None:
        """Remove from `reusable` every decision of an episode after its first one to be decided (stateful frameworks)."""
        gap: set[tuple[str, int]] = set()
        dropped = 0
        for ticker, date, seed in keys:  # in date order within each episode
            if (ticker, seed) in gap:
                dropped += reusable.pop((ticker, date, seed), None) is not None
            elif (ticker, date, seed) not in reusable:
                gap.add((ticker, seed))
        if dropped:
            self.warn(f"{entry.name}: {dropped} later journaled decisions are decided again as well: a stateful "
                      "framework's decisions follow from the ones before")

    def _context(self, entry: FrameworkEntry, ticker: str, date: pd.Timestamp, seed: int,
                 portfolio=None) -> DecisionContext:
        view = MarketView(self.data, date)
        tools = self.toolset_factory(view) if self.toolset_factory else None
        shown = portfolio if entry.framework.needs_portfolio else None
        episode = self._episodes[ticker]
        universe = episode.instruments if self.task.multi_instrument else ()
        return DecisionContext(ticker=ticker, date=date, view=view, seed=seed, tools=tools,
                               portfolio=shown, universe=universe, pool=self.task.pool(episode, date))

    def _simulator(self, name: str, seed: int) -> TaskSimulator:
        """The episode's simulator, behind the overlay when there is one (the trading task only)."""
        simulator = self.task.simulator(self.data, self._episodes[name])
        if self.overlay is None:
            return simulator
        baseline = None
        if self.overlay.cold_start.enabled:
            days = self._days[name][:self.overlay.cold_start.days]
            baseline = baseline_decisions(self.baseline, self.data, name, list(days), seed, self.spec.execution)
        return OverlayBook(simulator, self.overlay, baseline)

    def _finish(self, entry: FrameworkEntry, ticker: str, seed: int, simulator: TaskSimulator,
                result: RunResult) -> None:
        """Store an episode's result and, behind an overlay, its records."""
        result.episodes[EpisodeKey(entry.name, ticker, seed)] = simulator.result()
        if isinstance(simulator, OverlayBook):
            result.overlay_records.extend({**row, "framework": entry.name, "ticker": ticker, "seed": seed}
                                          for row in simulator.records)

    def _problem(self, decision: object, name: str, date: pd.Timestamp) -> str | None:
        """Why a journaled `decision` (it survived its JSON form) cannot be executed in episode `name` at `date`
        (`harness.decision_checks`, then the task's own scope check)."""
        problem = task_problem(decision, self.task.config)
        return problem if problem is not None else self.task.scope_problem(decision, self._episodes[name], date)

    def _run_stateless(self, entry, episodes, keys, missing, journaled, result, bar) -> None:
        size = stateless_batch_size(entry.framework, self.spec.batch_size, len(missing))
        for lo in range(0, len(missing), size):
            batch = missing[lo:lo + size]
            fresh = self._decide(entry, [self._context(entry, t, d, s) for t, d, s in batch], result)
            journaled.update(zip(batch, fresh))
            bar.update(len(fresh))
        start = 0
        for ticker, seed in episodes:  # `keys` holds each episode's (ticker, date, seed) in date order, in turn
            simulator = self._simulator(ticker, seed)
            end = start + len(self._days[ticker])
            for key in keys[start:end]:
                journal_entry = journaled[key]
                result.decisions.append(journal_entry)
                simulator.submit(journal_entry.decision)
            start = end
            self._finish(entry, ticker, seed, simulator, result)

    def _run_stateful(self, entry, episodes, journaled, result, bar) -> None:
        simulators = {(t, s): self._simulator(t, s) for t, s in episodes}
        recall = getattr(entry.framework, "recall", None)
        while active := [(t, s) for (t, s), sim in simulators.items() if not sim.done]:
            pending = [(t, s) for t, s in active if (t, simulators[t, s].date, s) not in journaled]
            if recall is not None:
                for t, s in active:
                    if (t, s) not in pending:
                        recall(self._context(entry, t, simulators[t, s].date, s, simulators[t, s].portfolio),
                               journaled[(t, simulators[t, s].date, s)].decision)
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
            self._finish(entry, t, s, simulator, result)

    def _decide(self, entry: FrameworkEntry, contexts: list[DecisionContext],
                result: RunResult) -> list[JournalEntry]:
        """Decide a batch, isolate failures, check every decision, journal them in one transaction
        (each checked decision with the JSON text its check read back, so it is serialised once)."""
        started = time.perf_counter()
        outputs = self._decide_isolating_failures(entry.framework, contexts, self._time_limit(entry))
        wall_s = (time.perf_counter() - started) / max(len(contexts), 1)
        key = result.journal_keys[entry.name]
        entries, payloads = [], []
        forms: dict[int, tuple[str | None, str | None]] = {}
        for context, output in zip(contexts, outputs):
            decision, payload, failure = self._checked(entry, context, output, forms)
            entries.append(JournalEntry(framework=entry.name, key=key, ticker=context.ticker, date=context.date,
                                        seed=context.seed, decision=decision, wall_s=wall_s, failure=failure))
            payloads.append(payload)
        self.journal.append(entries, payloads)
        result.made += len(entries)
        return entries

    def _time_limit(self, entry: FrameworkEntry) -> float | None:
        """Seconds one decision of `entry` may take (None: no limit); see the module docstring."""
        if self.spec.decision_timeout_s != "auto":
            return self.spec.decision_timeout_s
        own = getattr(entry.framework, "decision_timeout_s", None)
        return own() if callable(own) else own

    def _decide_isolating_failures(self, framework: DecisionMaker, contexts: list[DecisionContext],
                                   seconds: float | None) -> list[object]:
        """What the framework returned for each context, or the `Failure` of the call that should have
        returned it; a failing batch is decided again one context at a time."""
        try:
            decisions = call_within(None if seconds is None else seconds * len(contexts), framework.decide, contexts)
            if not isinstance(decisions, (list, tuple)) or len(decisions) != len(contexts):
                got = f"{len(decisions)} decisions" if isinstance(decisions, (list, tuple)) else type(decisions).__name__
                raise MalformedBatch(f"returned {got} for {len(contexts)} contexts")
        except Exception as error:  # noqa: BLE001 - a framework's failure must not end the run
            if len(contexts) > 1:
                return [d for c in contexts for d in self._decide_isolating_failures(framework, [c], seconds)]
            if isinstance(error, TimedOut):
                return [Failure(FailureKind.TIMEOUT, str(error))]
            if isinstance(error, MalformedBatch):
                return [Failure(FailureKind.MALFORMED, str(error))]
            return [Failure(FailureKind.RAISED, f"{type(error).__name__}: {error}")]
        return list(decisions)

    def _checked(self, entry: FrameworkEntry, context: DecisionContext, output: object,
                 forms: dict[int, tuple[str | None, str | None]]) -> tuple[Decision, str | None, Failure | None]:
        """The decision to journal and execute for `output`, its JSON text when its check made it (None for a
        fallback), and its failure: a failed call or an invalid decision gets the fallback, a decision whose
        trace reports an error is kept as the framework's own fallback.

        `forms` holds the batch's `stored_form` results by object id: a framework may return one decision
        object for many contexts of a batch (the rules do), and the batch's outputs stay alive while it is
        checked, so an id names one object; the form depends on the object and the task's config only."""
        if isinstance(output, Failure):
            kind, problem = output.kind, output.message
        else:
            form = forms.get(id(output))
            if form is None:
                form = forms[id(output)] = stored_form(output, self.task.config)
            payload, problem = form
            if problem is None:
                problem = self.task.scope_problem(output, self._episodes[context.ticker], context.date)
            if problem is None and output.trace.error is None:
                return output, payload, None
            if problem is None:
                return output, payload, self._failure(entry, context, FailureKind.REPORTED, output.trace.error)
            kind = FailureKind.INVALID
        failure = self._failure(entry, context, kind, problem)
        return self.task.fallback(failure.message), None, failure

    @staticmethod
    def _failure(entry: FrameworkEntry, context: DecisionContext, kind: FailureKind, problem: str) -> Failure:
        """A failure whose message names the decision (formatted here, only when a decision fails)."""
        return Failure(kind, f"{decision_place(entry.name, context.ticker, context.date, context.seed)}: {problem}")


class MalformedBatch(Exception):
    """`decide` returned something other than one decision per context."""
