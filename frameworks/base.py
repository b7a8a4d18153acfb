"""The plugin API: subclass `TradingFramework` and implement `decide`.

A framework maps a batch of `DecisionContext`s (ticker, date, point-in-time `MarketView`,
tools, seed, and — only if it sets `needs_portfolio` — the portfolio) to one `Decision` each.
Class attributes tell the runner how to drive it:

- `stateful = False`: decisions depend only on the context, so the runner may hand over every
  date of every episode at once (fan-out). `True`: the runner steps day by day, and hands a
  resumed run's journaled decisions to `recall` in their place, so that state kept across days
  (a memory) is rebuilt from what the journal holds.
- `needs_portfolio`: show the portfolio at the close of the decision day (stateful only).
- `tasks`: the tasks it takes (`harness.tasks`): `trading` (BUY/SELL/HOLD or a target exposure
  of `context.ticker`), `portfolio` (`Decision(weights={instrument: w, "CASH": w_cash})` over
  `context.universe`, within `context.pool` when the task has a pool) or `futures`
  (`Decision(target=leverage)` of the perpetual `context.ticker`). A run refuses a framework
  that does not take its task. `Decision(action=HOLD)` keeps the positions in every task.
- `stochastic`: run every configured seed (a deterministic framework runs the first only).
  A stochastic framework must draw its randomness from the context's seed (and ticker, date),
  never from global state, so that a resumed run reproduces it exactly.

The README's "Add your own framework" section has a complete plugin in twenty lines.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from market.decision import Decision, DecisionContext


class TradingFramework(ABC):
    """Base class of every framework, built-in or plugin."""

    stateful: ClassVar[bool] = False
    needs_portfolio: ClassVar[bool] = False
    stochastic: ClassVar[bool] = False
    tasks: ClassVar[tuple[str, ...]] = ("trading",)

    def fingerprint(self) -> str:
        """What determines this framework's decisions beyond its config: for an LLM framework
        its engine's weights, tokenizer and chat template, its prompt files and its grammar.

        The journal key covers it next to the config hash and a fingerprint of the market data
        (`harness.decision_inputs`), so a checkpoint retrained at the same path or an edited
        prompt file recomputes decisions instead of reusing old ones. It is called once per run
        and must be the same in every process for the same inputs (hash file contents, never
        paths, times or object ids). Default: "" (the config says everything).
        """
        return ""

    def decision_timeout_s(self) -> float | None:
        """Seconds one decision may take before the runner records it as a failure (kind `timeout`)
        and executes the fallback; None: no limit. The run's `decision_timeout_s` config (`auto`
        by default) asks this; a number there applies to every framework instead.

        Default None: a local engine's slow decision is slow, not hung. A framework whose
        decisions wait on a remote service returns a limit; so may a plugin (opt in by
        overriding). A call deciding n contexts may take n times the limit.
        """
        return None

    def run_facts(self) -> dict[str, Any]:
        """What `run.json` records about this framework beyond its config, for readers of the run:
        e.g. an LLM framework's model, its knowledge cutoff, whether decoding was constrained.
        JSON-serialisable; default: {}."""
        return {}

    def preferred_batch_size(self) -> int | None:
        """The most contexts a stateless framework wants in one `decide` call, or None for no
        limit (the run's `batch_size` alone decides). An LLM framework whose engine keeps each
        conversation's keys and values in a bounded prefix store says how many decisions fit it:
        handed more, the store evicts conversations still in flight, and their next turns read
        their whole conversation again."""
        return None

    def release_memory(self) -> None:
        """Called by the runner once this framework has decided every episode of the run: free what
        it keeps only to decide faster (an LLM engine's prefix KV store), so that the frameworks after
        it run in that memory. Deciding again afterwards must still work. Default: nothing."""
        return None

    def recall(self, context: DecisionContext, decision: Decision) -> None:
        """A stateful framework's journaled `decision` for `context`, reused by the runner instead of
        calling `decide` (a resumed run): update the state `decide` would have left, from what the
        decision's trace holds. Called in date order within each episode, before any later decision
        of that episode is asked for. Default: nothing (no state beyond the portfolio)."""
        return None

    @abstractmethod
    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        """One decision per context, in the same order."""
