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


def _kind(decision: Decision) -> tuple[str | None, float]:
    """(action, target) columns of a decision: one is set, the other None / NaN."""
    return (decision.action.value if decision.action is not None else None,
            decision.target if decision.target is not None else math.nan)


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
        portfolio, fill_price = self.simulator.portfolio, self.simulator.fill_price
        record = {"date": self.simulator.date, **{part: False for part in OVERLAY_PARTS}}
        loss = day_loss(self._previous_equity, portfolio.equity)
        self._previous_equity = portfolio.equity
        record.update(day_loss=loss, wrong_streak=math.nan, hold_share=math.nan,
                      framework_exposure=math.nan, baseline_exposure=math.nan)
        executed = decision
        if self.config.loss_stop.enabled and loss > self.config.loss_stop.max_loss:
            record["loss_stop"], executed = True, HOLD
        if self._cool_down is not None:
            forced = self._cool_down.step(portfolio.close, decision)
            record["wrong_streak"] = self._cool_down.streak
            if forced:
                record["cool_down"], executed = True, HOLD
        if self._cold_start is not None and self._cold_start.active:
            blend = self._cold_start.blend(decision, fill_price)
            record["cold_start"] = True
            if blend is not None:
                target, record["framework_exposure"], record["baseline_exposure"] = blend
                if executed is decision:
                    executed = Decision(target=target)
        if self.config.sizing.enabled and fill_price is not None and executed is not HOLD:
            resized = sized(executed, exposure_at(portfolio, fill_price), self.config.sizing)
            record["sizing"], executed = resized is not executed, resized
        if self._drift is not None:
            record["drift"], share = self._drift.step(decision)
            record["hold_share"] = math.nan if share is None else share
        self.simulator.submit(executed)
        original, done = _kind(decision), _kind(executed)
        self.records.append({"date": record.pop("date"), "original_action": original[0], "original_target": original[1],
                             "executed_action": done[0], "executed_target": done[1],
                             "changed": original[0] != done[0] or not _same(original[1], done[1]), **record})


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b
