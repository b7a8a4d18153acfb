"""A short asynchronous GRPO run of the tiny model through train_single_agent.train (η = 0, no
throttle, so the group sampled while the first update runs is certain to go stale): the weights
change, every consumed group's staleness is ≤ max_staleness, stale groups are dropped and counted
in steps.csv and groups.csv, the decoupled objective reaches TRL's loss as advantages w·Â with
w = π_prox/π_behav, and the checkpoints load as in synchronous training."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from safetensors.torch import load_file

import train_single_agent
from llm_backends.tiny import TinySpec, ensure_tiny
from llm_backends.transformers_engine import transformers_engine
from training import async_trainer
from training_runs import fast_config

pytestmark = pytest.mark.slow  # the module's one asynchronous GRPO run took 47 s under load

STEPS = 3
ASYNC = ["train.mode=async", "train.asynchronous.max_staleness=0", "train.asynchronous.throttle=false",
         "train.asynchronous.in_flight=finish", "train.asynchronous.objective=decoupled"]


class ProbedAsyncTrainer(async_trainer.AsyncAgentGRPOTrainer):
    """Keeps, per batch, the advantages before and after decoupling, log π_prox, log π_behav and the model-token mask."""

    probes: list[tuple[torch.Tensor, ...]] = []

    def _decouple(self, output):
        before = output["advantages"].clone()
        super()._decouple(output)
        mask = output["completion_mask"] * output["tool_mask"]
        ProbedAsyncTrainer.probes.append((before, output["advantages"], output["old_per_token_logps"],
                                          output["sampling_per_token_logps"], mask))


@pytest.fixture(scope="module")
def async_run(cache_root, tmp_path_factory):
    output = tmp_path_factory.mktemp("async") / "run"
    ProbedAsyncTrainer.probes = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(async_trainer, "AsyncAgentGRPOTrainer", ProbedAsyncTrainer)
        train_single_agent.train(fast_config(output, STEPS, *ASYNC))
    return output, list(ProbedAsyncTrainer.probes)


def test_the_weights_changed(async_run):
    output, _ = async_run
    start = load_file(ensure_tiny(TinySpec(initializer_range=0.02)) / "model.safetensors")
    trained = load_file(output / f"checkpoint-{STEPS}" / "policy" / "model.safetensors")
    assert any(not torch.equal(start[name], trained[name]) for name in start)


def test_consumed_groups_are_within_the_staleness_bound_and_stale_ones_are_dropped_and_counted(async_run):
    output, _ = async_run
    steps = pd.read_csv(output / "steps.csv")
    groups = pd.read_csv(output / "groups.csv")
    assert steps["step"].tolist() == list(range(1, STEPS + 1))
    assert (steps["async/staleness_max"] <= 0).all() and (steps["async/staleness_mean"] <= 0).all()
    consumed = groups[groups["consumed"]]
    assert len(consumed) == STEPS * 2                                  # prompts_per_step groups per step
    assert (consumed["staleness"] <= 0).all()
    assert (consumed["staleness"] == consumed["trainer_version"] - consumed["oldest_version"]).all()
    dropped = groups[~groups["consumed"]]
    assert len(dropped) >= 1 and (dropped["staleness"] > 0).all()
    assert steps["async/dropped"].sum() == len(dropped)
    assert groups["group"].is_unique


def test_the_decoupled_objective_reaches_the_loss_as_weighted_advantages(async_run):
    _, probes = async_run
    assert len(probes) == STEPS
    for before, after, proximal, behaviour, mask in probes:
        assert before.dim() == 1 and after.shape == proximal.shape
        model = mask.bool()
        weights = torch.exp(proximal - behaviour)
        assert torch.allclose(after[model], (before[:, None] * weights)[model], atol=1e-5)
        assert torch.equal(after[~model], before[:, None].expand_as(after)[~model])
        # η = 0: every consumed token was sampled by the weights of this update, so w ≈ 1
        assert torch.allclose(weights[model], torch.ones_like(weights[model]), atol=1e-3)


def test_checkpoints_load_with_their_own_fingerprints(async_run):
    output, _ = async_run
    prints = {transformers_engine(str(output / f"checkpoint-{step}" / "policy"), cache=False).fingerprint()
              for step in (STEPS - 1, STEPS)}
    assert len(prints) == 2
    assert (output / f"checkpoint-{STEPS}" / "async_state.json").is_file()
