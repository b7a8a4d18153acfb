"""Kill and resume in asynchronous mode: a training process (and with it its rollout process)
killed after a checkpoint, run again with the same command, continues from that checkpoint: the
prompt stream resumes after the groups the checkpointed run received, the step log reads as one
run, staleness stays within the bound, and the last checkpoint's policy loads. (Unlike sync mode
the result is not bit-identical to an uninterrupted run: staleness depends on timing.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pandas as pd
import pytest

from cli_helpers import ROOT
from llm_backends.paths import CACHE_ENV
from llm_backends.transformers_engine import transformers_engine
from training.checkpoints import MARKER
from training_runs import FAST

STEPS = 3
ASYNC = ["train.mode=async", "train.asynchronous.max_staleness=1", "train.asynchronous.throttle=true",
         "train.asynchronous.in_flight=switch"]


@pytest.mark.slow
def test_a_killed_async_run_resumes_where_it_stopped(cache_root, tmp_path):
    killed = tmp_path / "killed"
    command = [sys.executable, str(ROOT / "train_single_agent.py"), *FAST, *ASYNC, f"output_dir={killed}",
               f"train.optimisation.max_steps={STEPS}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), CACHE_ENV: str(cache_root), "TRL_EXPERIMENTAL_SILENCE": "1"}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while not (killed / "checkpoint-1" / MARKER).is_file():  # written last: the checkpoint is complete
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        time.sleep(0.2)
    process.kill()
    process.wait()
    assert not (killed / f"checkpoint-{STEPS}").exists()
    resumed_at = max(int(p.name.removeprefix("checkpoint-")) for p in killed.glob("checkpoint-*")
                     if (p / MARKER).is_file())
    next_group = json.loads((killed / f"checkpoint-{resumed_at}" / "async_state.json").read_text())["next_group"]

    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    facts = json.loads((killed / "run.json").read_text())
    assert facts["resumed_from"].endswith(f"checkpoint-{resumed_at}") and facts["mode"] == "async"

    log = pd.read_csv(killed / "steps.csv")
    assert log["step"].tolist() == list(range(1, STEPS + 1))
    assert (log["async/staleness_max"] <= 1).all()
    groups = pd.read_csv(killed / "groups.csv")
    after = groups[groups["trainer_version"] >= resumed_at]
    assert len(after) >= 2 * (STEPS - resumed_at) and (after["group"] >= next_group).all()
    assert (groups[groups["consumed"]]["staleness"] <= 1).all()
    assert transformers_engine(str(killed / f"checkpoint-{STEPS}" / "policy"), cache=False).fingerprint()
