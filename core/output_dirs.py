"""An output directory that cannot be written is one line, before Hydra writes into it.

Hydra creates the run directory (`hydra.run.dir`, or `hydra.sweep.dir` for a sweep) and writes
`.hydra/` into it before the task starts, so a path that cannot be created or written — a
parent that is a file, a read-only folder — would end in Hydra's traceback. `OutputDirCheck`, a
Hydra callback named by both entry points' primary configs, checks the path first and stops
with one `error:` line and exit code 2. The check tries what Hydra will do: it creates (and
removes) a probe folder in the run directory, or in its nearest existing parent when the run
directory does not exist yet, so it answers for the user running it (root included) and
leaves nothing behind.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf


def output_dir_problem(path: Path) -> str | None:
    """Why `path` cannot be created or written as an output directory; None when it can."""
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder" + ("" if existing == path else f", so {path} cannot be created")
    try:
        Path(tempfile.mkdtemp(prefix=".write-probe-", dir=existing)).rmdir()
    except OSError as error:
        what = "cannot be written" if existing == path else f"cannot be created in {existing}"
        return f"{path} {what} ({error.strerror or error})"
    return None


class OutputDirCheck(Callback):
    """Refuses a run (or sweep) directory that cannot be written, in one line (see the module docstring)."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._check(config, "hydra.run.dir")

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._check(config, "hydra.sweep.dir")

    @staticmethod
    def _check(config: DictConfig, key: str) -> None:
        HydraConfig.instance().set_config(config)  # for ${hydra:...} in the path, as Hydra's run_job does next
        try:
            path = OmegaConf.select(config, key)
        except Exception:  # noqa: BLE001 - an unresolvable path is Hydra's to report
            return
        problem = output_dir_problem(Path(str(path)).absolute())
        if problem is not None:
            print(f"error: {key}: {problem}; choose another directory ({key}=DIR)", file=sys.stderr)
            sys.exit(2)
