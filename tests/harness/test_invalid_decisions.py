"""Finding 3: one bad decision (a NaN target, a `model_construct` bypass, an infinite target) was journaled
as it was and broke the run directory for good. Now a framework's output is checked before it is written:
an invalid one is a recorded failure naming framework, ticker and date, with the fallback; the journal never
holds an invalid row, and a row that does not validate on reading is named and decided again."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import ROOT, benchmark_command, support_env
from harness_runs import DAYS, day, on
from misbehaving import Returns

from harness.decision_checks import check_action, check_target, decision_problem
from harness.execution import ExecutionConfig
from harness.failures import FailureKind
from harness.journal import Journal
from market.decision import Action, Decision, Trace

pytestmark = pytest.mark.timeout(120)

HERE = Path(__file__).resolve().parent
DISCRETE, TARGET = ExecutionConfig(), ExecutionConfig(mode="target", allow_short=True, max_leverage=1.0)

INVALID = [
    ("target", lambda: Decision(target=float("nan")), "target nan is not a finite number"),
    ("target", lambda: Decision(target=float("inf")), "target inf is not a finite number"),
    ("target", lambda: Decision(target=1.5), "target 1.5 is outside [-1, 1]"),
    ("target", lambda: Decision(action=Action.BUY), "an action (BUY) in target execution mode, which takes a target exposure"),
    ("discrete", lambda: Decision.model_construct(action="buy ", target=None, confidence=None, trace=Trace()),
     "action 'buy ' is not one of BUY, SELL, HOLD"),
    ("discrete", lambda: Decision.model_construct(action=Action.BUY, target=0.5, confidence=None, trace=Trace()),
     "a target (0.5) in discrete execution mode, which takes an action"),
    ("discrete", lambda: Decision.model_construct(action=None, target=None, confidence=None, trace=Trace()), "no action"),
    ("discrete", lambda: Decision(action=Action.SELL, confidence=float("nan")), "confidence nan is not a finite number"),
    ("discrete", lambda: Decision(action=Action.SELL, trace=Trace(extra={"weights": np.ones(2)})),
     "it cannot be stored and read back: Unable to serialize unknown type: <class 'numpy.ndarray'>"),
    ("discrete", lambda: "BUY", "returned str, not a Decision"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "make", "problem"), INVALID, ids=[problem for _, _, problem in INVALID])
def test_an_invalid_decision_is_a_recorded_failure_and_never_reaches_the_journal(journaled, mode, make, problem):
    result = journaled({"plugin": Returns(make)}, mode=mode)
    entry = day(result, "plugin", 2)
    assert entry.failure.kind is FailureKind.INVALID
    assert entry.failure.message == f"plugin AAA {on(DAYS[2])} seed 0: {problem}"
    fallback = Decision(action=Action.HOLD) if mode == "discrete" else Decision(target=0.0)
    assert (entry.decision.action, entry.decision.target) == (fallback.action, fallback.target)
    assert result.failed == 10
    again = journaled({"plugin": Returns(make)}, mode=mode, retry_failed=False)
    assert (again.reused, again.failed) == (10, 10), "every journaled row reads back as a valid decision"
    with sqlite3.connect(journaled.path) as db:
        for (payload,) in db.execute("SELECT decision FROM decisions"):
            assert decision_problem(Decision.model_validate_json(payload), TARGET if mode == "target" else DISCRETE) is None


def test_a_short_target_without_shorts_is_outside_the_cap():
    long_only = ExecutionConfig(mode="target", allow_short=False, max_leverage=2.0)
    assert check_target(Decision(target=-0.5), long_only) == "target -0.5 is outside [0, 2] (execution.allow_short is false)"
    assert check_target(Decision(target=2.0), long_only) is None and check_action(Decision(action=Action.HOLD), DISCRETE) is None


@pytest.mark.slow
def test_a_wrong_number_of_decisions_is_a_malformed_failure_for_each_context(journaled):
    """A batch answered wrongly is decided again one context at a time: each of those calls fails the same way."""
    result = journaled({"empty": Returns(decisions=[])})
    assert {e.failure.kind for e in result.decisions} == {FailureKind.MALFORMED}
    assert day(result, "empty", 0).failure.message == f"empty AAA {on(DAYS[0])} seed 0: returned 0 decisions for 1 contexts"
    nothing = journaled({"none": Returns(decisions=3)})
    assert day(nothing, "none", 9).failure.message.endswith("returned int for 1 contexts") and nothing.failed == 10


def unchained_journal(path, rows):
    """A journal as TradeDuel wrote it before rows were hash-chained: `rows` of (date, decision JSON)."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE decisions (key TEXT NOT NULL, framework TEXT NOT NULL, ticker TEXT NOT NULL, "
                   "date TEXT NOT NULL, seed INTEGER NOT NULL, wall_s REAL NOT NULL, decision TEXT NOT NULL, "
                   "PRIMARY KEY (key, ticker, date, seed))")
        db.execute("CREATE TABLE inputs (key TEXT PRIMARY KEY, framework TEXT NOT NULL, inputs TEXT NOT NULL)")
        db.executemany("INSERT INTO decisions VALUES (?, 'plugin', 'AAA', ?, 0, 0.0, ?)",
                       [(key, f"{date:%Y-%m-%d %H:%M:%S}", payload) for key, date, payload in rows])


@pytest.mark.slow
def test_a_journal_poisoned_by_a_nan_target_is_named_and_decided_again_not_fatal(journaled):
    """The row the earlier TradeDuel wrote for a NaN target (`action: null, target: null`) beside valid ones."""
    first = journaled({"plugin": Returns(lambda: Decision(target=0.5))}, mode="target")
    key = first.journal_keys["plugin"]
    journaled.path.unlink()
    poisoned = json.dumps({"action": None, "target": None, "confidence": None, "trace": {}})
    valid = Decision(target=0.5).model_dump_json()
    unchained_journal(journaled.path, [(key, DAYS[0], poisoned), *((key, d, valid) for d in DAYS[1:])])
    again = journaled({"plugin": Returns(lambda: Decision(target=0.5))}, mode="target")
    assert (again.made, again.reused, again.failed) == (1, 9, 0)
    upgraded, invalid = journaled.warnings
    assert upgraded.startswith(f"{journaled.path}: a journal of an earlier TradeDuel, without hash-chained rows: its 10 rows")
    assert invalid == (f"{journaled.path}: 1 journaled decisions under key {key} do not validate and are decided again: "
                       f"plugin AAA {on(DAYS[0])} seed 0: Decision: value: Value error, a Decision sets exactly one of "
                       "`action`, `target` or `weights`")
    assert day(again, "plugin", 0).decision.target == 0.5


@pytest.mark.slow
def test_decisions_journaled_under_other_rules_are_decided_again(journaled):
    """Stateless decisions share their journal key across execution modes; BUYs cannot fill a target run."""
    journaled({"plugin": Returns(lambda: Decision(action=Action.BUY))})
    target = journaled({"plugin": Returns(lambda: Decision(target=1.0))}, mode="target")
    assert (target.made, target.failed) == (10, 0) and {e.decision.target for e in target.decisions} == {1.0}
    assert "10 journaled decisions under key" in journaled.warnings[0] and "; and 7 more" in journaled.warnings[0]


@pytest.mark.slow
def test_a_decision_that_validates_reads_back_unchanged(journaled):
    decision = Decision(action=Action.SELL, confidence=0.25, trace=Trace(extra={"score": math.pi}))
    journaled({"plugin": Returns(lambda: decision)})
    with Journal(journaled.path, read_only=True) as journal:
        entries = next(iter(journal._db.execute("SELECT key FROM decisions")))
        read = journal.read(entries[0])
    assert read.unreadable == [] and all(e.decision == decision for e in read.entries.values())


@pytest.mark.parametrize(("framework", "mode"), [
    (["+frameworks.plugin._target_=misbehaving.ConstantTarget", "+frameworks.plugin.target=nan"], "target"),
    (["+frameworks.plugin._target_=misbehaving.ConstantTarget", "+frameworks.plugin.target=inf"], "target"),
    (["+frameworks.plugin._target_=misbehaving.Constructed", "+frameworks.plugin.action='buy '"], "paper"),
])
@pytest.mark.slow
def test_on_the_command_line_a_bad_plugin_is_counted_and_every_rerun_works(tmp_path, framework, mode):
    """The reproduction: a plugin's NaN or infinite target, or a model_construct bypass, then the same command again."""
    command = benchmark_command("+suite=smoke", "tickers=[NVDA]", "seeds=[0]", "split.test.end=2020-01-10",
                                f"execution={mode}", "~frameworks", *framework, f"hydra.run.dir={tmp_path}")
    for attempt in ("first", "again"):
        done = subprocess.run(command, cwd=ROOT, env=support_env(HERE), capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "7 decisions made, 0 reused from the journal, 7 failed" in done.stdout, (attempt, done.stdout)
    assert "7 journaled failed decisions are decided again" in done.stderr
    facts = json.loads((tmp_path / "run.json").read_text())
    assert (facts["decisions_failed"], facts["failures_retried"]) == (7, 7)


class SharedObject(Returns):
    """One decision object returned for every context of a batch (as the rules do: `shared_decisions`)."""

    def decide(self, batch):
        shared = self.make()
        return [shared for _ in batch]


def test_one_object_for_a_whole_batch_is_checked_once_and_judged_for_every_context(journaled):
    invalid = journaled({"shared": SharedObject(lambda: Decision.model_construct(
        action=Action.BUY, target=0.5, confidence=None, trace=Trace()))})
    assert invalid.failed == 10 and {e.failure.kind for e in invalid.decisions} == {FailureKind.INVALID}
    assert day(invalid, "shared", 7).failure.message.startswith(f"shared AAA {on(DAYS[7])} seed 0: a target (0.5)")
    valid = journaled({"buyer": SharedObject(lambda: Decision(action=Action.BUY))})
    assert valid.failed == 0 and [e.decision.action for e in valid.decisions] == [Action.BUY] * 10


def test_shared_decisions_make_one_object_per_action():
    from frameworks.baselines.shared_decisions import shared_decisions

    made = shared_decisions([Action.BUY, Action.HOLD, Action.BUY, Action.SELL, Action.HOLD])
    assert [d.action for d in made] == [Action.BUY, Action.HOLD, Action.BUY, Action.SELL, Action.HOLD]
    assert made[0] is made[2] and made[1] is made[4] and len({id(d) for d in made}) == 3
