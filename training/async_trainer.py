"""Asynchronous GRPO of the single agent: TRL's GRPOTrainer fed by a rollout process.

What is TRL's (1.16, reused as is): the optimizer loop, gradient accumulation, rewards from our
reward functions (`training.reward_functions`), group advantages, the clipped loss and its
normalisation (`loss_type`), the KL term, metrics, checkpoints and resume. What is ours:
`_generate_and_score_completions` takes its rows and completions from the rollout process
(`training.async_rollouts`) instead of generating, logs staleness per step (`async/*` in
steps.csv), and with `objective: decoupled` turns the advantages into AReaL's decoupled
objective (`training.decoupled_loss`): π_prox from a no-grad forward pass of the policy before
the update (`old_per_token_logps`), π_behav the log-probabilities the rollout sampled with.
The Trainer's own dataloader still paces the steps, but its rows are not used: the rollout
process owns the prompt order (`training.sample_groups.prompt_row`), so it can run ahead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from transformers import TrainerCallback

from market.data import MarketData
from single_agent.protocol import Protocol
from single_agent.rewards import RewardConfig
from training.agent_trainer import AgentGRPOTrainer
from training.async_rollouts import AsyncLifecycle, AsyncRollouts
from training.checkpoints import PolicyExport, checkpoint_step
from training.config import AsyncSettings, TrainConfig
from training.decoupled_loss import behaviour_weights, decoupled_advantages
from training.grpo import grpo_arguments, sampling_params
from training.policy_model import lora_config
from training.reward_functions import reward_functions, token_counter
from training.rollout_worker import WorkerSetup
from training.rollouts import loss_mask
from training.weight_sync import SharedWeights


class AsyncAgentGRPOTrainer(AgentGRPOTrainer):
    """AgentGRPOTrainer whose batches come from `samples` (see the module docstring)."""

    def __init__(self, *args: Any, samples: AsyncRollouts, settings: AsyncSettings, **kwargs: Any) -> None:
        super().__init__(*args, rollout_func=samples, **kwargs)
        self.samples = samples
        self.settings = settings

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        groups, stats = self.samples.take(self.state.global_step)
        rows = [dict(group.row) for group in groups for _ in group.episodes]  # one dict per completion: TRL writes into them
        if len(rows) != len(inputs):
            raise ValueError(f"{len(rows)} queued completions for a generation batch of {len(inputs)}")
        for name, value in stats.items():
            self._metrics["train"][f"async/{name}"].append(float(value))
        output = super()._generate_and_score_completions(rows)
        if self.settings.objective == "decoupled":
            self._decouple(output)
        return output

    def _decouple(self, output: dict[str, Any]) -> None:
        """Set `old_per_token_logps` = log π_prox and the advantages to w·Â (training.decoupled_loss)."""
        behaviour = output.get("sampling_per_token_logps")
        if behaviour is None:
            raise ValueError("the decoupled objective needs the rollout's sampling log-probabilities")
        proximal = output.get("old_per_token_logps")
        if proximal is None:
            proximal = self._proximal_logps(output)
            output["old_per_token_logps"] = proximal
        mask = output["completion_mask"] * output.get("tool_mask", torch.ones_like(output["completion_mask"]))
        weights = behaviour_weights(proximal, behaviour, mask, self.settings.behaviour_weight_cap)
        output["advantages"] = decoupled_advantages(output["advantages"], weights)
        inside = mask.bool()
        self._metrics["train"]["async/behaviour_weight_mean"].append(weights[inside].mean().item())
        self._metrics["train"]["async/behaviour_weight_max"].append(weights[inside].max().item())
        self._metrics["train"]["async/behaviour_weight_zeroed"].append((weights[inside] == 0).float().mean().item())

    @torch.no_grad()
    def _proximal_logps(self, output: dict[str, Any]) -> torch.Tensor:
        """log π_prox per completion token: the policy's weights now, before this update."""
        completion_ids = output["completion_ids"]
        input_ids = torch.cat([output["prompt_ids"], completion_ids], dim=1)
        attention_mask = torch.cat([output["prompt_mask"], output["completion_mask"]], dim=1)
        logps, _, _ = self._get_per_token_logps_and_entropies(self.model, input_ids, attention_mask,
                                                              completion_ids.size(1),
                                                              batch_size=self.args.per_device_train_batch_size)
        return logps


def worker_setup(config: TrainConfig, protocol: Protocol, data: MarketData, prompts: Dataset, start: Path,
                 seed: int) -> WorkerSetup:
    """The rollout process's setup from the recipe (the prompt stream's start is set when training begins)."""
    return WorkerSetup(policy_folder=str(start), model=config.model, protocol=protocol, data=data,
                       rows=prompts.to_list(), params=sampling_params(config, protocol), constrained=config.constrained,
                       curriculum=config.tool_curriculum, seed=seed,
                       num_generations=config.optimisation.num_generations,
                       prompts_per_step=config.optimisation.prompts_per_step, settings=config.asynchronous,
                       torch_threads=config.torch_threads, first_group=0)


def async_grpo_trainer(model: Any, tokenizer: Any, prompts: Dataset, config: TrainConfig, protocol: Protocol,
                       reward: RewardConfig, data: MarketData, output_dir: Path, seed: int,
                       callbacks: list[TrainerCallback], start: Path, resume: Path | None) -> AsyncAgentGRPOTrainer:
    """The asynchronous GRPO trainer of `model` (started from folder `start`, resuming from `resume`)."""
    if config.asynchronous is None:
        raise ValueError("train.mode async needs train.asynchronous")
    if config.model.lora is not None:
        from peft import get_peft_model

        model = get_peft_model(model, lora_config(config.model.lora))
    samples = AsyncRollouts(worker_setup(config, protocol, data, prompts, start, seed), SharedWeights(model),
                            output_dir, informative_tool=config.informative_tool,
                            trajectory_filter=config.trajectory_filter, mask=loss_mask(config.loss_tokens, tokenizer),
                            resume_step=checkpoint_step(resume))
    functions, reward_weights = reward_functions(reward, token_counter(tokenizer), config.result_reward, seed)
    return AsyncAgentGRPOTrainer(
        model=model, reward_funcs=functions, args=grpo_arguments(config, output_dir, model, reward_weights, seed),
        train_dataset=prompts, processing_class=tokenizer, samples=samples, settings=config.asynchronous,
        callbacks=[AsyncLifecycle(samples, resume), PolicyExport(tokenizer), *callbacks], fast_paths=config.fast_paths,
    )
