"""Seeded synthetic markets whose record channels carry a configured amount of information
about forward returns (see docs/synthetic_market.md)."""

from market.synthetic.generate import generate_market
from market.synthetic.knobs import Channel, Regime, SyntheticKnobs

__all__ = ["Channel", "Regime", "SyntheticKnobs", "generate_market"]
