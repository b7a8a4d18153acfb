"""MASSA's LLM variant as a framework: its configs, its fingerprint, and through the runner on the tiny
model (a real engine and grammar): valid weights, every node traced; on the scripted engine, a killed run
that resumes to the same prompts and equity (the sleeves' memory rebuilt by `recall`)."""

from __future__ import annotations

import pandas as pd
import pytest
from in_process import composed

from frameworks.massa_llm import MassaLLM
from harness.decision_checks import CASH
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from harness.tasks.portfolio import PortfolioConfig, PortfolioTask
from llm_backends.build import engine_config
from multi_agent.massa.pipeline import MassaGraphPipeline
from massa_scripted import ScriptedEngine
from test_massa_llm import DATES, MARKET, UNIVERSE, momentum

START, END = DATES[80], DATES[85]


def test_the_suite_composes_the_variant_its_ablation_and_equal_weight_on_one_sector_pool():
    cfg = composed("+suite=massa_llm")
    frameworks = cfg.frameworks
    assert set(frameworks) == {"equal_weight", "MASSA-LLM", "MASSA-LLM-no-signal"}
    assert frameworks["MASSA-LLM"].llm == engine_config("smollm2") == frameworks["MASSA-LLM-no-signal"].llm
    assert frameworks["MASSA-LLM"].coordinator and not frameworks["MASSA-LLM-no-signal"].coordinator
    assert frameworks["MASSA-LLM"].max_gross == cfg.task.max_gross
    (pool,) = cfg.task.pool.values()
    assert list(pool) == [f"TEC{i}" for i in range(1, 9)] and set(pool) < set(cfg.tickers)


def agent(**settings) -> MassaLLM:
    return MassaLLM(llm=engine_config("tiny"), **settings)


def test_the_fingerprint_covers_the_settings_and_the_grammars():
    with_signal, again, without = agent(), agent(), agent(coordinator=False)
    assert with_signal.fingerprint() == again.fingerprint() != without.fingerprint()
    assert agent(step=0.25).fingerprint() != with_signal.fingerprint()
    grammars = with_signal.grammars()
    assert '"increase"' in grammars["coordinator"] and '"trim"' in grammars["agent"]
    assert agent(constrained=False).grammars() == {"coordinator": None, "agent": None}
    reversed_ = agent(actions=["buy", "add", "hold", "trim", "sell"])
    assert reversed_.fingerprint() != with_signal.fingerprint() and reversed_.grammars() != grammars


class Killed(BaseException):
    """Ends the run like a kill: the runner isolates `Exception`s, not this."""


class Scripted(MassaLLM):
    """The framework on the scripted momentum engine (wiring only), killed at its `day`-th batch if given."""

    def __init__(self, day: int | None = None):
        super().__init__(llm=engine_config("tiny"))
        self.pipeline = MassaGraphPipeline(self.settings, ScriptedEngine(momentum))
        self.day, self.calls = day, 0

    def decide(self, batch):
        self.calls += 1
        if self.calls == self.day:
            raise Killed
        return super().decide(batch)


def run(framework, path):
    spec = RunSpec(tickers=list(UNIVERSE), seeds=[0], start=START, end=END, task=PortfolioTask(PortfolioConfig()))
    with Journal(path) as journal:
        runner = EpisodeRunner(MARKET, spec, journal, progress=False, warn=lambda _: None)
        return runner.run([FrameworkEntry("massa_llm", framework, config_hash="massa_llm")])


@pytest.mark.slow
def test_through_the_runner_on_the_tiny_model_every_decision_is_valid_and_traced(tmp_path):
    framework = agent()
    result = run(framework, tmp_path / "journal.sqlite")
    assert result.failed == 0 and len(result.decisions) == len(MARKET.trading_days("AAA", START, END))
    for entry in result.decisions:
        decision = entry.decision
        assert set(decision.weights) == {*UNIVERSE, CASH} and min(decision.weights.values()) >= 0
        assert sum(decision.weights.values()) == pytest.approx(1.0)
        assert sorted(c.role for c in decision.trace.llm_calls) == sorted(["coordinator", "agent_AAA", "agent_BBB",
                                                                          "agent_CCC"])
        assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in decision.trace.llm_calls)
        assert len(decision.trace.messages) == 2 * 4 and decision.trace.extra["answers"] == 4
    facts = framework.run_facts()
    assert facts["decisions"] == len(result.decisions) and facts["valid_share"] == 1.0, "the grammars hold every answer"


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_same_prompts_and_equity(tmp_path):
    reference = run(Scripted(), tmp_path / "whole.sqlite")
    prompts = [m["content"] for e in reference.decisions for m in e.decision.trace.messages if m["role"] == "user"]
    assert any("profit today: +0.00 %" not in p for p in prompts if p.startswith("Stock:")), "no sleeve ever moved"
    with pytest.raises(Killed):
        run(Scripted(day=3), tmp_path / "resumed.sqlite")
    resumed_framework = Scripted()
    resumed = run(resumed_framework, tmp_path / "resumed.sqlite")
    assert resumed.reused == 2 and resumed.made == len(reference.decisions) - 2
    assert [(e.date, e.decision.weights, e.decision.trace.messages) for e in resumed.decisions] == \
        [(e.date, e.decision.weights, e.decision.trace.messages) for e in reference.decisions]
    key = next(iter(reference.episodes))
    pd.testing.assert_frame_equal(resumed.episodes[key].equity, reference.episodes[key].equity)
    assert resumed_framework.run_facts()["decisions"] == len(reference.decisions)
