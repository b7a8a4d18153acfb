"""GRPO of the single agent with TRL: the trainer, its arguments and its rollouts, assembled.

The optimisation is the recipe's, passed explicitly (`training.config.OptimisationConfig`):
one optimizer step per generated batch of `prompts_per_step` × `num_generations` completions,
computed in micro-batches; the reward is the three components of `training.reward_functions`
weighted [α, 1, 1]; rollouts are `training.rollouts.EpisodeRollouts` on an engine that shares
the policy's weights (LoRA adapters included: the model is wrapped before the engine is built).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from datasets import Dataset
from transformers import TrainerCallback
from trl import GRPOConfig

from llm_backends.types import SamplingParams
from market.data import MarketData
from single_agent.grammar import max_turn_tokens
from single_agent.protocol import Protocol
from single_agent.rewards import RewardConfig
from training.agent_trainer import AgentGRPOTrainer
from training.checkpoints import PolicyExport
from training.config import TrainConfig
from training.policy_model import lora_config, rollout_engine
from training.reward_functions import reward_functions, token_counter
from training.rollouts import ClearRolloutCache, EpisodeRollouts
from training.trainer_arguments import shared_arguments


def grpo_arguments(config: TrainConfig, output_dir: Path, model: Any, reward_weights: list[float],
                   seed: int) -> GRPOConfig:
    """GRPOConfig with every optimisation setting of the recipe (TRL's defaults are not relied on)."""
    opt = config.optimisation
    processes = int(os.environ.get("WORLD_SIZE", "1"))
    if opt.completions_per_step % (opt.micro_batch_size * processes):
        raise ValueError(f"{opt.completions_per_step} completions per step do not split into micro-batches of "
                         f"{opt.micro_batch_size} on {processes} processes")
    return GRPOConfig(
        **shared_arguments(output_dir, model.dtype, config.model, config.monitoring, config.checkpoints, seed),
        learning_rate=opt.learning_rate, lr_scheduler_type=opt.lr_scheduler_type, warmup_steps=opt.warmup_steps,
        weight_decay=opt.weight_decay, max_grad_norm=opt.max_grad_norm, beta=opt.beta, epsilon=opt.epsilon,
        epsilon_high=opt.epsilon_high, num_generations=opt.num_generations,
        per_device_train_batch_size=opt.micro_batch_size,
        gradient_accumulation_steps=opt.completions_per_step // (opt.micro_batch_size * processes),
        num_iterations=opt.num_iterations, max_steps=opt.max_steps, loss_type=opt.loss_type,
        scale_rewards=opt.scale_rewards, entropy_coef=opt.entropy_coef, temperature=opt.temperature, top_p=opt.top_p,
        reward_weights=reward_weights, remove_unused_columns=False, disable_dropout=True,
        mask_truncated_completions=False, log_completions=False,
    )


def sampling_params(config: TrainConfig, protocol: Protocol) -> SamplingParams:
    """Rollout sampling: the recipe's temperature and top-p; per turn the recipe's token budget,
    or the protocol's `max_turn_tokens` (the budget that never cuts a grammar-valid turn)."""
    opt = config.optimisation
    return SamplingParams(temperature=opt.temperature, top_p=opt.top_p,
                          max_new_tokens=config.max_new_tokens or max_turn_tokens(protocol))


def grpo_trainer(model: Any, tokenizer: Any, prompts: Dataset, config: TrainConfig, protocol: Protocol,
                 reward: RewardConfig, data: MarketData, output_dir: Path, seed: int,
                 callbacks: list[TrainerCallback]) -> AgentGRPOTrainer:
    """The GRPO trainer of `model` on `prompts` (see the module docstring)."""
    if config.model.lora is not None:
        from peft import get_peft_model

        model = get_peft_model(model, lora_config(config.model.lora))
    engine = rollout_engine(model, tokenizer, f"policy-{config.name}")
    rollouts = EpisodeRollouts(engine, protocol, data, sampling_params(config, protocol),
                               constrained=config.constrained, seed=seed, informative_tool=config.informative_tool,
                               trajectory_filter=config.trajectory_filter, curriculum=config.tool_curriculum,
                               loss_tokens=config.loss_tokens)
    functions, weights = reward_functions(reward, token_counter(tokenizer), config.result_reward, seed)
    return AgentGRPOTrainer(
        model=model, reward_funcs=functions, args=grpo_arguments(config, output_dir, model, weights, seed),
        train_dataset=prompts, processing_class=tokenizer, rollout_func=rollouts,
        callbacks=[ClearRolloutCache(engine), PolicyExport(tokenizer), *callbacks], fast_paths=config.fast_paths,
        grammar_logprobs=config.policy_logprobs == "grammar",
    )
