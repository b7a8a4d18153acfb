"""The single agent's config groups, `configs/single_agent/<group>/<name>.yaml`, read outside Hydra.

Groups: `protocol` (what the model is shown and allowed, `single_agent.protocol.Protocol`) and
`reward` (`single_agent.rewards.RewardConfig`). A framework config composes them with Hydra
defaults (`/single_agent/protocol@protocol: compact`); scripts and tests load them by name.
A config may start from another of its group with `base: <name>` and list only what differs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from configs import CONFIG_DIR as CONFIGS
from core.errors import ConfigError

CONFIG_DIR = CONFIGS / "single_agent"


def group_config(group: str, name: str) -> dict[str, Any]:
    """The resolved content of `configs/single_agent/<group>/<name>.yaml`, or of `name` when it is a yaml path,
    over the content of its `base` config when it names one (top-level keys replace the base's)."""
    path = Path(name) if Path(name).suffix in {".yaml", ".yml"} else CONFIG_DIR / group / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml")))
        raise ConfigError(f"{path}: no such single-agent {group} config; known: {known}")
    content = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    if not isinstance(content, dict):
        raise ConfigError(f"{path}: expected a mapping of settings")
    base = content.pop("base", None)
    return {**group_config(group, str(base)), **content} if base else content
