"""Framework settings composed from config group options by name, as a run config composes them
(the frameworks take composed configs, never names)."""

from __future__ import annotations

from typing import Any

from configs import compose_option
from llm_backends.build import engine_config


def agent_options(llm: str | None = "tiny", protocol: str = "compact", reward: str = "compact") -> dict[str, Any]:
    """`llm`, `protocol` and `reward` of a single agent: the named options of the `llm`,
    `single_agent/protocol` and `single_agent/reward` groups (`llm=None`: no engine config)."""
    return {"llm": engine_config(llm) if llm is not None else None,
            "protocol": compose_option("single_agent/protocol", protocol),
            "reward": compose_option("single_agent/reward", reward)}
