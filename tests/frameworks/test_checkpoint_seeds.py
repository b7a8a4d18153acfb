"""Trained rows whose seeds are training seeds: seed k decides with checkpoint k, and the training
run's steps, wall time and convergence come along as provenance."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import AutoModelForCausalLM

from core.errors import ConfigError
from frameworks.checkpoint_seeds import CheckpointPerSeed
from frameworks.single_agent import SingleAgent
from composed_options import agent_options
from llm_backends.paths import CACHE_ENV
from llm_backends.tiny import TinySpec, ensure_tiny
from market.decision import DecisionContext
from market.sources.embedded import load_embedded
from market.view import MarketView
from single_agent.training_facts import training_facts
from tools import ToolSet

MARKET = load_embedded(["MSFT"])
DAYS = [pd.Timestamp(day) for day in ("2020-06-01", "2020-06-02", "2020-06-03", "2020-06-04")]


def contexts(seed: int) -> list[DecisionContext]:
    return [DecisionContext(ticker="MSFT", date=day, view=MarketView(MARKET, day), seed=seed,
                            tools=ToolSet(MarketView(MARKET, day))) for day in DAYS]


def training_run(root, folder, step: int, max_steps: int, rewards: np.ndarray):
    """A training run folder as train_single_agent.py writes it: steps.csv and checkpoint-<step>/policy."""
    policy = root / f"checkpoint-{step}" / "policy"
    shutil.copytree(folder, policy)
    (policy.parent / "trainer_state.json").write_text(json.dumps({"global_step": step, "max_steps": max_steps}))
    steps = np.arange(1, len(rewards) + 1)
    pd.DataFrame({"step": steps, "reward": rewards, "wall_s": 2.0 * steps}).to_csv(root / "steps.csv", index=False)
    return policy


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """Seed 0: the tiny model, trained to its last step with a flat reward; seed 1: other weights, stopped early."""
    root = tmp_path_factory.mktemp("tradeduel-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(root))
        torch.set_num_threads(1)
        tiny = ensure_tiny(TinySpec())
        other = tmp_path_factory.mktemp("other") / "model"
        model = AutoModelForCausalLM.from_pretrained(tiny)
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(torch.randn_like(parameter) * 0.5, alpha=1.0)
        model.save_pretrained(other)
        for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json"):
            if (tiny / name).is_file():
                shutil.copy(tiny / name, other / name)
        runs = tmp_path_factory.mktemp("train")
        flat = np.tile([0.9, 1.1], 20)
        yield {0: training_run(runs / "seed-0", tiny, 40, 40, flat),
               1: training_run(runs / "seed-1", other, 20, 40, np.linspace(-1, 1, 20))}


@pytest.mark.slow
def test_each_seed_decides_with_its_own_checkpoint(checkpoints):
    framework = CheckpointPerSeed({0: str(checkpoints[0]), 1: str(checkpoints[1])}, **agent_options(llm=None))
    assert framework.stochastic
    mixed = [c for pair in zip(contexts(0), contexts(1)) for c in pair]
    decisions = framework.decide(mixed)
    for seed in (0, 1):
        alone = SingleAgent(**agent_options(llm=None), checkpoint=str(checkpoints[seed])).decide(contexts(seed))
        assert [d.action for d in decisions[seed::2]] == [d.action for d in alone]
    assert framework.fingerprint() != CheckpointPerSeed({0: str(checkpoints[0])}, **agent_options(llm=None)).fingerprint()
    with pytest.raises(ConfigError, match="no checkpoint for seed 2"):
        framework.decide(contexts(2))


def test_run_facts_carry_each_seeds_training_steps_wall_time_and_convergence(checkpoints):
    facts = CheckpointPerSeed({0: str(checkpoints[0]), 1: str(checkpoints[1])}, **agent_options(llm=None)).run_facts()
    first, second = facts["seeds"]["0"], facts["seeds"]["1"]
    assert (first["steps"], first["max_steps"], first["wall_s"], first["converged"]) == (40, 40, 80.0, True)
    assert (second["steps"], second["converged"]) == (20, False)
    assert second["convergence"] == "not converged: stopped at step 20 of 40"


def test_a_reward_still_rising_at_the_last_step_is_not_converged(tmp_path, checkpoints):
    rising = training_run(tmp_path / "seed-0", checkpoints[0], 40, 40, np.linspace(0, 2, 40))
    facts = training_facts(rising)
    assert facts["converged"] is False and facts["convergence"].startswith("not converged: reward still rising")
    assert training_facts(tmp_path / "nowhere" / "checkpoint-7" / "policy")["steps"] == 7
    assert training_facts(tmp_path / "nowhere" / "checkpoint-7" / "policy")["converged"] is None
