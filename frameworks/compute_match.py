"""The compute-matched self-consistency row: its k measured in the run, not assumed.

A `rows.per_backbone` entry with `compute_match: {row: MA, unit: SA}` is built after the rows it
is matched to have decided (`harness.runner.DeferredEntry`): on backbone B its episodes per
decision are

    k = max(1, round(T(MA-B) / T(SA-B))),    T(row) = mean over its decisions of (prompt + completion tokens),

so k single-agent episodes cost about what one debate costs, on this run's own prompts, data and
model. The row's facts in run.json say how k was set (`k_from`); a row with `samples` set in its
config has an explicit budget, and says so. A matched row whose anchors did not both decide is
not run, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omegaconf import DictConfig, OmegaConf

from harness.journal import JournalEntry
from harness.runner import FrameworkEntry, RunResult

SAMPLES = "samples"
"""The single agent's config field holding k (episodes per decision)."""


def tokens_per_decision(decisions: list[JournalEntry], framework: str) -> float | None:
    """Mean prompt + completion tokens per decision of `framework` (None when it made none)."""
    totals = [sum(c.prompt_tokens + c.completion_tokens for c in e.decision.trace.llm_calls)
              for e in decisions if e.framework == framework]
    return sum(totals) / len(totals) if totals else None


def matched_samples(heavy_tokens: float, unit_tokens: float) -> int:
    """k = max(1, round(heavy / unit)) (module docstring)."""
    return max(1, round(heavy_tokens / unit_tokens))


def explicit_budget(row: DictConfig) -> str | None:
    """`k_from` of a row with an explicit `samples` above 1; None for one episode per decision."""
    samples = OmegaConf.select(row, SAMPLES)
    return f"explicit budget: k = {samples} (set in the row's config)" if samples and int(samples) > 1 else None


def deferred_builder(name: str, row: DictConfig, heavy: str, unit: str, facts: dict[str, Any],
                     build: Callable[[str, DictConfig], FrameworkEntry]) -> Callable[[RunResult], FrameworkEntry | None]:
    """The builder of matched row `name`: k from the decisions of `heavy` and `unit` so far, written to
    `facts` (`samples`, `k_from`), then `build(name, row with samples = k)`; None (and `facts` status
    "not run: ...") when either anchor made no LLM decision."""

    def build_matched(result: RunResult) -> FrameworkEntry | None:
        heavy_tokens = tokens_per_decision(result.decisions, heavy)
        unit_tokens = tokens_per_decision(result.decisions, unit)
        if not heavy_tokens or not unit_tokens:
            absent = [n for n, t in ((heavy, heavy_tokens), (unit, unit_tokens)) if not t]
            facts["status"] = (f"not run: compute_match needs the tokens per decision of {heavy} and {unit}; "
                               f"{' and '.join(absent)} made no LLM decision in this run")
            return None
        k = matched_samples(heavy_tokens, unit_tokens)
        facts[SAMPLES] = k
        facts["k_from"] = (f"measured: {heavy} {heavy_tokens:.0f} / {unit} {unit_tokens:.0f} tokens per decision "
                           f"= {heavy_tokens / unit_tokens:.2f}, k = {k}")
        matched = OmegaConf.merge(row, {SAMPLES: k})
        return build(name, matched)

    return build_matched
