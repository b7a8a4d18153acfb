"""The two gates that force HOLD: the daily-loss stop and the cool-down after wrong decisions.

Both read only what is known at the close of the decision day t (point-in-time):

- daily-loss stop: the day's loss ℓ_t = 1 − E_t / E_{t−1} (equity marked at the closes of t − 1 and
  t; 0 on the first day). ℓ_t > `max_loss` forces HOLD on day t.
- cool-down: a decision's direction is d = +1 (BUY, or a target > 0), −1 (SELL, or a target < 0)
  or 0 (HOLD, a flat target: never judged). The decision of day t − 1 is judged at the close of
  day t on the bar's realised return r_t = close_t / close_{t−1} − 1: wrong when d·r_t < 0.
  `wrong_streak` consecutive wrong judged decisions start a cool-down: the next `days` decision
  days (from day t, the day the last one is known to be wrong) are forced to HOLD, and the
  streak starts again from 0 after them. Decisions of cool-down days are not judged, and HOLDs
  leave the streak as it is. Nothing here reads a label's forward window or any bar after t.
"""

from __future__ import annotations

from harness.overlay.config import CoolDownConfig
from market.decision import Action, Decision


def day_loss(previous_equity: float | None, equity: float) -> float:
    """ℓ_t = 1 − E_t / E_{t−1}, a fraction (negative on a gain); 0 without a positive previous equity."""
    if previous_equity is None or previous_equity <= 0:
        return 0.0
    return 1.0 - equity / previous_equity


def direction(decision: Decision) -> int:
    """+1 for a bullish decision (BUY, a long target), −1 for a bearish one (SELL, a short target), 0 otherwise."""
    if decision.action is not None:
        return {Action.BUY: 1, Action.SELL: -1}.get(decision.action, 0)
    return (decision.target > 0) - (decision.target < 0)


class CoolDown:
    """The cool-down's state over one episode; `step` once per decision day, in date order."""

    def __init__(self, config: CoolDownConfig):
        self.config = config
        self.streak = 0
        """Consecutive wrong judged decisions known so far."""
        self._left = 0
        self._pending: tuple[int, float] | None = None  # (direction, close) of the decision awaiting its outcome

    def step(self, close: float, decision: Decision) -> bool:
        """Judge the previous decision on today's close, then say whether today's `decision` is forced to HOLD."""
        if self._pending is not None:
            sign, previous_close = self._pending
            wrong = sign * (close / previous_close - 1.0) < 0
            self.streak = self.streak + 1 if wrong else 0
            if self.streak >= self.config.wrong_streak:
                self._left, self.streak = self.config.days, 0
        self._pending = None
        if self._left > 0:
            self._left -= 1
            return True
        sign = direction(decision)
        if sign != 0:
            self._pending = (sign, close)
        return False
