"""Train the single agent (AlphaQuanter) with GRPO, TRL's GRPOTrainer, on one market.

    python train_single_agent.py                          # cpu_tiny on data=synthetic_news, seed 0
    python train_single_agent.py seed=1                   # the second seed of the proof
    python train_single_agent.py train=cpu_smollm2        # SmolLM2-135M with LoRA, a short CPU run
    python train_single_agent.py train.mode=async         # asynchronous GRPO (configs/asynchronous/default.yaml)
    python train_single_agent.py train=paper data=yfinance split=paper tickers=[GOOGL,META,MSFT,NVDA,TSLA] \
        train.model.path=/models/Qwen2.5-3B-Instruct      # the paper's recipe, on a GPU

The story: one prompt per (ticker, day) of the train split with its regime label; an optional
language-model pretraining on the market's text (`training.pretrain`); an optional warm start
(SFT on demonstrations); then GRPO with the rollout engine as TRL's rollout_func and
the reward's components as reward functions, validated on the valid split through the
benchmark's runner. Everything lands in `output_dir` (outputs/train/<recipe>/seed-<seed>):
`steps.csv`, `tensorboard/`, `validation.csv`, `checkpoint-<step>/policy/` (what
`run_benchmark.py ... frameworks.<name>.checkpoint=<path>` evaluates). The same command resumes
a killed run from its last checkpoint; a different run into the same `output_dir` (another seed,
recipe, model or data) is refused with one line naming what differs, unless `resume=force`
(`training.run_identity`). Bad configuration or data stops with one `error:` line, exit 2
(`core.errors`); a bug stops with its traceback, exit 1.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import hydra
import torch
from omegaconf import DictConfig, OmegaConf
from transformers import set_seed

from configs import CONFIG_DIR, SEARCH_PATH
from configs.overrides import check_group_overrides
from core.config_keys import check_primary_keys, typed_config
from core.errors import ConfigError, exit_on_user_error
from frameworks.registry import instantiate_or_explain
from harness.decision_inputs import data_fingerprint
from harness.execution import ExecutionConfig
from market.data import MarketData
from market.splits import Splits
from single_agent.rewards import RewardConfig
from training.async_trainer import async_grpo_trainer
from training.checkpoints import check_checkpoint_model, checkpoint_step, last_checkpoint
from training.config import TrainConfig
from training.demonstrations import demonstration_episodes, supervised_dataset
from training.grpo import grpo_trainer
from training.policy_model import initial_policy_folder, load_policy, rollout_engine
from training.prompt_dataset import balanced_regimes, labelled_days, prompt_dataset
from training.run_identity import claim_output_dir, record_identity, run_identity
from training.trainer_arguments import monitoring_callbacks
from training.validation import Validation, ValidationSetup
from training.pretrain import PRETRAIN_DIR, pretrain_policy, pretraining_dataset, pretraining_documents, pretraining_pairs
from training.warm_start import run_supervised, run_warm_start, warm_start_policy



def validation_setup(data: MarketData, tickers: list[str], splits: Splits, cfg: DictConfig, config: TrainConfig,
                     reward: RewardConfig) -> ValidationSetup:
    """The validation tickers over the last `validation_days` bars of the valid window, under the run's rules."""
    monitoring = config.monitoring
    chosen = monitoring.validation_tickers or tickers
    days = data.trading_days(chosen[0], splits.valid.start, splits.valid.end)
    start = days[-monitoring.validation_days] if monitoring.validation_days else days[0]
    execution = typed_config(ExecutionConfig, OmegaConf.to_container(cfg.execution, resolve=True), "execution")
    return ValidationSetup(data=data, tickers=chosen, start=start, end=days[-1], execution=execution,
                           protocol=config.protocol, reward=reward, constrained=config.constrained,
                           informative_tool=config.informative_tool)


def train(cfg: DictConfig) -> Path:
    """Run (or resume) the configured training; returns the output directory."""
    check_primary_keys(cfg, CONFIG_DIR / "train_single_agent.yaml")
    missing = sorted(OmegaConf.missing_keys(cfg))
    if missing:
        raise ConfigError(f"{missing[0]} is not set: add {missing[0]}=VALUE to the command line")
    config = typed_config(TrainConfig, OmegaConf.to_container(cfg.train, resolve=True), "train")
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)
    output_dir, seed, tickers = Path(cfg.output_dir), int(cfg.seed), list(cfg.tickers)
    set_seed(seed)
    started = time.perf_counter()

    data = instantiate_or_explain(cfg.data, "data")
    splits = typed_config(Splits, OmegaConf.to_container(cfg.split, resolve=True), "split")
    for ticker in tickers:
        splits.check(data.frame(ticker).index, data.origin.get(ticker, ticker))
    protocol, reward = config.protocol, config.reward
    identity = run_identity({**{key: OmegaConf.to_container(cfg[key], resolve=True) for key in ("train", "data", "split")},
                             "seed": seed, "tickers": tickers, "data_digest": data_fingerprint(data, splits.valid.end)})
    config_hash = claim_output_dir(output_dir, identity, str(cfg.resume))
    resume = last_checkpoint(output_dir)
    train_days = labelled_days(data, tickers, splits.train, reward)

    start = initial_policy_folder(config.model)
    if config.pretrain is not None and config.pretrain.enabled:
        if not (pretrain_policy(output_dir) / "config.json").is_file():
            model, tokenizer = load_policy(start, config.model)
            documents = pretraining_documents(tokenizer, protocol, data,
                                              pretraining_pairs(train_days, config.pretrain.documents, seed), seed)
            run_supervised(model, tokenizer, pretraining_dataset(tokenizer, documents), config.pretrain, config,
                           output_dir / PRETRAIN_DIR, seed)
        start = pretrain_policy(output_dir)
    if config.warm_start.enabled:
        if not (warm_start_policy(output_dir) / "config.json").is_file():
            model, tokenizer = load_policy(start, config.model)
            demonstrations = demonstration_episodes(
                rollout_engine(model, tokenizer, "demonstrations"), protocol, data, train_days,
                config.warm_start.episodes, seed, randomise=config.warm_start.demonstrations == "expert_random",
                terse=config.warm_start.terse)
            run_warm_start(model, tokenizer, supervised_dataset(demonstrations, config.warm_start.results_loss), config,
                           output_dir, seed)
        start = warm_start_policy(output_dir)

    model, tokenizer = load_policy(start, config.model)
    if resume is not None:
        check_checkpoint_model(resume, model, config.model)
    record_identity(output_dir, identity)  # the run goes on as this one (also after resume=force)
    callbacks = monitoring_callbacks(output_dir, config.monitoring, checkpoint_step(resume))
    if config.monitoring.validate_every:
        setup = validation_setup(data, tickers, splits, cfg, config, reward)
        callbacks.append(Validation(setup, output_dir, start, config.monitoring.validate_every, checkpoint_step(resume)))
    prompt_days = balanced_regimes(train_days, seed) if config.balance_regimes else train_days
    prompts = prompt_dataset(prompt_days, protocol)
    if config.mode == "async":
        trainer = async_grpo_trainer(model, tokenizer, prompts, config, protocol, reward, data, output_dir, seed,
                                     callbacks, start, resume)
        try:
            trainer.train(resume_from_checkpoint=str(resume) if resume else None)
        finally:
            trainer.samples.stop()
    else:
        trainer = grpo_trainer(model, tokenizer, prompts, config, protocol, reward, data, output_dir, seed, callbacks)
        trainer.train(resume_from_checkpoint=str(resume) if resume else None)

    facts = {"recipe": config.name, "mode": config.mode, "seed": seed, "tickers": tickers, "config_hash": config_hash,
             "train_prompts": len(prompt_days),
             "started_from": str(start), "resumed_from": str(resume) if resume else None,
             "steps": trainer.state.global_step, "wall_s_this_call": round(time.perf_counter() - started, 1)}
    if trainer.accelerator.is_main_process:
        (output_dir / "run.json").write_text(json.dumps(facts, indent=2) + "\n")
    print(f"trained {config.name} to step {trainer.state.global_step}; checkpoints and steps.csv in {output_dir}")
    return output_dir


@hydra.main(version_base="1.3", config_path=SEARCH_PATH, config_name="train_single_agent")
def main(cfg: DictConfig) -> None:
    with exit_on_user_error():
        train(cfg)


def cli() -> None:
    """The command line (`python train_single_agent.py` or the installed `tradeduel-train`): a config group
    option that does not exist is one line (`configs.overrides`), then the Hydra app."""
    with exit_on_user_error():
        check_group_overrides(sys.argv[1:])
    main()


if __name__ == "__main__":
    cli()
