"""GRPO on two processes through accelerate (the launcher TRL's trainers run under): two steps of
the tiny recipe on CPU with gloo, both replicas' weights equal after each step, and a checkpoint
of the run evaluated by the benchmark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from cli_helpers import ROOT, benchmark_command, journal_rows, support_env
from training_runs import FAST

STEPS = 2


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_two_processes_train_equal_replicas_and_the_checkpoint_plays(cache_root, tmp_path):
    output = tmp_path / "run"
    accelerate = Path(sys.executable).with_name("accelerate")
    env = {**support_env(), "ACCELERATE_USE_CPU": "1", "OMP_NUM_THREADS": "1"}
    command = [str(accelerate), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
               "--mixed_precision", "no", "--dynamo_backend", "no", "train_single_agent.py", *FAST,
               "train.optimisation.micro_batch_size=1", f"train.optimisation.max_steps={STEPS}",
               "train.monitoring.replica_digests=true", "train.monitoring.tensorboard=false", f"output_dir={output}"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.count(f"trained cpu_tiny to step {STEPS}") == 2  # one line per process

    ranks = [pd.read_csv(output / "replica_digests" / f"rank-{r}.csv") for r in (0, 1)]
    for digests in ranks:
        assert list(digests["step"]) == list(range(STEPS + 1))
        assert set(digests["backend"]) == {"gloo"} and set(digests["world_size"]) == {2}
    assert list(ranks[0]["digest"]) == list(ranks[1]["digest"])
    assert ranks[0]["digest"].iloc[-1] != ranks[0]["digest"].iloc[0]  # the steps moved the weights
    steps = pd.read_csv(output / "steps.csv")
    assert list(steps["step"]) == list(range(1, STEPS + 1))  # written once, by the main process

    policy = output / f"checkpoint-{STEPS}" / "policy"
    run_dir = tmp_path / "benchmark"
    played = subprocess.run(
        benchmark_command("+suite=smoke", "+framework@frameworks.alphaquanter=alphaquanter", "tickers=[MSFT]",
                          "split.test.end=2020-01-10", f"frameworks.alphaquanter.checkpoint={policy}",
                          f"hydra.run.dir={run_dir}"),
        cwd=ROOT, env=support_env(),
        capture_output=True, text=True, timeout=900)
    assert played.returncode == 0, played.stderr[-3000:]
    assert journal_rows(run_dir / "journal.sqlite", "alphaquanter") > 0
