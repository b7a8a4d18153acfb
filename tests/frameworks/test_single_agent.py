"""The single-agent frameworks end to end through `run_benchmark.py` on the tiny model and the
embedded market with real tools: the traces they journal, the run facts, the summary's agent
rows, a killed run that resumes to the same sampled decisions, and alphaquanter by path."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time

import pandas as pd
import pytest
from cli_helpers import ROOT, benchmark_command, journal_rows, support_env
from in_process import run_in_process

from core.errors import ConfigError
from llm_backends.tiny import TinySpec, ensure_tiny
from market.decision import Decision
from single_agent.failures import FAILURE_KINDS, failure_kind

TINY_AGENT = ("+framework@frameworks.single_agent=single_agent", "llm@frameworks.single_agent.llm=tiny")
EXPERT = ("+framework@frameworks.expert=scripted_expert",)
WINDOW = ("+suite=smoke", "tickers=[MSFT]", "split.test.end=2020-01-10")


def traces(run_dir, framework: str) -> list[Decision]:
    with sqlite3.connect(run_dir / "journal.sqlite") as db:
        rows = db.execute("SELECT decision FROM decisions WHERE framework = ? ORDER BY date, seed", (framework,))
        return [Decision.model_validate_json(row[0]) for row in rows]


@pytest.fixture(scope="module")
def agents_run(tmp_path_factory):
    """The smoke suite's first 7 MSFT days with the single agent (tiny, constrained, sampling) and the expert."""
    out = tmp_path_factory.mktemp("agents")
    subprocess.run(benchmark_command(*WINDOW, *TINY_AGENT, *EXPERT, "frameworks.single_agent.temperature=1.0",
                                     f"hydra.run.dir={out}"), cwd=ROOT, check=True, capture_output=True,
                   env=support_env(), timeout=600)
    return out


@pytest.mark.slow
def test_the_single_agent_journals_whole_episodes(agents_run):
    decisions = traces(agents_run, "single_agent")
    assert len(decisions) == 7 * 2  # sampling: stochastic, every seed of the smoke suite
    for decision in decisions:
        trace = decision.trace
        roles = [m["role"] for m in trace.messages]
        assert roles[:2] == ["system", "user"] and roles[-1] == "assistant"
        assert "Ticker: MSFT" in trace.messages[1]["content"]
        assert roles.count("assistant") == len(trace.llm_calls) >= 1
        assert roles.count("tool") == len(trace.tool_calls)
        assert all(call.role == "agent" and call.model.startswith("tiny-qwen2-") for call in trace.llm_calls)
        assert all(call.prompt_tokens > 0 and call.completion_tokens > 0 for call in trace.llm_calls)
        assert trace.parse_failures == [] and not trace.fallback  # constrained: every turn is valid
        assert trace.extra["protocol"] == "compact" and trace.extra["end_reason"] == "answer"
        assert trace.extra["reward_config"] == "compact" and set(trace.extra["reward"]) == {"format", "tool"}
        assert trace.messages[-1]["content"].endswith(f"<answer>{decision.action.value}</answer>")


@pytest.mark.slow
def test_the_expert_calls_real_tools_through_the_same_engine(agents_run):
    for decision in traces(agents_run, "expert"):
        trace = decision.trace
        assert [c.name for c in trace.tool_calls] == ["get_market_data", "get_stock_indicators", "get_news_data"]
        assert all(c.error is None and not c.lookahead and c.arguments["ticker"] == "MSFT" for c in trace.tool_calls)
        tool_messages = [m for m in trace.messages if m["role"] == "tool"]
        assert tool_messages[0]["content"].startswith("MSFT ") and "close" in tool_messages[0]["content"]
        assert trace.extra["reward"]["tool"] == 0.0 and trace.extra["reward"]["format"] > 0


@pytest.mark.slow
def test_run_facts_and_the_summary_show_the_agents(agents_run):
    facts = json.loads((agents_run / "run.json").read_text())["framework_facts"]
    assert facts["single_agent"]["constrained_decoding"] is True and facts["single_agent"]["samples"] == 1
    assert facts["expert"]["constrained_decoding"] is None
    assert "buy_and_hold" not in facts
    summary = (agents_run / "summary.md").read_text()
    assert "## agents" in summary and "tool calls/dec" in summary and "R_result" in summary
    agents = summary.split("## agents", 1)[1]
    row = next(line for line in agents.splitlines() if line.startswith("| single_agent |"))
    assert row.split(" | ")[2:4] == ["100.0", "0.0"]  # valid %, fallback %
    assert (agents_run / "tables" / "agents.md").is_file()


@pytest.mark.slow
def test_an_unconstrained_model_gets_recorded_failures_and_the_fallback(tmp_path, run_cli):
    run_cli(*WINDOW, *TINY_AGENT, "frameworks.single_agent.constrained=false", f"hydra.run.dir={tmp_path}")
    decisions = traces(tmp_path, "single_agent")
    assert json.loads((tmp_path / "run.json").read_text())["decisions_failed"] == 0
    fallbacks = [d for d in decisions if d.trace.fallback]
    assert fallbacks, "the tiny model's free text never failed to parse"
    for decision in fallbacks:
        kinds = {failure_kind(line) for line in decision.trace.parse_failures}
        assert decision.action.value == "HOLD" and "no_answer" in kinds and kinds <= set(FAILURE_KINDS)


@pytest.mark.slow
def test_a_killed_sampling_run_resumes_to_the_same_decisions(tmp_path, run_cli):
    overrides = ("+suite=smoke", "tickers=[MSFT]", "split.test.end=2020-01-24", *TINY_AGENT,
                 "frameworks.single_agent.temperature=1.0", "batch_size=4")
    run_cli(*overrides, f"hydra.run.dir={tmp_path / 'whole'}")
    whole = pd.read_parquet(tmp_path / "whole" / "decisions.parquet")
    total = int((whole["framework"] == "single_agent").sum())

    killed = tmp_path / "killed"
    process = subprocess.Popen(benchmark_command(*overrides, f"hydra.run.dir={killed}"), cwd=ROOT,
                               env=support_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while journal_rows(killed / "journal.sqlite", "single_agent") < total // 3 and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_before = journal_rows(killed / "journal.sqlite", "single_agent")
    assert 0 < done_before < total, "the run was not killed while the single agent decided"

    run_cli(*overrides, f"hydra.run.dir={killed}")
    resumed = pd.read_parquet(killed / "decisions.parquet")
    columns = ["framework", "ticker", "date", "seed", "action", "tool_calls", "completion_tokens"]
    pd.testing.assert_frame_equal(resumed[columns], whole[columns])
    assert set(whole.loc[whole["framework"] == "single_agent", "seed"]) == {0, 1}
    assert (killed / "metrics.csv").read_bytes() == (tmp_path / "whole" / "metrics.csv").read_bytes()


@pytest.mark.slow
def test_alphaquanter_takes_a_checkpoint_by_path(tmp_path, run_cli):
    folder = ensure_tiny(TinySpec())  # a transformers model folder, in the cache root the run uses too
    run_cli(*WINDOW, "+framework@frameworks.alphaquanter=alphaquanter",
            f"frameworks.alphaquanter.checkpoint={folder}", f"hydra.run.dir={tmp_path}")
    decisions = traces(tmp_path, "alphaquanter")
    assert len(decisions) == 7 and all(d.trace.llm_calls[0].model == folder.name for d in decisions)
    facts = json.loads((tmp_path / "run.json").read_text())["framework_facts"]["alphaquanter"]
    assert facts["policy"] == folder.name and facts["constrained_decoding"] is True


def test_alphaquanter_without_a_checkpoint_names_the_missing_setting(tmp_path):
    with pytest.raises(ConfigError) as refused:
        run_in_process(tmp_path, *WINDOW, "+framework@frameworks.alphaquanter=alphaquanter")
    assert str(refused.value) == ("frameworks.alphaquanter: name a backbone (llm@frameworks.<row>.llm=NAME "
                                  "of the llm group) or a trained policy (checkpoint=PATH)")
