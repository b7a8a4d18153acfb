"""TradeDuel's Hydra configs, shipped inside the installed package.

The entry points compose them through Hydra's package search path (`pkg://configs`), so that a
non-editable install finds them from any directory; code that reads one file itself (the primary
configs' declared keys) finds it under `CONFIG_DIR`. Code outside a Hydra app (scripts, the LLM
server, the report reading a trace's reward config, tests) composes one option of a group with
`compose_option`, through the same Hydra repository, so that an option's own defaults list (a
protocol that starts from another) is applied exactly as in a run.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hydra import compose, initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import HydraException
from omegaconf import OmegaConf

from core.errors import ConfigError, one_line

CONFIG_DIR = Path(__file__).resolve().parent
"""The folder of the config groups (suite/, framework/, data/, ...) and the primary configs."""

SEARCH_PATH = "pkg://configs"
"""The configs as Hydra's `config_path`: found through the package, wherever it is installed."""


def group_options(group: str) -> list[str]:
    """The option names of config group `group` (e.g. `single_agent/protocol`), as Hydra lists them."""
    with _hydra():
        return GlobalHydra.instance().config_loader().get_group_options(group)


def unknown_option(group: str, name: str, options: list[str]) -> ConfigError:
    """The one-line error for a config group option that does not exist."""
    return ConfigError(f"{group}: no option {name!r} (configs/{group}/{name}.yaml); known: {', '.join(options) or 'none'}")


def compose_option(group: str, name: str, overrides: list[str] | None = None) -> dict:
    """Option `name` of config group `group` composed by Hydra, as plain containers (its defaults list
    applied), with `key=value` `overrides` of its fields in Hydra's override grammar; one `ConfigError`
    line naming the group's options when there is no such option."""
    with _hydra():
        options = group_options(group)
        if name not in options:
            raise unknown_option(group, name, options)
        fields = [f"++_composed_.{override}" for override in overrides or []]
        try:
            composed = compose(overrides=[f"+{group}@_composed_={name}", *fields])
        except HydraException as error:
            raise ConfigError(f"{group}/{name}: {one_line(error)}") from None
    return OmegaConf.to_container(composed._composed_, resolve=True)


@contextmanager
def _hydra() -> Iterator[None]:
    """Hydra initialised on the package's configs for the `with` block, unless it already is
    (inside a Hydra app or a test's `initialize`), when its own search path is used."""
    if GlobalHydra.instance().is_initialized():
        yield
        return
    with initialize_config_module(config_module="configs", version_base="1.3"):
        yield


def require_composed(field: str, value: object, group: str) -> object:
    """`value` of a framework's `field` when it is a composed config (or None); an option name
    (`frameworks.X.protocol=paper`, the form before the field became a config group) is refused with
    the override that selects that option."""
    if isinstance(value, str):
        raise ValueError(f"{field}: {value!r} is an option name, but {field} is composed from the {group} config "
                         f"group: select it with {group}@frameworks.<row>.{field}={value} (a suite's per-backbone "
                         f"row: {group}@rows.templates.<template>.{field}={value}; docs/configs.md)")
    return value
