"""MASSA's LLM variant and its no-signal ablation on SmolLM2, through `run_benchmark.py`, on two days of
the massa_llm suite (the TEC pool's 8 agents)."""

from __future__ import annotations

import json
import sqlite3
import subprocess

import pandas as pd
import pytest
from cli_helpers import ROOT, benchmark_command, support_env

from market.decision import Decision
from multi_agent.massa.answers import AGENT_TOKENS, coordinator_tokens

pytestmark = pytest.mark.slow  # one run of the suite's three rows on two days with SmolLM2: about a minute

POOL = tuple(f"TEC{i}" for i in range(1, 9))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("massa_llm")
    done = subprocess.run(benchmark_command("+suite=massa_llm", "split.test.end=2019-07-02", f"hydra.run.dir={out}"),
                          cwd=ROOT, env=support_env(), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def journaled(run_dir, framework: str) -> list[Decision]:
    with sqlite3.connect(run_dir / "journal.sqlite") as db:
        rows = db.execute("SELECT decision FROM decisions WHERE framework = ? ORDER BY date", (framework,))
        return [Decision.model_validate_json(row[0]) for row in rows]


def test_every_decision_comes_from_the_coordinator_and_eight_agents_under_their_grammars(run_dir):
    decisions = journaled(run_dir, "MASSA-LLM")
    assert len(decisions) == 2
    for decision in decisions:
        trace = decision.trace
        assert trace.error is None and not trace.fallback
        assert set(decision.weights) == {*POOL, "CASH"} and sum(decision.weights.values()) == pytest.approx(1.0)
        calls = {c.role: c for c in trace.llm_calls}
        assert set(calls) == {"coordinator", *(f"agent_{name}" for name in POOL)} and len(trace.llm_calls) == 9
        assert 0 < calls["coordinator"].completion_tokens <= coordinator_tokens(POOL)
        assert all(0 < calls[f"agent_{name}"].completion_tokens <= AGENT_TOKENS for name in POOL)
        assert trace.extra["signal_source"] == "coordinator"
        assert trace.extra["valid"] == trace.extra["answers"] == 9, "the grammars hold every answer"
        coordinator_prompt = trace.messages[0]["content"]
        assert all(name in coordinator_prompt for name in POOL) and "Your sleeve" not in coordinator_prompt


def test_the_ablation_reads_the_neutral_signal_and_the_run_counts_the_cost(run_dir):
    for decision in journaled(run_dir, "MASSA-LLM-no-signal"):
        assert len(decision.trace.llm_calls) == 8 and set(decision.trace.extra["signals"].values()) == {"neutral"}
    facts = json.loads((run_dir / "run.json").read_text())
    assert facts["decisions_failed"] == 0
    assert facts["framework_facts"]["MASSA-LLM"]["valid_share"] == 1.0
    table = pd.read_parquet(run_dir / "decisions.parquet")
    rows = table[table.framework == "MASSA-LLM"]
    assert list(rows.llm_calls) == [9, 9] and (rows.prompt_tokens > 0).all()
    metrics = pd.read_csv(run_dir / "metrics.csv")
    assert {"equal_weight", "MASSA-LLM", "MASSA-LLM-no-signal"} <= set(metrics.framework)
