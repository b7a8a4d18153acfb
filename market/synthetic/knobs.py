"""The knobs of a synthetic market, validated; every default is what `data=synthetic` uses.

Returns are daily simple returns; volatilities are daily standard deviations.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Knobs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Regime(_Knobs):
    """One regime of the market factor: its daily drift and volatility."""

    drift: float
    vol: float = Field(gt=0)


class Channel(_Knobs):
    """How much a record channel knows about forward returns.

    `snr` is the ratio of signal variance to noise variance in each record's latent score:
    score = ρ·z + √(1 − ρ²)·ε with z the standardised hidden alpha and ρ = √(snr / (1 + snr)).
    snr = 0 makes the channel pure noise; snr = 1 gives ρ ≈ 0.71 per record.
    `per_day` is the mean number of records per ticker per trading day (event channels).
    """

    snr: float = Field(default=0.0, ge=0)
    per_day: float = Field(default=1.0, ge=0)

    @property
    def rho(self) -> float:
        """Correlation of one record's latent score with the hidden alpha."""
        return math.sqrt(self.snr / (1.0 + self.snr))


def _default_regimes() -> dict[str, Regime]:
    return {"bull": Regime(drift=0.0008, vol=0.008), "sideways": Regime(drift=0.0, vol=0.01),
            "bear": Regime(drift=-0.001, vol=0.018)}


CHANNEL_NAMES = ("news", "social", "fundamentals", "insider", "macro")
"""The channels whose information content is a knob (dividends and estimates are always noise)."""


def _default_channels() -> dict[str, Channel]:
    return {"news": Channel(snr=1.0, per_day=1.5), "social": Channel(snr=0.0, per_day=3.0),
            "fundamentals": Channel(snr=0.0), "insider": Channel(snr=0.0, per_day=0.05),
            "macro": Channel(snr=0.0)}


class SyntheticKnobs(_Knobs):
    """Everything that shapes a synthetic market (see docs/synthetic_market.md)."""

    tickers: list[str] = Field(default_factory=lambda: ["ALFA", "BRVO", "CHRL"], min_length=1)
    start: str = "2020-01-01"
    days: int = Field(default=504, ge=30, description="trading days (business days from `start`)")
    seed: int = 0
    regimes: dict[str, Regime] = Field(default_factory=_default_regimes, min_length=1)
    regime_days: float = Field(default=60.0, gt=1, description="mean length of a regime in days")
    beta_range: tuple[float, float] = (0.7, 1.3)
    idio_vol: float = Field(default=0.012, ge=0)
    overnight_vol: float = Field(default=0.004, ge=0)
    alpha_vol: float = Field(default=0.006, ge=0, description="stationary std of each ticker's hidden alpha")
    market_alpha_vol: float = Field(default=0.001, ge=0, description="stationary std of the market's hidden alpha")
    alpha_persistence: float = Field(default=0.7, ge=0, lt=1, description="AR(1) coefficient of the alphas")
    channels: dict[str, Channel] = Field(default_factory=_default_channels)
    sectors: int = Field(default=0, ge=0, description="sectors (0: none); tickers fill them in contiguous blocks")
    sector_vol: float = Field(default=0.006, ge=0, description="daily std of each sector's factor return")

    @field_validator("channels", mode="after")
    @classmethod
    def _known_channels(cls, channels: dict[str, Channel]) -> dict[str, Channel]:
        """Unknown names are rejected; channels left out keep their defaults."""
        unknown = sorted(set(channels) - set(CHANNEL_NAMES))
        if unknown:
            raise ValueError(f"unknown channel(s) {', '.join(unknown)}; channels are {', '.join(CHANNEL_NAMES)}")
        return {**_default_channels(), **channels}
