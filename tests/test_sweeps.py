"""Sweeps on real launchers: Hydra's Ray launcher on a local Ray cluster that this test starts on
127.0.0.1 and stops, with results equal to the same sweep run serially; the submitit launcher's
SLURM config as Hydra composes it (`--cfg hydra`)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from cli_helpers import ROOT, benchmark_command, support_env

pytest.importorskip("ray", reason="the Ray launcher needs the `ray` extra: pip install -e '.[ray]'")
pytest.importorskip("hydra_plugins.hydra_ray_launcher", reason="pip install --no-deps hydra-ray-launcher==1.2.2")

SWEEP = ["+suite=smoke", "execution.fee_bps=0,25"]
RAY_START_S = 180
LOOPBACK_RAY = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
"""Ray's switch for a single-node cluster: it then names this node by the loopback address, where
it would otherwise pick the address of the interface that routes outwards, for head and driver
alike; and no usage report."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop_group(head: subprocess.Popen) -> None:
    """Stop every process of `head`'s process group (SIGTERM, then SIGKILL after 60 s)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(head.pid, sig)
        except ProcessLookupError:
            return
        try:
            head.wait(timeout=60)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture
def ray_cluster():
    """A one-node Ray cluster on 127.0.0.1 (2 CPUs, no dashboard), in its own process group; its
    address, then every process of the group is stopped. Its session folder is a short path of
    its own (Ray's sockets live there, and a socket path may not exceed 107 bytes)."""
    port = free_port()
    session = Path(tempfile.mkdtemp(prefix="ray-"))
    env = {**support_env(), "PYTHONPATH": os.pathsep.join([str(ROOT), support_env()["PYTHONPATH"]]), **LOOPBACK_RAY}
    ray = Path(sys.executable).with_name("ray")
    head = subprocess.Popen(
        [str(ray), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={session}"],
        cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + RAY_START_S
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert head.poll() is None, f"ray start ended: {head.stdout.read()[-2000:]}"
            time.sleep(1)
        else:
            pytest.fail(f"the Ray head did not listen on 127.0.0.1:{port} within {RAY_START_S} s")
        yield f"127.0.0.1:{port}"
    finally:
        stop_group(head)
        shutil.rmtree(session, ignore_errors=True)


def sweep(*overrides: str, sweep_dir: Path) -> subprocess.CompletedProcess:
    command = benchmark_command(*SWEEP, *overrides, f"hydra.sweep.dir={sweep_dir}")
    command.insert(2, "-m")
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**support_env(), **LOOPBACK_RAY},
                          timeout=900)


def compare(a: Path, b: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "metrics.compare", str(a), str(b)], cwd=ROOT, capture_output=True,
                          text=True, env=support_env(), timeout=300)
    return done.stdout


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_a_ray_sweep_equals_the_same_sweep_run_serially(ray_cluster, tmp_path):
    # the launcher's default object_store_memory is refused when joining a running cluster: null it
    on_ray = sweep("hydra/launcher=ray", f"hydra.launcher.ray.init.address={ray_cluster}",
                   "+hydra.launcher.ray.init.object_store_memory=null", sweep_dir=tmp_path / "ray")
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    log = on_ray.stdout + on_ray.stderr
    assert "Ray Launcher is launching 2 jobs" in log and f"Connecting to existing Ray cluster at address: {ray_cluster}" in log
    serial = sweep(sweep_dir=tmp_path / "serial")
    assert serial.returncode == 0, serial.stderr[-3000:]
    for job in ("0", "1"):
        assert (tmp_path / "ray" / job / "metrics.csv").is_file()
        assert "same results" in compare(tmp_path / "serial" / job, tmp_path / "ray" / job)
    fees = {yaml.safe_load((tmp_path / "ray" / job / "config.yaml").read_text())["execution"]["fee_bps"] for job in "01"}
    assert fees == {0, 25}


@pytest.mark.slow
def test_the_submitit_slurm_launcher_config_composes():
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="pip install -e '.[submitit]'")
    command = benchmark_command("+suite=smoke", "hydra/launcher=submitit_slurm", "hydra.launcher.partition=gpu",
                                "hydra.launcher.gpus_per_node=1", "hydra.launcher.timeout_min=240", "--cfg", "hydra")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=support_env(), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    launcher = yaml.safe_load(done.stdout)["hydra"]["launcher"]
    assert launcher["_target_"] == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
    assert (launcher["partition"], launcher["gpus_per_node"], launcher["timeout_min"]) == ("gpu", 1, 240)
    assert launcher["submitit_folder"].endswith("/.submitit/%j")
