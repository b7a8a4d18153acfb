"""A short GRPO run of the tiny model through train_single_agent.train: the weights change, the
tool tokens get exactly zero gradient, the sampled tokens reach the loss as sampled, every reward
component is logged, and each checkpoint's policy folder loads with its own fingerprint."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch
from safetensors.torch import load_file

import train_single_agent
from llm_backends.tiny import TinySpec, ensure_tiny
from llm_backends.transformers_engine import transformers_engine
from training import grpo
from training.agent_trainer import AgentGRPOTrainer
from training_runs import fast_config

class ProbedTrainer(AgentGRPOTrainer):
    """Keeps, for every loss computed, the per-token log-probabilities (their gradient retained),
    the completion mask (0 on padding), the tool mask (`env_mask`: 0 on tool and template tokens)
    and the log-probabilities the rollout sampled with."""

    probes: list[tuple[torch.Tensor, ...]] = []

    def _compute_loss(self, model, inputs):
        compute = self._get_per_token_logps_and_entropies

        def capture(*args, **kwargs):
            logps, entropies, aux = compute(*args, **kwargs)
            if logps.requires_grad:
                logps.retain_grad()
                ProbedTrainer.probes.append((logps, inputs["completion_mask"], inputs["tool_mask"],
                                             inputs["sampling_per_token_logps"]))
            return logps, entropies, aux

        self._get_per_token_logps_and_entropies = capture
        try:
            return super()._compute_loss(model, inputs)
        finally:
            del self._get_per_token_logps_and_entropies


@pytest.fixture(scope="module")
def short_run(cache_root, tmp_path_factory):
    output = tmp_path_factory.mktemp("grpo") / "run"
    ProbedTrainer.probes = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grpo, "AgentGRPOTrainer", ProbedTrainer)
        train_single_agent.train(fast_config(output, steps=2))
    return output, list(ProbedTrainer.probes)


@pytest.mark.slow
def test_the_weights_changed(short_run):
    output, _ = short_run
    start = load_file(ensure_tiny(TinySpec(initializer_range=0.02)) / "model.safetensors")
    trained = load_file(output / "checkpoint-2" / "policy" / "model.safetensors")
    assert start.keys() == trained.keys()
    assert any(not torch.equal(start[name], trained[name]) for name in start)


@pytest.mark.slow
def test_tool_tokens_get_zero_gradient(short_run):
    _, probes = short_run
    assert probes
    tool_positions = model_positions = 0
    for logps, completion, tool, _ in probes:
        gradient = logps.grad
        assert gradient is not None
        tools = (completion == 1) & (tool == 0)
        assert torch.all(gradient[tools] == 0)
        tool_positions += int(tools.sum())
        model_positions += int((gradient[(completion == 1) & (tool == 1)] != 0).sum())
    assert tool_positions > 0 and model_positions > 0


@pytest.mark.slow
def test_sampled_tokens_reach_the_loss_as_sampled(short_run):
    _, probes = short_run
    logps, completion, tool, sampled = probes[0]     # the first micro-batch: the weights that sampled them
    model = (completion * tool).bool()
    assert model.any()
    assert torch.allclose(logps.detach()[model], sampled[model], atol=1e-4)


@pytest.mark.slow
def test_every_component_and_decision_statistic_is_logged(short_run):
    output, _ = short_run
    steps = pd.read_csv(output / "steps.csv")
    assert steps["step"].tolist() == [1, 2]
    for column in ["reward", "rewards/result/mean", "rewards/format/mean", "rewards/tool/mean", "step_time",
                   "episodes/regime_accuracy", "episodes/tool_calls", "episodes/informative_share",
                   "episodes/format_failures", "completions/mean_length", "wall_s", "cpu_s"]:
        assert column in steps, column
    assert all(math.isfinite(v) for v in steps["rewards/result/mean"])
    assert any((output / "tensorboard").glob("events.out.tfevents.*"))


@pytest.mark.slow
def test_checkpoints_load_with_their_own_fingerprints(short_run):
    output, _ = short_run
    prints = {transformers_engine(str(output / f"checkpoint-{step}" / "policy"), cache=False).fingerprint()
              for step in (1, 2)}
    start = transformers_engine(str(ensure_tiny(TinySpec(initializer_range=0.02))), cache=False).fingerprint()
    assert len(prints | {start}) == 3
