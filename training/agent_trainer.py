"""TRL's GRPOTrainer, told which episode each prompt is, with exact fast log-prob passes.

TRL 1.16 hands `rollout_func` the prompts only (its other dataset columns reach the reward
functions, not the rollout). An episode needs its ticker and date, so this trainer keeps the
batch's dataset rows in `batch_rows` while it generates: they are the `inputs` of
`_generate_and_score_completions`, one per prompt, in the prompts' order. Rollout statistics
(`training.episode_stats`) join TRL's own per-step metrics under `episodes/`.

Every log-prob pass of TRL's GRPO (the policy's in the loss, the reference model's, the old
policy's when μ > 1) goes through `_get_per_token_logps_and_entropies`; with `fast_paths` on it
runs `training.causal_passes.fused_logps` per micro-batch instead (packed, unmasked, the shared
prefix once), and TRL's own code for what that does not cover (multimodal inputs, MoE aux losses).
With `grammar_logprobs` every pass scores the grammar-constrained policy instead
(`training.grammar_logprobs`): the rollout function leaves each episode's grammar supports in
`batch_grammar`; the passes of the generation step (reference and old policy) read them in the
rollout's row order, and they travel with the batch as `grammar_kind` / `grammar_ids`, which
TRL shuffles and splits with the other tensors, to the loss's pass.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel
from trl import GRPOTrainer

from training.causal_passes import fused_logps
from training.config import FastPaths
from training.grammar_logprobs import grammar_logps, support_tensors


class AgentGRPOTrainer(GRPOTrainer):
    """GRPOTrainer whose rollout function can read `batch_rows` and report `log_rollout`."""

    batch_rows: list[dict[str, Any]] = []

    def __init__(self, *args: Any, fast_paths: FastPaths | None = None, grammar_logprobs: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fast_paths = fast_paths or FastPaths()
        self.grammar_logprobs = grammar_logprobs
        self.batch_grammar: list | None = None
        self._support: tuple[torch.Tensor, torch.Tensor] | None = None
        self._batch_support: tuple[torch.Tensor, torch.Tensor] | None = None

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        self.batch_rows = inputs
        if not self.grammar_logprobs:
            return super()._generate_and_score_completions(inputs)
        self.batch_grammar, self._batch_support = None, None
        output = super()._generate_and_score_completions(inputs)
        kind, ids = self._generation_support(output["completion_ids"].size(1))
        output["grammar_kind"], output["grammar_ids"] = kind.to(self.accelerator.device), ids.to(self.accelerator.device)
        self.batch_grammar, self._batch_support = None, None
        return output

    def _generation_support(self, length: int) -> tuple[torch.Tensor, torch.Tensor]:
        """`support_tensors` of the rollout's `batch_grammar`, built once per generation step."""
        if self.batch_grammar is None:
            raise RuntimeError("grammar_logprobs needs the rollout function to set batch_grammar")
        if self._batch_support is None or self._batch_support[0].size(1) != length:
            self._batch_support = support_tensors(self.batch_grammar, length)
        return self._batch_support

    def _compute_loss(self, model, inputs):
        if not self.grammar_logprobs:
            return super()._compute_loss(model, inputs)
        self._support = (inputs["grammar_kind"], inputs["grammar_ids"])
        try:
            return super()._compute_loss(model, inputs)
        finally:
            self._support = None

    def log_rollout(self, stats: dict[str, float]) -> None:
        """Add one value per statistic to this step's metrics (TRL averages them over a logging interval)."""
        mode = "train" if self.model.training else "eval"
        for name, value in stats.items():
            self._metrics[mode][f"episodes/{name}"].append(value)

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None,
                                           compute_entropy=False, compute_aux_loss=False, **multimodal):
        """TRL's pass, or with `fast_paths.unmasked_causal` `fused_logps` per micro-batch of `batch_size` rows.

        The shared prefix is left out where the model is wrapped for data parallelism and gradients
        are on: DDP expects one forward call per backward. With `grammar_logprobs`, `grammar_logps`
        per micro-batch, on the supports of the rows being scored."""
        if self.grammar_logprobs:
            return self._grammar_pass(model, input_ids, attention_mask, logits_to_keep, batch_size, compute_entropy)
        if not self.fast_paths.unmasked_causal or compute_aux_loss or any(v is not None for v in multimodal.values()):
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size, compute_entropy, compute_aux_loss,
                **multimodal)
        shared = self.fast_paths.shared_prefix and not (torch.is_grad_enabled()
                                                        and isinstance(model, DistributedDataParallel))
        logps, entropies = self._micro_batches(input_ids.size(0), batch_size, lambda rows: fused_logps(
            model, input_ids[rows], attention_mask[rows], logits_to_keep, unmasked=True, shared_prefix=shared))
        if compute_entropy and any(e is None for e in entropies):
            raise ValueError("the policy's fused LM head computes no entropy: add_fused_lm_head(outputs=('log_probs', 'entropy'))")
        return torch.cat(logps), torch.cat(entropies) if compute_entropy else None, None

    def _grammar_pass(self, model, input_ids, attention_mask, logits_to_keep, batch_size, compute_entropy):
        """`grammar_logps` per micro-batch: the loss's rows carry their supports (`_support`); the
        generation step's passes score the whole batch in the rollout's order (`batch_grammar`)."""
        kind, ids = self._support or self._generation_support(logits_to_keep)
        if kind.size(0) != input_ids.size(0):
            raise RuntimeError(f"grammar supports for {kind.size(0)} rows, {input_ids.size(0)} rows scored")
        logps, entropies = self._micro_batches(input_ids.size(0), batch_size, lambda rows: grammar_logps(
            model, input_ids[rows], attention_mask[rows], logits_to_keep, kind[rows], ids[rows], self.temperature))
        return torch.cat(logps), torch.cat(entropies) if compute_entropy else None, None

    def _micro_batches(self, count: int, batch_size: int | None, score) -> tuple[list, list]:
        """`score(rows)` -> (log-probs, entropies) for each micro-batch of `batch_size` of `count`
        rows (all at once without one), under the accelerator's autocast; the two lists of chunks."""
        batch_size = batch_size or count
        logps, entropies = [], []
        for start in range(0, count, batch_size):
            with self.accelerator.autocast():
                chunk, entropy = score(slice(start, start + batch_size))
            logps.append(chunk)
            entropies.append(entropy)
        return logps, entropies
