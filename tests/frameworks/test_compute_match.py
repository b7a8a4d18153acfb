"""The compute-matched self-consistency row: k from this run's MA and SA tokens per decision."""

from __future__ import annotations

import pandas as pd
import pytest
from omegaconf import OmegaConf

from frameworks.compute_match import deferred_builder, explicit_budget, matched_samples, tokens_per_decision
from harness.journal import JournalEntry
from harness.runner import RunResult
from market.decision import Action, Decision, LLMCallRecord, Trace


def entry(framework: str, prompt: int, completion: int, calls: int = 1) -> JournalEntry:
    trace = Trace(llm_calls=[LLMCallRecord(prompt_tokens=prompt, completion_tokens=completion)] * calls)
    return JournalEntry(framework=framework, key="k", ticker="MSFT", date=pd.Timestamp("2020-01-02"), seed=0,
                        decision=Decision(action=Action.HOLD, trace=trace), wall_s=0.0)


def result(*entries: JournalEntry) -> RunResult:
    return RunResult(episodes={}, decisions=list(entries))


def test_tokens_per_decision_sum_every_call_and_average_over_decisions():
    decisions = [entry("MA", 100, 10, calls=3), entry("MA", 200, 20, calls=3), entry("SA", 50, 5)]
    assert tokens_per_decision(decisions, "MA") == pytest.approx((3 * 110 + 3 * 220) / 2)
    assert tokens_per_decision(decisions, "SC") is None


@pytest.mark.parametrize("heavy, unit, k", [(7400, 2400, 3), (2600, 2000, 1), (1000, 4000, 1), (27200, 3100, 9)])
def test_k_is_the_rounded_ratio_and_at_least_one(heavy, unit, k):
    assert matched_samples(heavy, unit) == k


def test_the_deferred_row_gets_the_measured_k_and_says_how():
    facts: dict = {"kind": "SC", "status": "run"}
    built = {}
    row = OmegaConf.create({"_target_": "x.SingleAgent", "samples": 1, "temperature": 0.7})
    builder = deferred_builder("SC-b", row, "MA-b", "SA-b", facts, lambda name, config: built.setdefault(name, config))
    ran = result(entry("MA-b", 7000, 400), entry("MA-b", 7000, 400), entry("SA-b", 2300, 100))
    config = builder(ran)
    k = matched_samples(7400, 2400)
    assert config.samples == k == facts["samples"] and config.temperature == 0.7 and row.samples == 1
    assert facts["k_from"] == f"measured: MA-b 7400 / SA-b 2400 tokens per decision = {7400 / 2400:.2f}, k = {k}"


def test_a_deferred_row_without_its_anchors_is_not_run_with_the_reason():
    facts: dict = {"kind": "SC", "status": "run"}
    builder = deferred_builder("SC-b", OmegaConf.create({"samples": 1}), "MA-b", "SA-b", facts, lambda *_: "built")
    assert builder(result(entry("SA-b", 100, 10))) is None
    assert facts["status"] == ("not run: compute_match needs the tokens per decision of MA-b and SA-b; "
                               "MA-b made no LLM decision in this run")


def test_an_explicit_budget_says_so():
    assert explicit_budget(OmegaConf.create({"samples": 3})) == "explicit budget: k = 3 (set in the row's config)"
    assert explicit_budget(OmegaConf.create({"samples": 1})) is None
    assert explicit_budget(OmegaConf.create({})) is None


@pytest.mark.slow
def test_the_run_builds_every_row_from_its_config_and_defers_the_matched_one():
    """`+suite=paper` on the tiny backbone: FinRL's root interpolations resolve, SC-tiny waits for MA and SA."""
    import run_benchmark
    from cli_helpers import ROOT
    from hydra import compose, initialize_config_dir
    from omegaconf import open_dict

    from frameworks.suite_rows import expand_rows
    from harness.runner import DeferredEntry

    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["+suite=paper", "backbones=[tiny]", "seeds=[0]",
                                                       "frameworks.finrl_a2c.timesteps=10", "~frameworks.finrl_ppo"])
    rows, facts = expand_rows(cfg.frameworks, cfg.rows, cfg.get("backbones"), [0])
    with open_dict(cfg):
        cfg.frameworks = rows
    entries = run_benchmark.framework_entries(cfg, facts, {"data": cfg.data, "tools": cfg.tools}, cfg.execution)
    built = [e.name for e in entries if not isinstance(e, DeferredEntry)]
    assert built == [name for name in rows if name != "SC-tiny"] and "finrl_a2c" in built
    (deferred,) = [e for e in entries if isinstance(e, DeferredEntry)]
    assert deferred.name == "SC-tiny" and entries[-1] is deferred, "the matched row runs after MA and SA"
    ran = RunResult(episodes={}, decisions=[entry("MA-tiny", 900, 100), entry("SA-tiny", 450, 50)])
    sc = deferred.build(ran)
    assert sc.framework.samples == 2 == facts["SC-tiny"]["samples"] and cfg.frameworks["SC-tiny"].samples == 2
