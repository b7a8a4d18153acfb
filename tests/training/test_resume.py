"""Kill and resume: a training process killed after a checkpoint, run again with the same command,
continues from that checkpoint and ends with the weights and the step log of a run never killed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pandas as pd
import pytest
import torch
from safetensors.torch import load_file

import train_single_agent
from cli_helpers import ROOT
from llm_backends.paths import CACHE_ENV
from training.checkpoints import MARKER
from training_runs import FAST, fast_config

STEPS = 3


@pytest.mark.slow
def test_a_killed_run_resumes_where_it_stopped(cache_root, tmp_path):
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    command = [sys.executable, str(ROOT / "train_single_agent.py"), *FAST, f"output_dir={killed}",
               f"train.optimisation.max_steps={STEPS}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), CACHE_ENV: str(cache_root), "TRL_EXPERIMENTAL_SILENCE": "1"}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while not (killed / "checkpoint-1" / MARKER).is_file():  # written last: the checkpoint is complete
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        time.sleep(0.2)
    process.kill()
    process.wait()
    assert not (killed / f"checkpoint-{STEPS}").exists()

    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((killed / "run.json").read_text())["resumed_from"] is not None

    train_single_agent.train(fast_config(whole, steps=STEPS))
    resumed = load_file(killed / f"checkpoint-{STEPS}" / "policy" / "model.safetensors")
    uninterrupted = load_file(whole / f"checkpoint-{STEPS}" / "policy" / "model.safetensors")
    assert all(torch.allclose(resumed[name], uninterrupted[name], atol=1e-6) for name in resumed)
    log = pd.read_csv(killed / "steps.csv")
    assert log["step"].tolist() == list(range(1, STEPS + 1))
    reference = pd.read_csv(whole / "steps.csv")
    assert log["rewards/result/mean"].tolist() == pytest.approx(reference["rewards/result/mean"].tolist())
