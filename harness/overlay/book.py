"""One episode's simulator behind the overlays: each decision goes through the enabled parts, in
this order, and the result is filled.

1. daily-loss stop and 2. cool-down (`harness.overlay.gates`): either forces HOLD (no trade);
3. cold start (`harness.overlay.cold_start`): on the first N days, the blended target exposure;
4. sizing (`harness.overlay.sizing`): a BUY tops up to f of equity, a target is capped at ±f;
5. drift monitor (`harness.overlay.drift`): reports, never changes the decision.

The parts read the book at the close of the decision day (equity, close) and, for sizing and the
blend — which are execution, like the simulator's own BUY sizing — the fill price. The cool-down
and the drift monitor judge the framework's own decision, not the executed one. Every decision
leaves one record (`OVERLAY_COLUMNS`): the original and the executed decision, whether they
differ, which parts fired and the numbers they fired on. Everything is a function of the
journaled decisions and the bars, so a resumed run repeats it exactly.
"""

from __future__ import annotations

import math

import pandas as pd

from harness.execution import EpisodeResult, Simulator
from harness.overlay.cold_start import ColdStart, exposure_at
from harness.overlay.config import OverlayConfig
from harness.overlay.drift import DriftMonitor
from harness.overlay.gates import CoolDown, day_loss
from harness.overlay.sizing import sized
from market.decision import Action, Decision
from market.portfolio import PortfolioState

OVERLAY_PARTS = ("loss_stop", "cool_down", "cold_start", "sizing", "drift")
"""The parts, in the order they act; each is a boolean column of the records (fired or not)."""

HOLD = Decision(action=Action.HOLD)


def _columns(decision: Decision) -> tuple[str | None, float | None]:
    """(action, target) of a decision, the columns of a record: one is set, the other None (NaN in the table)."""
    return decision.action.value if decision.action is not None else None, decision.target


class OverlayBook:
    """Drives `simulator` like the runner drives a plain one (`submit`, `done`, `date`, `portfolio`,
    `result`), applying `config`'s enabled parts; `records` holds one row per decision."""

    def __init__(self, simulator: Simulator, config: OverlayConfig, baseline: list[Decision] | None = None):
        self.simulator = simulator
        self.config = config
        self.records: list[dict] = []
        self._previous_equity: float | None = None
        self._cool_down = CoolDown(config.cool_down) if config.cool_down.enabled else None
        self._drift = DriftMonitor(config.drift) if config.drift.enabled else None
        self._cold_start = None
        if config.cold_start.enabled:
            self._cold_start = ColdStart(config.cold_start.framework_weight, baseline or [], simulator.bars,
                                         simulator.config)

    @property
    def done(self) -> bool:
        return self.simulator.done

    @property
    def date(self) -> pd.Timestamp:
        return self.simulator.date

    @property
    def portfolio(self) -> PortfolioState:
        return self.simulator.portfolio

    def result(self) -> EpisodeResult:
        return self.simulator.result()

    def submit(self, decision: Decision) -> None:
        """Apply the overlay to the framework's `decision` of the current bar, fill the result, advance."""
        date, portfolio, fill_price = self.simulator.date, self.simulator.portfolio, self.simulator.fill_price
        fired = dict.fromkeys(OVERLAY_PARTS, False)
        numbers = {"day_loss": day_loss(self._previous_equity, portfolio.equity), "wrong_streak": math.nan,
                   "hold_share": math.nan, "framework_exposure": math.nan, "baseline_exposure": math.nan}
        self._previous_equity = portfolio.equity
        executed = decision
        if self.config.loss_stop.enabled and numbers["day_loss"] > self.config.loss_stop.max_loss:
            fired["loss_stop"], executed = True, HOLD
        if self._cool_down is not None:
            forced = self._cool_down.step(portfolio.close, decision)
            numbers["wrong_streak"] = self._cool_down.streak
            if forced:
                fired["cool_down"], executed = True, HOLD
        if self._cold_start is not None and self._cold_start.active:
            blend = self._cold_start.blend(decision, fill_price)  # every cold-start day: the shadow books step
            fired["cold_start"] = executed is decision  # not when a gate forced HOLD
            if blend is not None:
                target, numbers["framework_exposure"], numbers["baseline_exposure"] = blend
                if fired["cold_start"]:
                    executed = Decision(target=target)
        if self.config.sizing.enabled and fill_price is not None and executed is not HOLD:
            resized = sized(executed, exposure_at(portfolio, fill_price), self.config.sizing)
            fired["sizing"], executed = resized is not executed, resized
        if self._drift is not None:
            fired["drift"], share = self._drift.step(decision)
            numbers["hold_share"] = math.nan if share is None else share
        self.simulator.submit(executed)
        original, done = _columns(decision), _columns(executed)
        self.records.append({"date": date, "original_action": original[0], "original_target": original[1],
                             "executed_action": done[0], "executed_target": done[1], "changed": original != done,
                             **fired, **numbers})
