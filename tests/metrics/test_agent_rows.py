"""The agents' rows of the report, on a run whose traces and labels are known by construction: a
steadily rising stock (every labelled day is bullish) and a framework whose four decisions are
a right answer, a wrong answer, a fallback and a failure."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from frameworks.base import TradingFramework
from harness.journal import Journal
from harness.run_directory import load_run, write_episodes
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.data import MarketData
from market.decision import Action, Decision, LLMCallRecord, ToolCallRecord, Trace
from metrics.agent_rows import agent_numbers, agent_section, agent_warnings
from metrics.episodes import episode_metrics

DAYS = pd.bdate_range("2021-03-01", periods=16, name="date")
START, END = DAYS[0], DAYS[3]


def rising() -> pd.DataFrame:
    close = 100 * 1.03 ** np.arange(len(DAYS))  # +3 % a day: the regime label is bullish wherever it exists
    return pd.DataFrame({"open": close, "high": close * 1.01, "low": close * 0.99, "close": close, "volume": 1e6},
                        index=DAYS)


class Scripted(TradingFramework):
    """Day 0 BUY (right), day 1 SELL (wrong), day 2 the fallback after a parse failure, day 3 a failure."""

    def run_facts(self):
        return {"policy": "scripted", "knowledge_cutoff": "2024-11", "constrained_decoding": True}

    def decide(self, batch):
        return [self._decision(list(DAYS).index(context.date)) for context in batch]

    @staticmethod
    def _decision(day: int) -> Decision:
        calls = [LLMCallRecord(role="agent", prompt_tokens=100, completion_tokens=10)] * 2
        tools = [ToolCallRecord(name="get_market_data"), ToolCallRecord(name="get_news_data", lookahead=day == 0)]
        extra = {"reward_config": "compact", "reward": {"format": 0.1, "tool": -0.5}}
        if day == 3:
            return Decision(action=Action.HOLD, trace=Trace(error="RuntimeError: boom"))
        if day == 2:
            return Decision(action=Action.HOLD, trace=Trace(llm_calls=calls, tool_calls=tools, fallback=True, extra=extra,
                                                            parse_failures=["no_action: turn 1: x", "no_answer: ended"]))
        action = Action.BUY if day == 0 else Action.SELL
        return Decision(action=action, trace=Trace(llm_calls=calls, tool_calls=tools, extra=extra))


class Unconstrained(Scripted):
    def run_facts(self):
        return {"policy": "other", "constrained_decoding": False}


def write(run_dir, frameworks: dict[str, TradingFramework], data_target: str = "market.sources.embedded.load_embedded"):
    data = MarketData(bars={"AAA": rising()})
    spec = RunSpec(tickers=["AAA"], seeds=[0], start=START, end=END)
    entries = [FrameworkEntry(name, framework, config_hash=name) for name, framework in frameworks.items()]
    with Journal(run_dir / "journal.sqlite") as journal:
        result = EpisodeRunner(data, spec, journal, progress=False).run(entries)
    equity, trades = write_episodes(run_dir, result, data, ["AAA"], START, END)
    episode_metrics(equity, trades, 252.0).to_csv(run_dir / "metrics.csv", index=False)
    (run_dir / "config.yaml").write_text(f"data:\n  _target_: {data_target}\n")
    (run_dir / "run.json").write_text(json.dumps({
        "journal_keys": result.journal_keys, "test_window": [str(START.date()), str(END.date())],
        "framework_facts": {e.name: e.framework.run_facts() for e in entries}}))
    return load_run(run_dir)


@pytest.mark.slow
def test_rows_by_hand(tmp_path):
    numbers = agent_numbers(write(tmp_path, {"agent": Scripted()})).loc["agent"]
    assert numbers["decisions"] == 4
    assert (numbers["valid"], numbers["fallback"]) == (0.5, 0.5)
    assert numbers["accuracy"] == 0.25 and numbers["accuracy_model"] == 0.5  # only day 0's BUY matches bullish
    assert (numbers["BUY"], numbers["SELL"], numbers["HOLD"]) == (0.5, 0.5, 0.0)
    assert numbers["tokens"] == 3 * 220 / 4 and numbers["tool_calls"] == 3 * 2 / 4
    assert numbers["failures"] == "no_action 1, no_answer 1"
    assert numbers["constrained"] == True  # noqa: E712 - a numpy bool in the frame
    # R_result: day 0 looked ahead (-1 instead of +1), day 1 wrong (-1), day 2 a fallback (-1); day 3 has no reward
    assert numbers["R_result"] == -1.0
    assert (numbers["R_format"], numbers["R_tool"]) == (pytest.approx(0.1), -0.5)
    assert numbers["R"] == pytest.approx(5 * -1.0 + 0.1 - 0.5)


@pytest.mark.slow
def test_the_section_warns_about_the_cutoff_except_on_synthetic_data(tmp_path):
    run = write(tmp_path / "real", {"agent": Scripted()})
    [warning] = agent_warnings(run)
    assert warning.startswith("agent: the test window 2021-03-01 .. 2021-03-04 precedes the knowledge cutoff of "
                              "scripted (2024-11)") and "data=synthetic" in warning
    section = agent_section(run, tmp_path / "tables")
    assert f"**Warning.** {warning}" in section and "| agent | 4 | 50.0 | 50.0 |" in section
    assert (tmp_path / "tables" / "agents.md").is_file()
    synthetic = write(tmp_path / "synthetic", {"agent": Scripted()}, "market.synthetic.generate_market")
    assert agent_warnings(synthetic) == []


@pytest.mark.slow
def test_a_head_to_head_that_differs_in_constrained_decoding_is_flagged(tmp_path):
    run = write(tmp_path, {"agent": Scripted(), "other": Unconstrained()})
    assert any("constrained decoding differs between LLM frameworks (agent on, other off)" in w
               for w in agent_warnings(run))
