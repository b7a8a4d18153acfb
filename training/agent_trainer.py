"""TRL's GRPOTrainer, told which episode each prompt is.

TRL 1.16 hands `rollout_func` the prompts only (its other dataset columns reach the reward
functions, not the rollout). An episode needs its ticker and date, so this trainer keeps the
batch's dataset rows in `batch_rows` while it generates: they are the `inputs` of
`_generate_and_score_completions`, one per prompt, in the prompts' order. Rollout statistics
(`training.episode_stats`) join TRL's own per-step metrics under `episodes/`.
"""

from __future__ import annotations

from typing import Any

from trl import GRPOTrainer


class AgentGRPOTrainer(GRPOTrainer):
    """GRPOTrainer whose rollout function can read `batch_rows` and report `log_rollout`."""

    batch_rows: list[dict[str, Any]] = []

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        self.batch_rows = inputs
        return super()._generate_and_score_completions(inputs)

    def log_rollout(self, stats: dict[str, float]) -> None:
        """Add one value per statistic to this step's metrics (TRL averages them over a logging interval)."""
        mode = "train" if self.model.training else "eval"
        for name, value in stats.items():
            self._metrics[mode][f"episodes/{name}"].append(value)
