"""FinAgent tests run on the synthetic market (it has news) with the tiny real model."""

from __future__ import annotations

import pytest
from finagent_runs import synthetic_market

from market.data import MarketData


@pytest.fixture
def market() -> MarketData:
    return synthetic_market()
