"""The roles table on a run whose traces are known: a two-role framework with fixed token counts
next to a one-role framework (no rows) and a rule (no calls)."""

from __future__ import annotations

import pytest
from test_agent_rows import Scripted, write

from frameworks.base import TradingFramework
from market.decision import Action, Decision, LLMCallRecord, Trace
from metrics.role_rows import role_numbers, role_section


class TwoRoles(TradingFramework):
    """Every decision: two analyst calls (100 prompt of which 60 reused, 10 completion, 0.5 s) and
    one judge call (300 prompt, 30 completion, 1.5 s)."""

    def decide(self, batch):
        calls = [LLMCallRecord(role="analyst", prompt_tokens=100, reused_prompt_tokens=60, completion_tokens=10,
                               latency_s=0.5)] * 2
        calls += [LLMCallRecord(role="judge", prompt_tokens=300, completion_tokens=30, latency_s=1.5)]
        return [Decision(action=Action.HOLD, trace=Trace(llm_calls=calls)) for _ in batch]


class Rule(TradingFramework):
    def decide(self, batch):
        return [Decision(action=Action.BUY) for _ in batch]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return write(tmp_path_factory.mktemp("roles"), {"debate": TwoRoles(), "agent": Scripted(), "rule": Rule()})


@pytest.mark.slow
def test_rows_by_hand(run):
    numbers = role_numbers(run)
    assert list(numbers.index) == [("debate", "analyst"), ("debate", "judge")]
    analyst, judge = numbers.loc[("debate", "analyst")], numbers.loc[("debate", "judge")]
    assert (analyst["calls"], analyst["prompt"], analyst["reused"], analyst["completion"]) == (2, 200, 120, 20)
    assert (judge["calls"], judge["prompt"], judge["reused"], judge["completion"]) == (1, 300, 0, 30)
    assert analyst["share"] == pytest.approx(220 / 550) and judge["share"] == pytest.approx(330 / 550)
    assert (analyst["latency"], judge["latency"]) == (0.5, 1.5)


def test_the_section_and_its_table_files(run, tmp_path):
    section = role_section(run, tmp_path)
    assert section.startswith("## roles") and "| debate | judge | 1.00 | 300 | 0 | 30 | 60.0 | 1.50 |" in section
    assert (tmp_path / "roles.md").is_file() and (tmp_path / "roles.tex").is_file()


@pytest.mark.slow
def test_no_section_without_a_multi_role_framework(tmp_path):
    assert role_section(write(tmp_path, {"agent": Scripted(), "rule": Rule()}), tmp_path / "tables") == ""
