"""The optional warm start: supervised fine-tuning (TRL SFTTrainer) on demonstrations; and the
supervised runner it shares with the pretraining stage (`run_supervised`, `training.pretrain`).

The loss is the negative log-likelihood of the demonstrator's own tokens only
(`assistant_masks`; prompt, tool and template tokens are masked out, unless
`warm_start.results_loss` puts the tool results and template tokens into the loss too). It runs in
`<output_dir>/warm_start/` with its own checkpoints and step log, resumes like GRPO, and ends
by writing `warm_start/policy/`, the folder GRPO starts from and the benchmark can load (the
proof's "starting point"; LoRA adapters, when configured, are merged into it). When that folder
exists the warm start is done and is skipped.

With `fast_paths.unmasked_causal` a batch that is right-padded only (TRL's collator pads on the
right, so every batch of unpacked sequences is) runs with no attention mask, on the causal
kernel (training.causal_passes): the loss is the masked path's to float rounding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datasets import Dataset
from trl import SFTConfig, SFTTrainer

from training.causal_passes import right_padded
from training.checkpoints import (
    POLICY_DIR,
    PolicyExport,
    checkpoint_step,
    last_checkpoint,
    save_policy,
)
from training.config import SupervisedStage, TrainConfig
from training.policy_model import lora_config
from training.trainer_arguments import monitoring_callbacks, shared_arguments

WARM_START_DIR = "warm_start"


class UnmaskedCall:
    """`model` called without its attention mask when that mask is right-padded only."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        mask = kwargs.get("attention_mask")
        if mask is not None and right_padded(mask):
            kwargs["attention_mask"] = None
        return self.model(*args, **kwargs)


class WarmStartTrainer(SFTTrainer):
    """SFTTrainer whose loss passes take the unmasked causal path when `unmasked_causal` (see the
    module docstring); TRL's `compute_loss` only calls `model`, and keeps reading the batch's mask
    for its token counts."""

    def __init__(self, *args: Any, unmasked_causal: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unmasked_causal = unmasked_causal

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        call = UnmaskedCall(model) if self.unmasked_causal else model
        return super().compute_loss(call, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)


def warm_start_policy(output_dir: Path) -> Path:
    """Where the warm start writes its final policy folder."""
    return Path(output_dir) / WARM_START_DIR / POLICY_DIR


def run_warm_start(model: Any, tokenizer: Any, demonstrations: Dataset, config: TrainConfig, output_dir: Path,
                   seed: int) -> Path:
    """Fine-tune `model` on `demonstrations` (see the module docstring); returns the policy folder."""
    return run_supervised(model, tokenizer, demonstrations, config.warm_start, config, Path(output_dir) / WARM_START_DIR,
                          seed)


def run_supervised(model: Any, tokenizer: Any, examples: Dataset, stage: SupervisedStage, config: TrainConfig,
                   folder: Path, seed: int) -> Path:
    """A supervised stage (`stage`'s optimisation) of `model` on `examples` (`input_ids`, `assistant_masks`: the
    tokens in the loss) in `folder`, resumed from its last checkpoint there; returns `folder/policy`."""
    resume = last_checkpoint(folder)
    args = SFTConfig(
        **shared_arguments(folder, model.dtype, config.model, config.monitoring, config.checkpoints, seed),
        num_train_epochs=stage.epochs,
        learning_rate=stage.learning_rate,
        lr_scheduler_type=stage.lr_scheduler_type,
        warmup_steps=stage.warmup_steps,
        per_device_train_batch_size=stage.micro_batch_size,
        gradient_accumulation_steps=stage.batch_size // stage.micro_batch_size,
        max_length=None,
    )
    lora = lora_config(config.model.lora) if config.model.lora else None
    trainer = WarmStartTrainer(model=model, args=args, train_dataset=examples, processing_class=tokenizer,
                               peft_config=lora, unmasked_causal=config.fast_paths.unmasked_causal,
                               callbacks=[*monitoring_callbacks(folder, config.monitoring, checkpoint_step(resume)),
                                          PolicyExport(tokenizer)])
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    return save_policy(trainer.model, tokenizer, Path(folder) / POLICY_DIR)
