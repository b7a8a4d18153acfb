"""Finding 1: a failed decision was journaled as a real one and reused by every later run. Now it is
journaled with its failure, counted as failed by every run that reads it and, by default, decided again."""

from __future__ import annotations

import json
import socket

import pytest
from harness_runs import DAYS, day, on
from hydra import compose, initialize_config_dir
from misbehaving import Flaky, Reporting, Stateful
from omegaconf import open_dict

import run_benchmark
from cli_helpers import ROOT
from harness.failures import FailureKind
from harness.journal import Journal
from llm_backends.paths import CACHE_ENV
from llm_backends.serve import start_server
from llm_backends.tiny import tiny_engine
from market.decision import Action

pytestmark = pytest.mark.timeout(120)


@pytest.mark.slow
def test_a_raised_decision_is_journaled_as_a_failure_and_decided_again_on_the_rerun(journaled):
    flaky = Flaky(up=False)
    first = journaled({"flaky": flaky})
    assert (first.made, first.failed) == (10, 10)
    failure = day(first, "flaky", 3).failure
    assert failure.kind is FailureKind.RAISED
    assert failure.message == f"flaky AAA {on(DAYS[3])} seed 0: ConnectionError: All connection attempts failed"
    assert day(first, "flaky", 3).decision.trace.error == failure.message

    flaky.up = True
    again = journaled({"flaky": flaky})
    assert (again.made, again.reused, again.failed, again.failures_retried) == (10, 0, 0, 10)
    assert journaled.warnings == ["flaky: 10 journaled failed decisions are decided again (retry_failed=false keeps them)"]
    assert {e.decision.action for e in again.decisions} == {Action.BUY}

    third = journaled({"flaky": flaky})
    assert (third.made, third.reused, third.failed, third.failures_retried) == (0, 10, 0, 0)
    with Journal(journaled.path, read_only=True) as journal:
        history = journal._db.execute("SELECT attempt, failure_kind FROM decisions WHERE date = ?",
                                      (f"{DAYS[3]:%Y-%m-%d %H:%M:%S}",)).fetchall()
    assert history == [(0, "raised"), (1, None)], "the failed attempt stays in the file"


@pytest.mark.slow
def test_retry_failed_false_keeps_journaled_failures_and_counts_them_as_failed(journaled):
    flaky = Flaky(up=False)
    journaled({"flaky": flaky})
    flaky.up, flaky.calls = True, 0
    kept = journaled({"flaky": flaky}, retry_failed=False)
    assert (kept.made, kept.reused, kept.failed, kept.failures_reused, kept.failures_retried) == (0, 10, 10, 10, 0)
    assert flaky.calls == 0
    assert kept.failures["flaky"].failed == 10 and all(e.failure is not None for e in kept.decisions)


@pytest.mark.slow
def test_an_error_the_framework_reports_itself_counts_as_a_failure_and_is_decided_again(journaled):
    reporting = Reporting(up=False)
    first = journaled({"debate": reporting})
    assert first.failed == 10 and day(first, "debate", 0).failure.kind is FailureKind.REPORTED
    assert day(first, "debate", 0).decision.trace.fallback, "the framework's own fallback is kept"
    reporting.up = True
    again = journaled({"debate": reporting})
    assert (again.failed, again.failures_retried) == (0, 10)
    assert {e.decision.action for e in again.decisions} == {Action.SELL}


@pytest.mark.slow
def test_a_stateful_framework_decides_again_from_its_first_failure_on(journaled):
    stateful = Stateful(fail_on={DAYS[4]})
    first = journaled({"stateful": stateful})
    assert first.failed == 1 and day(first, "stateful", 4).failure is not None
    assert day(first, "stateful", 5).decision.action is Action.BUY, "flat after the fallback HOLD on day 4"
    stateful.up, stateful.decided = True, []
    again = journaled({"stateful": stateful})
    assert stateful.decided == DAYS[4:], "days 5-9 followed from day 4: decided again with it"
    assert day(again, "stateful", 4).decision.action is Action.BUY
    assert day(again, "stateful", 5).decision.action is Action.SELL, "long after day 4's BUY"
    assert (again.made, again.reused, again.failures_retried) == (6, 4, 1)
    assert "5 later journaled decisions are decided again as well" in journaled.warnings[1]


def compose_run(run_dir, *overrides: str):
    """The smoke suite's config with one framework, `flaky`: `misbehaving.Endpoint`, up once `run_dir/up` exists."""
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose("config", overrides=["+suite=smoke", "tickers=[NVDA]", "seeds=[0]", "split.test.end=2020-01-15",
                                           "progress=false", "report=false", *overrides])
    with open_dict(cfg):
        cfg.frameworks = {"flaky": {"_target_": "misbehaving.Endpoint", "endpoint": str(run_dir / "up")}}
    return cfg


@pytest.mark.slow
def test_run_json_the_decision_line_and_the_agents_table_count_failures_reused_and_retried(tmp_path, capsys):
    run_benchmark.run(compose_run(tmp_path), tmp_path)
    facts = json.loads((tmp_path / "run.json").read_text())
    assert (facts["decisions_failed"], facts["failures_retried"], facts["failures_reused"]) == (10, 0, 0)
    assert "0 reused from the journal, 10 failed\n" in capsys.readouterr().out

    (tmp_path / "up").touch()
    run_benchmark.run(compose_run(tmp_path, "retry_failed=false"), tmp_path)
    facts = json.loads((tmp_path / "run.json").read_text())
    assert (facts["decisions_failed"], facts["failures_reused"], facts["failures"]["flaky"]) == (
        10, 10, {"failed": 10, "reused": 10, "retried": 0})
    assert "10 failed (10 journaled failures kept (retry_failed=false))" in capsys.readouterr().out

    run_benchmark.run(compose_run(tmp_path), tmp_path)
    facts = json.loads((tmp_path / "run.json").read_text())
    assert (facts["decisions_failed"], facts["failures_retried"], facts["decisions_made"]) == (0, 10, 10)
    assert "10 decisions made, 0 reused from the journal, 0 failed (10 journaled failures decided again)" in capsys.readouterr().out
    lines = (tmp_path / "summary.md").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| framework") and "failures retried" in line)
    header, row = lines[at], lines[at + 2]
    cells = dict(zip([c.strip() for c in header.split("|")], [c.strip() for c in row.split("|")]))
    assert (cells["failed"], cells["failures reused"], cells["failures retried"]) == ("0", "0", "10")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_debate_over_a_dead_endpoint_fails_and_is_decided_again_once_the_server_is_up(tmp_path, capsys, monkeypatch):
    """The reproduction: the debate against an OpenAI-compatible endpoint with nothing listening, then with
    our server (the tiny model) up on it, the same command both times."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    served = tiny_engine()
    port = free_port()
    overrides = [f"++frameworks.multi_agent.quick.llm.{key}={value}" for key, value in {
        "base_url": f"http://127.0.0.1:{port}/v1", "model": served.model, "max_retries": 0, "cache": "false"}.items()]

    def debate():
        with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
            cfg = compose("config", overrides=[
                "+suite=smoke", "tickers=[MSFT]", "seeds=[0]", "split.test.end=2020-01-06", "progress=false",
                "report=false", "+framework@frameworks.multi_agent=multi_agent", "llm@frameworks.multi_agent.quick.llm=local-server",
                "frameworks.multi_agent.first_tool_call=auto",  # a remote engine has no tokenizer for the forced call
                "frameworks.multi_agent.quick.max_new_tokens=24", "frameworks.multi_agent.deep.max_new_tokens=32",
                *overrides])
        with open_dict(cfg):
            cfg.frameworks = {"multi_agent": cfg.frameworks.multi_agent}
        run_benchmark.run(cfg, tmp_path / "run")
        return json.loads((tmp_path / "run" / "run.json").read_text())

    (tmp_path / "run").mkdir()
    down = debate()
    assert (down["decisions_made"], down["decisions_failed"]) == (3, 3)
    assert "3 decisions made, 0 reused from the journal, 3 failed" in capsys.readouterr().out
    with start_server(served, port=port):
        up = debate()
    served.close()
    assert (up["decisions_made"], up["decisions_reused"], up["decisions_failed"], up["failures_retried"]) == (3, 0, 0, 3)
    with Journal(tmp_path / "run" / "journal.sqlite", read_only=True) as journal:
        latest = journal.load(up["journal_keys"]["multi_agent"]).values()
    assert all(e.failure is None and e.decision.trace.llm_calls for e in latest)
