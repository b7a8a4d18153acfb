"""What a training run left next to a checkpoint, for the provenance of a trained row.

A checkpoint is `<run>/checkpoint-<step>/policy` (docs/training.md): TRL's `trainer_state.json`
sits in `checkpoint-<step>/` (`global_step`, `max_steps`), the run's `steps.csv` in `<run>/`
(one row per optimizer step: `reward`, cumulative `wall_s`). From them:

- `steps`: the checkpoint's optimizer step; `max_steps`: the steps the run was configured for;
- `wall_s`: the run's cumulative wall seconds at that step;
- `converged`: False when the checkpoint stops before `max_steps`, or when the reward is still
  rising over the last quarter of the steps up to it (least-squares slope of reward on step
  with t = slope / se > `RISING_T`); True otherwise; None without `steps.csv` and
  `trainer_state.json`. `convergence` says which in words.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

RISING_T = 2.0
"""t statistic of the reward's slope over the last quarter of steps above which training is still improving."""
MIN_TAIL_STEPS = 4
"""Fewest steps in the last quarter for the slope test."""


def reward_slope_t(steps: np.ndarray, rewards: np.ndarray) -> float:
    """t statistic of the least-squares slope of `rewards` on `steps` (NaN below 3 points or without spread)."""
    if len(steps) < 3 or np.ptp(steps) == 0:
        return float("nan")
    slope, intercept = np.polyfit(steps, rewards, 1)
    residuals = rewards - (slope * steps + intercept)
    se = np.sqrt(residuals @ residuals / (len(steps) - 2) / ((steps - steps.mean()) ** 2).sum())
    return float(slope / se) if se > 0 else float("inf") * np.sign(slope)


def _trainer_state(step_dir: Path) -> dict[str, Any]:
    path = step_dir / "trainer_state.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _steps_up_to(run_dir: Path, step: int | None) -> pd.DataFrame:
    path = run_dir / "steps.csv"
    if not path.is_file():
        return pd.DataFrame()
    steps = pd.read_csv(path)
    return steps[steps["step"] <= step] if step is not None and "step" in steps else steps


def training_facts(checkpoint: str | Path) -> dict[str, Any]:
    """`steps`, `max_steps`, `wall_s`, `converged` and `convergence` of the run behind `checkpoint` (see module)."""
    policy = Path(checkpoint)
    step_dir = policy.parent if policy.name == "policy" else policy
    state = _trainer_state(step_dir)
    step = state.get("global_step")
    if step is None and step_dir.name.startswith("checkpoint-") and step_dir.name[11:].isdigit():
        step = int(step_dir.name[11:])
    max_steps = state.get("max_steps")
    steps = _steps_up_to(step_dir.parent, step)
    wall = float(steps["wall_s"].iloc[-1]) if "wall_s" in steps and len(steps) else None
    facts: dict[str, Any] = {"steps": step, "max_steps": max_steps, "wall_s": wall}
    if step is not None and max_steps and step < max_steps:
        return {**facts, "converged": False, "convergence": f"not converged: stopped at step {step} of {max_steps}"}
    if "reward" not in steps or len(steps) < 4 * MIN_TAIL_STEPS:
        return {**facts, "converged": None, "convergence": "unknown: no steps.csv with enough steps"}
    tail = steps.iloc[-(len(steps) // 4):]
    t = reward_slope_t(tail["step"].to_numpy(float), tail["reward"].to_numpy(float))
    if t > RISING_T:
        return {**facts, "converged": False,
                "convergence": f"not converged: reward still rising over the last {len(tail)} steps (t = {t:.1f})"}
    return {**facts, "converged": True, "convergence": f"reward flat over the last {len(tail)} steps (t = {t:.1f})"}
