"""Engines from the `configs/llm/` Hydra group, outside a Hydra app (scripts, the server, tests)."""

from __future__ import annotations

from pathlib import Path

import hydra.utils
from omegaconf import OmegaConf

from configs import CONFIG_DIR as CONFIGS
from core.errors import ConfigError
from llm_backends.engine import ChatEngine

CONFIG_DIR = CONFIGS / "llm"


def config_path(name: str) -> Path:
    """`configs/llm/<name>.yaml`, or `name` itself when it is a path to a yaml file."""
    path = Path(name)
    if path.suffix in {".yaml", ".yml"}:
        return path
    return CONFIG_DIR / f"{name}.yaml"


def load_engine(name: str, overrides: list[str] | None = None) -> ChatEngine:
    """Instantiate the engine of config `name` with `key=value` overrides (OmegaConf dotlist)."""
    path = config_path(name)
    if not path.exists():
        known = sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))
        raise ConfigError(f"{path}: no such LLM config; known: {', '.join(known)}")
    cfg = OmegaConf.merge(OmegaConf.load(path), OmegaConf.from_dotlist(overrides or []))
    return hydra.utils.instantiate(cfg)
