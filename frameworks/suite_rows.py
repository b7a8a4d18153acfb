"""Rows a suite builds from config: one per (row kind, backbone), and one per trained model.

The run config's `rows` holds templates (framework configs composed from `configs/framework/`)
and two kinds of row built from them, added to `frameworks` before the run:

- `rows.per_backbone`: PREFIX -> {template, backbone_fields, overrides}. For every backbone B
  of `backbones` (the Hydra config group `configs/backbones/`, selected as a list,
  `backbones=[smollm2,tiny]`, each option under its own name), row `PREFIX-B` is the template
  with `overrides` and, for each `field: key` of `backbone_fields`, the template's `field`
  (dotted) set to the backbone's `key`. A backbone's engine keys (`llm`, `chat_llm`) name options
  of the `llm` group; the row gets that option composed by Hydra with the backbone's
  `<key>_overrides` (its fields: `path`, `knowledge_cutoff`). Backbone names hold dots
  (`qwen2.5-7b`), which a defaults-list package cannot spell, so the engines are composed here
  rather than in the backbone's own defaults. E.g. SA -> single_agent with `llm: llm` gives
  `SA-qwen2.5-7b`. With
  `optional: true` a template that is not installed (its config composed with Hydra's
  `optional`) makes the row "not run" instead of an error.
- `rows.trained`: NAME -> {template, checkpoints: {seed: path}, train, overrides}: the template
  with `checkpoints` (`frameworks.checkpoint_seeds`). When a checkpoint path does not exist the
  row is not built; it is reported as `not run: <train command per missing seed>` (`train` with
  `{seed}` filled in), never dropped silently. A trained row may hold `vars`, values its other fields
  interpolate (`${.vars.run}`) and nothing else reads: rows that differ in a few words share one text
  (configs/suite/paper.yaml writes its train command once, as a YAML anchor).

`expand_rows` returns the frameworks to run and, per built or skipped row, its facts for the
run's provenance (`run.json` `rows`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from core.errors import ConfigError
from frameworks.compute_match import explicit_budget
from llm_backends.build import engine_config

NOT_RUN = "not run"
ENGINE_KEYS = ("llm", "chat_llm")
"""A backbone's keys that name an option of the `llm` group (with `<key>_overrides`, its fields)."""


def backbone_value(backbone: DictConfig, key: str) -> Any:
    """The backbone's `key`; for an engine key, its `llm` option composed with `<key>_overrides`."""
    if key not in ENGINE_KEYS:
        return backbone[key]
    fields = backbone.get(f"{key}_overrides") or {}
    return engine_config(str(backbone[key]), [f"{field}={json.dumps(value)}" for field, value in fields.items()])


def _template(templates: DictConfig, spec: DictConfig, where: str) -> DictConfig:
    name = spec.get("template")
    if name not in templates:
        raise ConfigError(f"{where}.template: {name!r} is not one of rows.templates ({', '.join(templates)})")
    row = OmegaConf.create(OmegaConf.to_container(templates[name], resolve=False))
    return OmegaConf.merge(row, spec.get("overrides") or {})


def backbone_row(templates: DictConfig, prefix: str, spec: DictConfig, name: str, backbone: DictConfig) -> DictConfig:
    """Row `prefix-name`: the template with overrides and its backbone fields set (module docstring)."""
    where = f"rows.per_backbone.{prefix}"
    row = _template(templates, spec, where)
    for field, key in (spec.get("backbone_fields") or {}).items():
        if key not in backbone:
            raise ConfigError(f"{where}.backbone_fields.{field}: backbone {name} has no {key!r} "
                              f"(configs/backbones/{name}.yaml has {', '.join(backbone)})")
        OmegaConf.update(row, str(field), backbone_value(backbone, str(key)), merge=False)
    return row


def missing_checkpoints(checkpoints: dict[int, str | None]) -> dict[int, str]:
    """seed -> path (or "not configured") of every checkpoint that does not exist."""
    return {seed: str(path) if path is not None else "not configured" for seed, path in checkpoints.items()
            if path is None or not Path(str(path)).exists()}


def trained_row(templates: DictConfig, name: str, spec: DictConfig, seeds: list[int]) -> tuple[DictConfig | None, str]:
    """(the row, "run") when the checkpoint of every run seed exists; (None, "not run: ...") naming the
    command that trains the missing ones."""
    where = f"rows.trained.{name}"
    configured = {int(seed): path for seed, path in (spec.get("checkpoints") or {}).items()}
    if not configured:
        raise ConfigError(f"{where}.checkpoints: name one checkpoint per seed, e.g. {{0: PATH}}")
    checkpoints = {seed: configured.get(seed) for seed in seeds}
    missing = missing_checkpoints(checkpoints)
    if missing:
        train = spec.get("train")
        if not train:
            raise ConfigError(f"{where}.train: the command that trains a missing checkpoint is not set")
        absent = sorted(missing)
        command = str(train).format(seed=absent[0]) if len(absent) == 1 else str(train).replace("{seed}", "<seed>")
        return None, (f"{NOT_RUN}: no checkpoint for seed {', '.join(map(str, absent))} "
                      f"({missing[absent[0]]}{', ...' if len(absent) > 1 else ''}); train: {command}")
    row = _template(templates, spec, where)
    row.checkpoints = OmegaConf.create({seed: str(path) for seed, path in checkpoints.items()})
    return row, "run"


def listed_names(value: Any) -> list[str]:
    """The names of the composed `backbones` (a mapping name -> backbone config), in their order."""
    if value is None:
        return []
    return [str(v) for v in value]


def expand_rows(frameworks: DictConfig, rows: DictConfig | None, backbones: DictConfig | None,
                seeds: list[int]) -> tuple[DictConfig, dict[str, dict]]:
    """(frameworks with the built rows added, facts per row: kind, template, backbone, status); a trained
    row runs the checkpoints of the run's `seeds`."""
    merged = OmegaConf.create(OmegaConf.to_container(frameworks, resolve=False))
    facts: dict[str, dict] = {}
    if rows is None:
        return merged, facts
    templates = rows.get("templates") or OmegaConf.create({})
    for backbone_name in listed_names(backbones):
        backbone = backbones[backbone_name]
        for prefix, spec in (rows.get("per_backbone") or {}).items():
            name = f"{prefix}-{backbone_name}"
            facts[name] = {"kind": str(prefix), "template": spec.template, "backbone": backbone_name, "status": "run"}
            if spec.get("optional") and spec.get("template") not in templates:
                facts[name]["status"] = (f"{NOT_RUN}: no framework config {spec.template} "
                                         f"(configs/framework/{spec.template}.yaml is not installed)")
                continue
            merged[name] = backbone_row(templates, str(prefix), spec, backbone_name, backbone)
            match = spec.get("compute_match")
            if match:
                facts[name]["compute_match"] = {"row": f"{match.row}-{backbone_name}",
                                                "unit": f"{match.unit}-{backbone_name}"}
            elif (budget := explicit_budget(merged[name])) is not None:
                facts[name]["k_from"] = budget
    for name, spec in (rows.get("trained") or {}).items():
        row, status = trained_row(templates, str(name), spec, seeds)
        if row is not None:
            merged[name] = row
        facts[str(name)] = {"kind": "trained", "template": spec.template, "status": status,
                            "checkpoints": {str(k): (str(v) if v is not None else None) for k, v in spec.checkpoints.items()}}
    return merged, facts
