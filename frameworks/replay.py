"""The frameworks of an anonymised replay (the memorisation probe, docs/memorisation.md).

`AnonymisedFramework` wraps a framework so that the runner drives it over the real days and
tickers — journaling and simulating its decisions on the real prices — while every context
the framework is handed shows the anonymised market: the ticker's code, the date moved W
weeks, a `MarketView` of the anonymised data, tools bound to that view, and (for frameworks
that ask for it) the portfolio in anonymised units. Its journal key covers the anonymised
data's fingerprint, so its decisions never mix with those made on the real data.

A framework whose config names the run's tickers or windows (`${tickers}`, `${split.train}`:
FinRL's training set) is built again from its config with the codes and the moved dates
(`replay_entries`); every other framework instance, models included, serves both runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Literal

import pandas as pd
from omegaconf import DictConfig, OmegaConf, open_dict
from pydantic import BaseModel, ConfigDict

from frameworks.base import TradingFramework
from frameworks.registry import build_frameworks
from harness.decision_inputs import data_fingerprint
from harness.runner import FrameworkEntry
from market.anonymise import AnonymisationKey, AnonymisedMarket
from market.decision import Decision, DecisionContext
from market.view import MarketView


class MemorisationProbe(BaseModel):
    """`+probe=memorisation` (configs/probe/memorisation.yaml): the replay's settings."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["memorisation"] = "memorisation"
    seed: int = 0
    """Seed of the anonymisation key (codes, scales, the date shift)."""
    aliases: dict[str, list[str]] = {}
    """More names per ticker for the text cleaner: `+probe.aliases.XYZ="[Xyz Corp,Xyzzy]"`."""
    uncleanable: Literal["stop", "withhold"] = "stop"
    """A text record that still names the real world: stop the run naming it, or withhold it from the replay."""


class AnonymisedFramework(TradingFramework):
    """`inner`, deciding on the anonymised market (module docstring)."""

    def __init__(self, inner: TradingFramework, market: AnonymisedMarket, data_digest: str,
                 toolset_factory: Callable[[MarketView], Any] | None = None):
        self.inner = inner
        self.market = market
        self.data_digest = data_digest
        self.toolset_factory = toolset_factory
        self.stateful, self.needs_portfolio, self.stochastic = inner.stateful, inner.needs_portfolio, inner.stochastic

    def fingerprint(self) -> str:
        """SHA-256 over the inner framework's fingerprint and the anonymised data's fingerprint."""
        facts = {"framework": self.inner.fingerprint(), "anonymised_data": self.data_digest}
        return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()

    def run_facts(self) -> dict[str, Any]:
        return self.inner.run_facts()

    def shown(self, context: DecisionContext) -> DecisionContext:
        """The anonymised context of a real one."""
        key = self.market.key
        date = key.date(context.date)
        view = MarketView(self.market.data, date)
        tools = self.toolset_factory(view) if context.tools is not None and self.toolset_factory else None
        portfolio = key.portfolio(context.portfolio, context.ticker) if context.portfolio is not None else None
        return DecisionContext(ticker=key.ticker(context.ticker), date=date, view=view, seed=context.seed,
                               tools=tools, portfolio=portfolio)

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        return self.inner.decide([self.shown(context) for context in batch])


def data_digest(market: AnonymisedMarket, end: pd.Timestamp) -> str:
    """SHA-256 (16 hex digits) of the anonymised data a decision up to the real day `end` can read."""
    parts = data_fingerprint(market.data, market.key.date(end))
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def anonymised_run_config(cfg: DictConfig, key: AnonymisationKey) -> DictConfig:
    """A copy of the run config with `tickers` as codes and every split window moved W weeks."""
    shown = cfg.copy()
    with open_dict(shown):
        shown.tickers = [key.ticker(t) for t in cfg.tickers]
        for name, window in cfg.split.items():
            if isinstance(window, DictConfig):
                for edge, day in window.items():
                    shown.split[name][edge] = str(key.date(pd.Timestamp(day)).date())
    return shown


def replay_entries(cfg: DictConfig, entries: list[FrameworkEntry], market: AnonymisedMarket, end: pd.Timestamp,
                   toolset_factory: Callable[[MarketView], Any] | None) -> list[FrameworkEntry]:
    """Every framework of the run, wrapped to decide on `market` (rebuilt first where its config names
    tickers or windows); same names and config hashes, fingerprints that cover the anonymised data."""
    shown = anonymised_run_config(cfg, market.key)
    resolved = lambda root, name: OmegaConf.to_container(root.frameworks[name], resolve=True)  # noqa: E731
    changed = [e.name for e in entries if resolved(cfg, e.name) != resolved(shown, e.name)]
    rebuilt = {}
    if changed:
        configs = OmegaConf.create({name: resolved(shown, name) for name in changed})
        rebuilt = {e.name: e for e in build_frameworks(configs, {"data": cfg.data, "tools": cfg.tools}, shown.execution)}
    digest = data_digest(market, end)
    wrapped = []
    for entry in entries:
        framework = AnonymisedFramework(rebuilt.get(entry.name, entry).framework, market, digest, toolset_factory)
        wrapped.append(FrameworkEntry(name=entry.name, framework=framework, config_hash=entry.config_hash,
                                      fingerprint=framework.fingerprint()))
    return wrapped
