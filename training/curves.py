"""Training curves from the per-step CSV logs of one or more runs, as PNG files.

    python -m training.curves RUN_DIR [RUN_DIR ...] --out results/training [--window 10]

Each run is labelled by its folder name (e.g. seed-0). Two figures: `reward_curves.png` (the
total reward α·R_result + R_format + R_tool and each component, the reward means TRL logged)
and `decision_curves.png` (regime accuracy, the informative tool's share of the calls, the
share of episodes that read it, tool calls per episode). Thin lines are the logged steps,
thick lines their moving average over `window` steps.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

REWARD_PANELS = {"reward": "total reward R", "rewards/result/mean": "R_result",
                 "rewards/format/mean": "R_format", "rewards/tool/mean": "R_tool"}
DECISION_PANELS = {"episodes/regime_accuracy": "regime accuracy",
                   "episodes/informative_share": "informative tool: share of calls",
                   "episodes/informative_read": "informative tool: share of episodes",
                   "episodes/tool_calls": "tool calls per episode"}


def plot_panels(logs: dict[str, pd.DataFrame], panels: dict[str, str], path: Path, window: int) -> Path:
    """One panel per column of `panels` (present in some log): every run's steps and moving average."""
    shown = {column: title for column, title in panels.items() if any(column in log for log in logs.values())}
    figure, axes = plt.subplots(1, len(shown), figsize=(4.2 * len(shown), 3.4), squeeze=False)
    for axis, (column, title) in zip(axes[0], shown.items()):
        for index, (label, log) in enumerate(logs.items()):
            if column not in log:
                continue
            colour = f"C{index}"
            axis.plot(log["step"], log[column], color=colour, alpha=0.25, linewidth=0.8)
            axis.plot(log["step"], log[column].rolling(window, min_periods=1).mean(), color=colour, label=label)
        axis.set_title(title)
        axis.set_xlabel("optimizer step")
        axis.grid(alpha=0.3)
    axes[0][0].legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write_curves(run_dirs: list[Path], out: Path, window: int = 10) -> list[Path]:
    """reward_curves.png and decision_curves.png in `out` from each run's steps.csv."""
    logs = {Path(run).name: pd.read_csv(Path(run) / "steps.csv") for run in run_dirs}
    return [plot_panels(logs, REWARD_PANELS, out / "reward_curves.png", window),
            plot_panels(logs, DECISION_PANELS, out / "decision_curves.png", window)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.curves", description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--window", type=int, default=10, help="moving-average window in steps")
    args = parser.parse_args(argv)
    for path in write_curves(args.run_dirs, args.out, args.window):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
