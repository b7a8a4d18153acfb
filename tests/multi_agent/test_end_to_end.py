"""The full debate graph on the tiny model with the real tools, through `run_benchmark.py`."""

from __future__ import annotations

import json
import sqlite3
import subprocess

import pandas as pd
import pytest
from cli_helpers import ROOT, benchmark_command, support_env

from harness.run_directory import load_run
from market.decision import Decision
from metrics.agent_rows import agent_numbers
from metrics.role_rows import role_numbers

pytestmark = pytest.mark.slow  # the module's one run of the full debate through run_benchmark.py: about a minute

NODES = {"market_analyst", "social_analyst", "news_analyst", "fundamentals_analyst", "bull_researcher",
         "bear_researcher", "research_manager", "trader", "aggressive_analyst", "conservative_analyst",
         "neutral_analyst", "portfolio_manager"}
ANALYSTS = ("market", "social", "news", "fundamentals")
FORCED_CALL_TOKENS = 128
"""configs/framework/multi_agent.yaml's tool_call_tokens: the budget of each analyst's grammar-forced first call."""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("multi_agent")
    done = subprocess.run(benchmark_command(
        "+suite=smoke", "tickers=[MSFT,NVDA]", "split.test.end=2020-01-06",
        "+framework@frameworks.multi_agent=multi_agent", "llm@frameworks.multi_agent.quick.llm=tiny",
        "frameworks.multi_agent.quick.max_new_tokens=24", "frameworks.multi_agent.deep.max_new_tokens=32",
        f"hydra.run.dir={out}"), cwd=ROOT, env=support_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def journaled(run_dir) -> list[Decision]:
    with sqlite3.connect(run_dir / "journal.sqlite") as db:
        rows = db.execute("SELECT decision FROM decisions WHERE framework = 'multi_agent' ORDER BY ticker, date")
        return [Decision.model_validate_json(row[0]) for row in rows]


def test_every_decision_comes_from_the_full_graph(run_dir):
    decisions = journaled(run_dir)
    assert len(decisions) == 2 * 3
    for decision in decisions:
        trace = decision.trace
        assert trace.error is None
        assert {c.role for c in trace.llm_calls} == NODES
        assert all(c.prompt_tokens > 0 and 0 < c.completion_tokens <= FORCED_CALL_TOKENS for c in trace.llm_calls)
        free = [c for c in trace.llm_calls if not c.role.endswith("_analyst")]
        assert all(c.completion_tokens <= 32 for c in free)
        assert all(c.completion_tokens <= 24 for c in free if c.role not in ("research_manager", "portfolio_manager"))
        assert [m["role"] for m in trace.messages][-1] == "portfolio_manager"
        assert {name: n >= 1 for name, n in trace.extra["analyst_tool_calls"].items()} == dict.fromkeys(ANALYSTS, True), \
            "the forced first call makes every analyst read its data"
        assert len(trace.tool_calls) == sum(trace.extra["analyst_tool_calls"].values())
        assert all(f.split(":")[0] in ("tool_call", "dropped_call", "plan", "proposal", "decision")
                   for f in trace.parse_failures)
        assert not trace.fallback and trace.extra["rating"] is not None, "the grammar holds every answer to a rating"
        assert set(trace.extra["parsed_as"].values()) <= {"json", "cut"}
        assert not any(f.startswith(("plan: ", "proposal: ", "decision: ")) for f in trace.parse_failures)


def test_the_run_tables_count_the_debate_cost(run_dir):
    facts = json.loads((run_dir / "run.json").read_text())
    assert facts["decisions_failed"] == 0
    assert facts["framework_facts"]["multi_agent"]["constrained_decoding"] is True
    table = pd.read_parquet(run_dir / "decisions.parquet")
    rows = table[table.framework == "multi_agent"]
    decisions = journaled(run_dir)
    assert len(rows) == 6
    assert sorted(rows.llm_calls) == sorted(len(d.trace.llm_calls) for d in decisions)
    assert rows.prompt_tokens.sum() == sum(c.prompt_tokens for d in decisions for c in d.trace.llm_calls)
    assert (rows.llm_calls >= len(NODES)).all() and (rows.completion_tokens > 0).all()


def test_the_agents_and_roles_tables_read_the_debate_traces(run_dir):
    run = load_run(run_dir)
    agents = agent_numbers(run).loc["multi_agent"]
    assert (agents["decisions"], agents["valid"], agents["constrained"]) == (6, 1.0, True)
    roles = role_numbers(run).loc["multi_agent"]
    assert set(roles.index) == NODES
    analysts = roles.index.isin([f"{name}_analyst" for name in ANALYSTS])
    assert (roles["calls"][~analysts] == 1).all() and (roles["calls"][analysts] == 2).all(), "a forced call, then the report"
    assert roles["share"].sum() == pytest.approx(1.0)
    assert (roles["prompt"] + roles["completion"]).sum() == pytest.approx(agents["tokens"])
    calls = dict(part.rsplit(" ", 1) for part in agents["analyst_tool_calls"].split(", "))
    assert list(calls) == list(ANALYSTS) and all(float(n) >= 1 for n in calls.values())
    summary = (run_dir / "summary.md").read_text()
    assert "## agents" in summary and "## roles" in summary and (run_dir / "tables" / "roles.md").is_file()
