"""The synthetic minute market's unseen-regime injection: off by default, and confined to its window."""

from __future__ import annotations

import numpy as np
import pytest

from market.synthetic.intraday import generate_intraday

KNOBS = {"tickers": ["SYNBTC"], "bars": 3000, "seed": 4}
CRASH = {"start": "2024-01-01 20:00", "bars": 600, "drift": -2e-4, "vol_scale": 4.0}


def test_injection_changes_only_its_window():
    plain = generate_intraday(**KNOBS).frame("SYNBTC")
    assert plain.equals(generate_intraday(**KNOBS, inject=None).frame("SYNBTC"))
    crashed = generate_intraday(**KNOBS, inject=CRASH).frame("SYNBTC")
    first = int(plain.index.searchsorted(np.datetime64("2024-01-01T20:00")))
    assert plain.iloc[:first].equals(crashed.iloc[:first])
    log_plain, log_crash = (np.log(f["close"]).diff().to_numpy() for f in (plain, crashed))
    window = slice(first, first + CRASH["bars"])
    assert np.nanstd(log_crash[window]) > 2.5 * np.nanstd(log_plain[window])
    assert log_crash[window].mean() < 0
    after = slice(first + CRASH["bars"], None)
    assert np.allclose(log_plain[after], log_crash[after])


def test_a_bad_injection_is_refused():
    with pytest.raises(ValueError, match="bars"):
        generate_intraday(**KNOBS, inject={**CRASH, "bars": 0})
