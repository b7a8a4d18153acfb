"""The framework registry: Hydra configs for built-ins, entry points for plugins.

Built-ins are `configs/framework/<name>.yaml` files with a `_target_`. A third-party package
registers a framework by declaring an entry point in the group `tradeduel.frameworks`:

    [project.entry-points."tradeduel.frameworks"]
    momentum = "my_package.momentum:Momentum"

`register_plugins()` then stores a config `framework/momentum` in Hydra's ConfigStore whose
fields are the class's keyword arguments and their defaults, so that
`+framework@frameworks.momentum=momentum frameworks.momentum.lookback=30` works like a
built-in. A plugin that prefers YAML files adds its folder to Hydra's search path
(`hydra.searchpath=[pkg://my_package.configs]`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from importlib.metadata import entry_points
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, ListConfig, OmegaConf

from core.config_keys import check_target_keys
from core.errors import ConfigError, PluginError, UserError, one_line
from frameworks.base import TradingFramework
from harness.runner import FrameworkEntry

ENTRY_POINT_GROUP = "tradeduel.frameworks"


def plugin_config(cls: type) -> dict[str, Any]:
    """A Hydra config for `cls`: its `_target_` and its keyword arguments with defaults."""
    params = inspect.signature(cls.__init__).parameters.values()
    defaults = {p.name: p.default for p in params
                if p.name != "self" and p.default is not inspect.Parameter.empty}
    return {"_target_": f"{cls.__module__}.{cls.__qualname__}", **defaults}


def register_plugins() -> list[str]:
    """Store a `framework/<name>` config for every installed plugin; returns their names."""
    store = ConfigStore.instance()
    names = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = point.load()
        except Exception as error:  # noqa: BLE001 - a broken plugin package is named, not a traceback
            raise PluginError(f"entry point {point.name} = {point.value} in {ENTRY_POINT_GROUP} "
                              f"cannot be loaded: {type(error).__name__}: {one_line(error)}") from None
        if not (inspect.isclass(cls) and issubclass(cls, TradingFramework)):
            raise PluginError(f"entry point {point.name} = {point.value} in {ENTRY_POINT_GROUP} "
                              "is not a TradingFramework subclass")
        store.store(group="framework", name=point.name, node=plugin_config(cls))
        names.append(point.name)
    return names


def instantiate_or_explain(config: DictConfig, where: str) -> Any:
    """`hydra.utils.instantiate(config)`, with a failure of the config turned into one `ConfigError` line.

    Keys the target (or a nested target) does not take are refused first (`check_target_keys`). A
    `UserError` raised by the target already names its file or field and is passed on as it is; a
    target that cannot be imported, or that refuses its arguments (`ImportError`, `TypeError`,
    `ValueError`), is one `ConfigError` line prefixed with `where`, the config's dotted path (e.g.
    "frameworks.macd"). Anything else the target raises is a bug and propagates as it is.
    """
    if not isinstance(config, DictConfig):
        raise ConfigError(f"{where}: expected a config with a _target_, got {config!r}")
    check_target_keys(OmegaConf.to_container(config, resolve=True), where)
    try:
        return instantiate(config)
    except InstantiationException as error:
        cause = error.__cause__ or error
        if isinstance(cause, UserError):
            raise cause from None
        if isinstance(cause, (InstantiationException, ImportError, TypeError, ValueError)):
            raise ConfigError(f"{where}: {one_line(cause)}") from cause
        raise cause from error


def config_hash(plain: dict) -> str:
    """SHA-256 (first 16 hex digits) of a resolved config, keys sorted (part of the journal key)."""
    return hashlib.sha256(json.dumps(plain, sort_keys=True, default=str).encode()).hexdigest()[:16]


def fingerprint_or_explain(framework: TradingFramework, where: str) -> str:
    """`framework.fingerprint()`; a file it cannot read or a value that is not a string is one `ConfigError` line."""
    try:
        fingerprint = framework.fingerprint()
    except (OSError, ValueError) as error:
        raise ConfigError(f"{where}: cannot fingerprint: {one_line(error)}") from None
    if not isinstance(fingerprint, str):
        raise ConfigError(f"{where}: fingerprint() returned {type(fingerprint).__name__}, not a str")
    return fingerprint


def build_frameworks(configs: DictConfig, shared: dict[str, Any], execution: DictConfig,
                     overlay: DictConfig | None = None, names: list[str] | None = None) -> list[FrameworkEntry]:
    """Instantiate every configured framework (only `names`, when given, in config order); a bad
    config stops with one line naming it.

    A framework's config hash covers its run name and the configs its decisions may depend on:
    its own config and the `shared` inputs (the data config, the tool set), plus — for
    stateful frameworks, which see their own fills — the execution config and the `overlay` (given
    when one is on: it changes the fills; a stateless framework's decisions do not depend on it,
    so they are reused under any overlay, docs/overlays.md). The journal key adds
    the framework's `fingerprint()` and the data itself (`harness.decision_inputs`); changing
    any of these starts fresh decisions instead of reusing journaled ones.
    """
    if not configs:
        raise ConfigError("no frameworks configured: choose a suite (+suite=NAME) or add "
                          "+framework@frameworks.NAME=NAME")
    entries = []
    for name, config in configs.items():
        if names is not None and name not in names:
            continue
        framework = instantiate_or_explain(config, f"frameworks.{name}")
        if not isinstance(framework, TradingFramework):
            raise ConfigError(f"frameworks.{name}: {config.get('_target_')} is not a TradingFramework")
        inputs = {"name": str(name), "framework": config, **shared}
        if framework.stateful:
            inputs["execution"] = execution
            if overlay is not None:
                inputs["overlay"] = overlay
        plain = {key: OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig | ListConfig)
                 else node for key, node in inputs.items()}
        entries.append(FrameworkEntry(name=str(name), framework=framework, config_hash=config_hash(plain),
                                      fingerprint=fingerprint_or_explain(framework, f"frameworks.{name}")))
    return entries
