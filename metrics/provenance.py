"""How each row of a run was obtained: the provenance table of the paper report.

Read from the run directory only: `run.json` (`rows`: the suite's per-backbone and trained rows,
built or not run; `framework_facts`: each framework's `run_facts()`; `framework_fingerprints`;
`seeds`) and `config.yaml` (each framework's `_target_`). One line per framework and per row
that was not run:

- kind: rule, RL (FinRL), the suite row's kind (SA, SC, MA, trained) or framework;
- backbone: the model the framework ran (`policy` / `model` of its facts), "-" without one;
- fingerprint: what the journal keys its decisions by (`TradingFramework.fingerprint()`: weights,
  prompts, grammar), its first 12 digits when it is a hex digest, else as it is (FinRL: library versions);
- decoding: greedy or sampled (temperature, top-p; per tier for a pipeline whose facts give
  `temperature` as {tier: T}), self-consistency k, constrained or free, and a pipeline's budgets
  (`budgets`: new tokens per tier, answer length, tool rounds);
- seeds: the seeds the rows ran (deterministic rows run the first only);
- training: FinRL, per seed its timesteps and training wall seconds; trained checkpoints, per
  seed its optimizer steps, the run's wall seconds, and "not converged" where it applies;
- status: "run", or "not run: <the command that trains the missing checkpoint>".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from metrics.tables import format_value

FINGERPRINT_DIGITS = 12


def short_fingerprint(fingerprint: str) -> str:
    """The first FINGERPRINT_DIGITS digits of a hex digest; any other fingerprint whole; "-" for none."""
    if not fingerprint:
        return "-"
    is_hex = all(c in "0123456789abcdef" for c in fingerprint.lower())
    return fingerprint[:FINGERPRINT_DIGITS] if is_hex else fingerprint


def row_kind(target: str, row: Mapping[str, Any] | None) -> str:
    """The suite row's kind, else rule / RL (FinRL) / framework from the config's `_target_`."""
    if row:
        return str(row["kind"])
    if target.startswith("frameworks.baselines."):
        return "rule"
    if target.startswith("frameworks.rl."):
        return "RL (FinRL)"
    return "framework"


def decoding(facts: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    """Greedy or sampled, self-consistency k, constrained or free decoding; "-" for frameworks without an LLM."""
    temperature = facts.get("temperature", config.get("temperature"))
    if temperature is None:
        return "-"
    tiers = temperature if isinstance(temperature, Mapping) else {"": temperature}
    if all(float(t) == 0 for t in tiers.values()):
        parts = ["greedy"]
    elif len(tiers) > 1:
        parts = ["sampled (" + ", ".join(f"{tier} T = {format_value(float(t))}" for tier, t in tiers.items()) + ")"]
    else:
        parts = [f"sampled (T = {format_value(float(temperature))}, top-p = {format_value(float(config.get('top_p', 1.0)))})"]
    samples = int(facts.get("samples", config.get("samples", 1)) or 1)
    if samples > 1:
        parts.append(f"self-consistency k = {samples}")
    constrained = facts.get("constrained_decoding", config.get("constrained"))
    if constrained is not None:
        parts.append("constrained to the protocol grammar" if constrained else "free")
    if facts.get("protocol"):
        parts.append(f"{facts['protocol']} protocol")
    if facts.get("budgets"):
        parts.append(f"budgets: {facts['budgets']}")
    return ", ".join(parts)


def training(facts: Mapping[str, Any]) -> str:
    """Per seed: FinRL timesteps and training wall s, or a checkpoint's steps, wall s and convergence."""
    seeds = facts.get("seeds") or {}
    if "timesteps" in facts:
        if not seeds:
            return f"{facts['timesteps']} steps per seed (cached policies, trained by an earlier run)"
        walls = ", ".join(f"seed {s}: policy {v.get('key', '?')}, {format_value(v.get('train_wall_s', float('nan')), digits=0)} s"
                          for s, v in seeds.items())
        return f"{facts['timesteps']} steps per seed; training wall {walls}"
    lines = []
    for seed, checkpoint in seeds.items():
        steps = checkpoint.get("steps")
        wall = checkpoint.get("wall_s")
        text = f"seed {seed}: {steps if steps is not None else '?'} steps"
        if checkpoint.get("max_steps"):
            text += f" of {checkpoint['max_steps']}"
        if wall is not None:
            text += f", {format_value(float(wall), digits=0)} s wall"
        lines.append(f"{text}, {checkpoint.get('convergence', 'convergence unknown')}")
    return "; ".join(lines) if lines else "-"


def converged(facts: Mapping[str, Any]) -> str:
    """"not converged" when any seed's checkpoint is not, "converged" when all are, else "-"."""
    flags = [checkpoint.get("converged") for checkpoint in (facts.get("seeds") or {}).values()
             if isinstance(checkpoint, Mapping) and "converged" in checkpoint]
    if not flags:
        return "-"
    if any(flag is False for flag in flags):
        return "not converged"
    return "converged" if all(flags) else "unknown"


def provenance_numbers(info: Mapping[str, Any], frameworks: Mapping[str, Mapping[str, Any]],
                       ran: list[str], seeds_run: Mapping[str, list[int]]) -> pd.DataFrame:
    """The provenance table (module docstring): `info` is run.json, `frameworks` config.yaml's frameworks,
    `ran` the frameworks in the run's order, `seeds_run` the seeds each ran."""
    rows_facts = info.get("rows", {})
    all_facts = info.get("framework_facts", {})
    fingerprints = info.get("framework_fingerprints", {})
    lines = {}
    for name in [*ran, *(n for n in rows_facts if n not in ran)]:
        config = frameworks.get(name, {})
        row = rows_facts.get(name)
        facts = all_facts.get(name, {})
        status = row["status"] if row else "run"
        fingerprint = fingerprints.get(name) or ""
        lines[name] = {
            "kind": row_kind(str(config.get("_target_", "")), row),
            "backbone": str(facts.get("policy") or facts.get("model") or (row or {}).get("backbone") or "-"),
            "fingerprint": short_fingerprint(fingerprint),
            "decoding": decoding(facts, config),
            "seeds": ", ".join(map(str, seeds_run.get(name, []))) or "-",
            "training": training(facts),
            "converged": converged(facts),
            "status": status,
        }
    return pd.DataFrame.from_dict(lines, orient="index").rename_axis("row")
