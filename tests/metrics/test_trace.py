"""`python -m metrics.trace`: one decision's trace from a run directory's journal."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
from cli_helpers import ROOT, support_env
from expert_episodes import play

from frameworks.baselines.macd import MACDCross
from harness.journal import Journal, JournalEntry
from market.decision import DecisionContext
from market.synthetic import generate_market
from market.view import MarketView
from metrics.trace import main
from single_agent.expert import ScriptedExpert
from single_agent.protocol import load_protocol

MARKET = generate_market(tickers=["ALFA"], days=120, seed=0)
DAY = MARKET.frame("ALFA").index[100]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A run directory whose journal holds a rule baseline's decision and a single-agent episode's."""
    path = tmp_path_factory.mktemp("run")
    context = DecisionContext(ticker="ALFA", date=DAY, view=MarketView(MARKET, DAY), seed=0)
    baseline = MACDCross().decide([context])[0]
    episode = play(ScriptedExpert(load_protocol("compact")), MARKET, "ALFA", DAY)
    agent = episode.decision({"reward": {"result": 1.0, "format": 0.25, "tool": -0.05, "total": 5.2}})
    with Journal(path / "journal.sqlite") as journal:
        journal.append([JournalEntry("macd", "h-macd", "ALFA", DAY, 0, baseline, 0.001),
                        JournalEntry("single_agent", "h-sa", "ALFA", DAY, 0, agent, 2.5),
                        JournalEntry("single_agent", "h-sa", "ALFA", DAY, 1, agent, 2.4)])
    days = MARKET.frame("ALFA").index[90:110]
    pd.DataFrame({"date": days.repeat(2), "framework": ["macd", "single_agent"] * len(days),
                  "ticker": "ALFA"}).to_parquet(path / "decisions.parquet")
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_rule_baseline_has_no_llm_calls(run_dir, capsys):
    code, out, _ = run(capsys, run_dir, "ALFA", f"{DAY:%Y-%m-%d}", "macd")
    assert code == 0
    assert out.splitlines()[0] == f"== ALFA {DAY:%Y-%m-%d} · macd · seed 0 (journal key h-macd)"
    for line in ("fallback: no", "LLM calls: none", "Tool calls: none", "Parse failures: none", "Messages: none"):
        assert line in out


def test_a_single_agent_decision_shows_calls_messages_and_rewards(run_dir, capsys):
    code, out, _ = run(capsys, run_dir, "ALFA", f"{DAY:%Y-%m-%d}", "single_agent", "--seed", "1")
    assert code == 0
    assert out.count("== ALFA") == 1 and "seed 1" in out
    assert "Tool calls (3):" in out and '1. get_market_data {"lookback_days": 3, "ticker": "ALFA"}' in out
    assert "[system]" in out and "[tool get_news_data]" in out and "<answer>" in out
    assert "reward: result=1  format=0.25  tool=-0.05  total=5.2" in out
    assert "end_reason: answer" in out and "protocol: compact" in out


def test_without_a_framework_every_decision_of_the_day_is_shown(run_dir, capsys):
    code, out, _ = run(capsys, run_dir, "ALFA", f"{DAY:%Y-%m-%d}", "--max-chars", "0")
    assert code == 0 and out.count("== ALFA") == 3


def test_a_missing_decision_is_one_line_naming_what_the_run_holds(run_dir, capsys):
    code, out, _ = run(capsys, run_dir, "ALFA", "2030-01-02")
    assert code == 1 and len(out.splitlines()) == 1
    assert "no decision for ALFA 2030-01-02" in out and "frameworks macd, single_agent" in out
    assert f"ALFA dates {MARKET.frame('ALFA').index[90]:%Y-%m-%d}.." in out
    code, out, _ = run(capsys, run_dir, "ZZZ", f"{DAY:%Y-%m-%d}")
    assert code == 1 and "no ZZZ; tickers ALFA" in out


def test_a_folder_without_a_journal_is_an_error_line(tmp_path, capsys):
    code, out, err = run(capsys, tmp_path, "ALFA", "2020-01-02")
    assert code == 2 and out == "" and "journal.sqlite: missing" in err


@pytest.mark.slow
def test_the_module_runs_from_the_command_line(run_dir):
    done = subprocess.run([sys.executable, "-m", "metrics.trace", str(run_dir), "ALFA", f"{DAY:%Y-%m-%d}", "macd"],
                          cwd=ROOT, env=support_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "· macd ·" in done.stdout
