"""Finding 6, the hang: a plugin whose decision never returned stalled the run forever. Now a framework that
opts in (or any framework, by `decision_timeout_s`) has a per-decision time limit: a hung decision becomes a
recorded failure and the run goes on."""

from __future__ import annotations

import threading

import pytest
from harness_runs import DAYS, day, on
from misbehaving import Hangs

from core.errors import ConfigError
from frameworks.baselines.buy_and_hold import BuyAndHold
from harness.failures import FailureKind
from llm_backends.paths import CACHE_ENV
from harness.runner import RunSpec
from harness.time_limit import TimedOut, call_within
from market.decision import Action
from llm_backends.build import engine_config

pytestmark = pytest.mark.timeout(60)

LIMIT_S = 0.2


@pytest.mark.slow
def test_a_hung_decision_of_a_plugin_that_opts_in_is_a_timeout_failure_and_the_run_goes_on(journaled):
    hangs = Hangs(hang_on={DAYS[3]}, limit_s=LIMIT_S)
    result = journaled({"hangs": hangs, "buy_and_hold": BuyAndHold()})
    hangs.release.set()
    failed = day(result, "hangs", 3).failure
    assert failed.kind is FailureKind.TIMEOUT
    assert failed.message == f"hangs AAA {on(DAYS[3])} seed 0: no answer within {LIMIT_S:g} s (the call was abandoned)"
    assert day(result, "hangs", 3).decision.action is Action.HOLD
    assert result.failed == 1, "the batch timed out, then each day was decided alone: only day 3 hung"
    assert {e.decision.action for e in result.decisions if e.framework == "hangs" and e.failure is None} == {Action.BUY}
    assert len([e for e in result.decisions if e.framework == "buy_and_hold"]) == 10


@pytest.mark.slow
def test_the_config_sets_a_limit_for_every_framework_and_null_turns_it_off(journaled):
    hangs = Hangs(hang_on={DAYS[0]}, limit_s=None)
    limited = journaled({"hangs": hangs}, decision_timeout_s=LIMIT_S)
    hangs.release.set()
    assert day(limited, "hangs", 0).failure.kind is FailureKind.TIMEOUT
    local = Hangs()
    journaled({"local": local})
    assert local.threads == {threading.main_thread().name}, "no limit (auto, none asked): decide runs on the caller's thread"
    opted = Hangs(limit_s=30.0)
    journaled({"opted": opted}, decision_timeout_s=None)
    assert opted.threads == {threading.main_thread().name}, "null: no limit, even for a framework that asks for one"


@pytest.mark.parametrize("limit", [0, -1.0, "soon", float("inf"), True])
def test_a_limit_that_is_not_a_positive_number_is_refused_in_one_line(limit):
    with pytest.raises(ConfigError, match=r"^decision_timeout_s: .*; it must be auto, null or a positive number of seconds$"):
        RunSpec(tickers=["AAA"], seeds=[0], start=DAYS[0], end=DAYS[-1], decision_timeout_s=limit)


def test_call_within_returns_raises_or_gives_up():
    assert call_within(1.0, sum, [1, 2]) == 3 and call_within(None, sum, [1]) == 1
    with pytest.raises(ZeroDivisionError):
        call_within(1.0, lambda: 1 / 0)
    never = threading.Event()
    with pytest.raises(TimedOut, match="no answer within 0.05 s"):
        call_within(0.05, never.wait)
    never.set()


@pytest.mark.slow
def test_the_debate_over_an_http_engine_has_a_limit_and_over_a_local_one_none(tmp_path, monkeypatch):
    from frameworks.multi_agent import REMOTE_DECISION_TIMEOUT_S, MultiAgentDebate

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    remote = {"llm": engine_config("local-server", ["base_url=http://127.0.0.1:9/v1", "cache=false"])}
    over_http = MultiAgentDebate(quick=remote, deep=remote, first_tool_call="auto")  # no tokenizer: no forced call
    assert over_http.decision_timeout_s() == REMOTE_DECISION_TIMEOUT_S
    assert MultiAgentDebate(quick={"llm": engine_config("tiny")}, deep={"llm": engine_config("tiny")}).decision_timeout_s() is None
    assert BuyAndHold().decision_timeout_s() is None
