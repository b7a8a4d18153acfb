"""Engines from composed configs of the `llm` Hydra config group (`configs/llm/`).

A framework config composes its engine as a group option (`/llm@llm: smollm2` in its defaults;
`llm@frameworks.NAME.llm=tiny` and `frameworks.NAME.llm.kv_cache_mb=4096` on the command line) and
hands the composed config to `build_engine`. Code outside a Hydra app (the server, scripts, tests)
composes an option by name with `engine_config`, with `key=value` overrides in Hydra's grammar.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import hydra.utils

from configs import compose_option
from core.config_keys import check_target_keys
from llm_backends.engine import ChatEngine

LLM_GROUP = "llm"
"""The Hydra config group of engine configs."""


def engine_config(name: str, overrides: list[str] | None = None) -> dict[str, Any]:
    """Option `name` of the `llm` group with `key=value` overrides; one line naming the options when there is none."""
    return compose_option(LLM_GROUP, name, overrides)


def build_engine(config: Mapping[str, Any], where: str = LLM_GROUP) -> ChatEngine:
    """The engine of a composed `llm` config; a key its target does not take is one `ConfigError` line
    naming `where` (the config's dotted path), as for every target (`core.config_keys`)."""
    check_target_keys(config, where)
    return hydra.utils.instantiate(dict(config))
