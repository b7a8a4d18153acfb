"""Strict config keys: a key that its target does not take is an error, never ignored.

Hydra adds any key given with `+` (`+execution.fee_bp=0`), and a keyword-tolerant target would
run on without it. Before a config becomes a typed object, `check_keys` compares its keys with
what the target accepts — the fields of a pydantic model, or the keyword parameters of a
callable — down through nested `_target_` nodes and nested models, and names the first unknown
key with the nearest valid one:

    execution: unknown key 'fee_bp' (did you mean 'fee_bps'?)

A callable that takes `**kwargs` accepts any key at its own level; its nested nodes are still
checked.
"""

from __future__ import annotations

import difflib
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from hydra.utils import get_object
from omegaconf import OmegaConf
from pydantic import BaseModel, ValidationError

from core.errors import ConfigError, one_line

HYDRA_KEYS = frozenset({"_target_", "_convert_", "_recursive_", "_partial_", "_args_"})
"""Keys Hydra's `instantiate` reads itself."""

Model = TypeVar("Model", bound=BaseModel)


def flatten(tree: object, prefix: str = "") -> dict[str, object]:
    """Nested dicts as {"a.b.c": leaf}; lists stay leaves."""
    if not isinstance(tree, dict):
        return {prefix: tree}
    flat = {}
    for key, value in tree.items():
        flat.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def unknown_key(key: str, known: list[str], where: str) -> ConfigError:
    """The one-line error for `key` at `where`, naming the nearest of `known` (or all of them)."""
    nearest = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean {nearest[0]!r}?" if nearest else f"known keys: {', '.join(sorted(known)) or 'none'}"
    return ConfigError(f"{where}: unknown key {key!r} ({hint})")


def accepted_keys(target: Callable | type) -> dict[str, Any] | None:
    """The keywords `target` accepts with their annotations; None when it takes any (`**kwargs`)."""
    if isinstance(target, type) and issubclass(target, BaseModel):
        if target.model_config.get("extra") == "allow":
            return None
        return {(field.alias or name): field.annotation for name, field in target.model_fields.items()}
    try:
        signature = inspect.signature(target, eval_str=True)
    except (NameError, TypeError):  # annotations naming what only type checkers import
        signature = inspect.signature(target)
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name: p.annotation for p in params if p.kind in keyword}


def _locate(path: object) -> Callable | None:
    """The object a `_target_` names, or None."""
    if path is None:
        return None
    try:
        return get_object(str(path))
    except Exception:  # noqa: BLE001 - any failure to import is reported by instantiate
        return None


def _model_of(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """(the pydantic model a value annotated `annotation` is validated by, whether it is a
    mapping of such models); (None, False) when it is neither."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        models = [_model_of(arg) for arg in typing.get_args(annotation)]
        found = [m for m in models if m[0] is not None]
        return found[0] if len(found) == 1 else (None, False)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    if origin in (dict, Mapping):
        value_model, nested = _model_of(typing.get_args(annotation)[-1])
        return (value_model, True) if value_model is not None and not nested else (None, False)
    return None, False


def _check_value(value: object, annotation: Any, where: str) -> None:
    if isinstance(value, Mapping) and "_target_" in value:
        check_target_keys(value, where)
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_value(item, None, f"{where}[{i}]")
        return
    if not isinstance(value, Mapping):
        return
    model, mapping = _model_of(annotation)
    if model is not None and mapping:
        for name, item in value.items():
            if isinstance(item, Mapping):
                check_keys(item, model, f"{where}.{name}")
    elif model is not None:
        check_keys(value, model, where)
    else:
        for name, item in value.items():
            _check_value(item, None, f"{where}.{name}")


def check_keys(values: Mapping[str, object], target: Callable | type, where: str) -> None:
    """Raise a one-line `ConfigError` on the first key (at any depth) that `target` does not accept."""
    accepted = accepted_keys(target)
    for key, value in values.items():
        if key in HYDRA_KEYS:
            continue
        if accepted is not None and key not in accepted:
            raise unknown_key(str(key), list(accepted), where)
        _check_value(value, (accepted or {}).get(key), f"{where}.{key}")


def check_target_keys(values: Mapping[str, object], where: str) -> None:
    """`check_keys` against what `values["_target_"]` names; nothing when that cannot be
    located (instantiation then reports the bad path itself)."""
    target = _locate(values.get("_target_"))
    if target is not None:
        check_keys(values, target, where)


def check_primary_keys(cfg: Mapping[str, object], primary: Path) -> None:
    """Refuse a top-level key that the primary config file `primary` does not declare (a group in its
    `defaults` or a key of its own): `+seeed=1` for `seed` stops the run instead of being ignored."""
    declared = OmegaConf.load(primary)
    groups = [name for entry in declared.defaults if not isinstance(entry, str) for name in entry]
    known = [*groups, *(key for key in declared if key != "defaults")]
    for key in cfg:
        if key not in known:
            raise unknown_key(str(key), known, "top level")


def typed_config(model: type[Model], values: Mapping[str, object], where: str) -> Model:
    """`model` validated from `values` after `check_keys`; any problem is one `ConfigError` line."""
    check_keys(values, model, where)
    try:
        return model.model_validate(dict(values))
    except ValidationError as error:
        raise ConfigError(f"{where}: {one_line(error)}") from None
