"""Command-line overrides of config groups checked before Hydra composes, so that a mistake is one line.

Two mistakes are caught (`check_group_overrides`, called by the entry points):

- an option that its group does not have (`backbones=[nope]`, `llm@frameworks.SA.llm=nope`,
  `+suite=nope`): Hydra would print a multi-line composition error; here it is one `ConfigError`
  naming the group and its options;
- a field of a framework (or a row template, or the training recipe) that is composed from a
  group, given an option name as a plain value (`frameworks.SA.llm=tiny`, `train.reward=paper`,
  the form before these fields became groups): refused with the override that selects the
  option (`llm@frameworks.SA.llm=tiny`, `single_agent/reward@train.reward=paper`).
"""

from __future__ import annotations

from collections.abc import Iterator

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import ChoiceSweep, Override
from hydra.errors import HydraException

from configs import group_options, unknown_option
from core.errors import ConfigError

COMPOSED_FIELDS = {"protocol": "single_agent/protocol", "reward": "single_agent/reward", "llm": "llm",
                   "tokenizer_llm": "llm"}
"""A framework config's fields composed from a config group (the last key of a dotted path), and the group."""


def _names(override: Override) -> Iterator[str]:
    """The option names an override selects: one, a list, or a simple sweep's choices."""
    value = override.value()
    for choice in value.list if isinstance(value, ChoiceSweep) else [value]:
        yield from (str(item) for item in (choice if isinstance(choice, list) else [choice]) if isinstance(item, str))


def check_group_overrides(arguments: list[str]) -> None:
    """Raise one `ConfigError` line for the first override naming an unknown group option, or setting a
    composed framework field to an option name (module docstring). Hydra's flags and their values (no
    `=`), and arguments Hydra cannot parse, are left to Hydra."""
    try:
        overrides = OverridesParser.create().parse_overrides([a for a in arguments if "=" in a and not a.startswith("-")])
    except HydraException:
        return
    for override in overrides:
        if override.is_delete():
            continue
        key = override.key_or_group
        options = group_options(key)
        if options:
            for name in _names(override):
                if name not in options:
                    raise unknown_option(key, name, options)
            continue
        path = key.split(".")
        group = COMPOSED_FIELDS.get(path[-1])
        if path[0] in ("frameworks", "rows", "train") and len(path) >= 2 and group is not None:
            names = [name for name in _names(override) if name in group_options(group)]
            if names:
                raise ConfigError(f"{key}={names[0]}: {path[-1]} is composed from the {group} config group; "
                                  f"select an option with {group}@{key}={names[0]} (docs/configs.md)")
