"""The overlay config (`configs/overlay/*.yaml`, the `overlay` group): one block per part, each off
by default. docs/overlays.md states each part's rule and formula."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False


class SizingConfig(_Part):
    """A BUY tops the position up to `invest_fraction` of equity (never sells); a target is capped at
    ±`invest_fraction`. 0.95 keeps a 5 % cash buffer."""

    invest_fraction: float = Field(0.95, gt=0, le=1)


class LossStopConfig(_Part):
    """A decision day whose equity fell by more than `max_loss` (a fraction of the previous close's
    equity) forces HOLD."""

    max_loss: float = Field(0.05, gt=0, lt=1)


class CoolDownConfig(_Part):
    """After `wrong_streak` consecutive wrong decisions, each judged on the next bar's close-to-close
    return once that bar has closed, the next `days` decision days are forced to HOLD."""

    wrong_streak: int = Field(3, ge=1)
    days: int = Field(5, ge=1)


class ColdStartConfig(_Part):
    """The first `days` decision days of an episode execute the exposure
    `framework_weight`·x_framework + (1 − `framework_weight`)·x_baseline."""

    days: int = Field(30, ge=1)
    framework_weight: float = Field(0.5, ge=0, le=1)
    baseline: dict[str, Any] | None = None
    """The baseline framework's config (a stateless framework with a `_target_`, e.g. buy_and_hold)."""


class DriftConfig(_Part):
    """Warn when HOLD is more than `max_hold_share` of the framework's last `window` decisions."""

    window: int = Field(100, ge=1)
    max_hold_share: float = Field(0.8, ge=0, lt=1)


class OverlayConfig(BaseModel):
    """Every part of the overlay; `enabled` says whether any part is on."""

    model_config = ConfigDict(extra="forbid")

    sizing: SizingConfig = Field(default_factory=SizingConfig)
    loss_stop: LossStopConfig = Field(default_factory=LossStopConfig)
    cool_down: CoolDownConfig = Field(default_factory=CoolDownConfig)
    cold_start: ColdStartConfig = Field(default_factory=ColdStartConfig)
    drift: DriftConfig = Field(default_factory=DriftConfig)

    @property
    def enabled(self) -> bool:
        return any(part.enabled for part in (self.sizing, self.loss_stop, self.cool_down, self.cold_start, self.drift))
