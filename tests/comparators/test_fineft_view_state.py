"""FineFT's decision state from the point-in-time view: the shared row equals recomputation, later or other
bars never answer a decision, and the plugin decides the same with the shared rows as with fresh ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from comparators.checkpoint import save_checkpoint
from comparators.features import Standardiser
from comparators.fineft import view_state
from comparators.fineft.policy import FineFTModel
from comparators.fineft.positions import position_grid
from comparators.fineft.state import LOOKBACK, STATE_FEATURES, state_table
from comparators.fineft.steps import is_step_close, step_bars
from comparators.fineft.view_state import ViewStates, decision_bars, decision_state
from frameworks.fineft import FineFT
from market.data import MarketData
from market.decision import DecisionContext
from market.portfolio import PortfolioState
from market.synthetic.intraday import generate_intraday
from market.view import MarketView

STEP = 5
MARKET = generate_intraday(tickers=["SYN"], start="2024-01-01", bars=(LOOKBACK + 40) * STEP, minutes=1, seed=3)
INDEX = MARKET.frame("SYN").index
CLOSES = INDEX[is_step_close(INDEX, STEP)]


def with_bars(data: MarketData, frame: pd.DataFrame) -> MarketData:
    return MarketData(bars={"SYN": frame}, records=data.records, origin=data.origin, calendar=data.calendar)


def perturbed_after(stamp: pd.Timestamp) -> MarketData:
    """MARKET with every bar after `stamp` rewritten (prices doubled, volume tripled)."""
    frame = MARKET.frame("SYN").copy()
    later = frame.index > stamp
    frame.loc[later, ["open", "high", "low", "close"]] *= 2.0
    frame.loc[later, "volume"] *= 3.0
    return with_bars(MARKET, frame)


def test_the_shared_row_is_the_row_of_the_window_and_is_computed_once_per_bar(monkeypatch):
    calls = []
    monkeypatch.setattr(view_state, "state_table", lambda *a: calls.append(a) or state_table(*a))
    states = ViewStates()
    stamp = CLOSES[-3]
    view = MarketView(MARKET, stamp)
    first = states.state(view, "SYN", STEP, 8.0)
    assert states.state(MarketView(MARKET, stamp), "SYN", STEP, 8.0) is first and len(calls) == 1
    recent = MARKET.frame("SYN").loc[:stamp].iloc[-(2 + (LOOKBACK + 1) * STEP):]
    expected = state_table(step_bars(recent, STEP), 8.0).iloc[[-1]]
    pd.testing.assert_frame_equal(first, expected, check_exact=True)
    assert list(first.columns) == list(STATE_FEATURES) and first.index[0] == stamp
    states.state(view, "SYN", STEP, 4.0)                            # other settings: another row
    assert len(calls) == 2
    assert states.state(MarketView(MARKET, INDEX[LOOKBACK * STEP - STEP]), "SYN", STEP, 8.0) is None  # warm-up


def test_bars_after_the_view_or_of_another_market_never_answer_a_decision():
    stamp = CLOSES[-6]
    honest = decision_state(decision_bars(MarketView(MARKET, stamp), "SYN", STEP), stamp, STEP, 8.0)
    states = ViewStates()
    later = states.state(MarketView(perturbed_after(stamp), CLOSES[-2]), "SYN", STEP, 8.0)   # a later view first
    tampered = states.state(MarketView(perturbed_after(stamp), stamp), "SYN", STEP, 8.0)
    pd.testing.assert_frame_equal(tampered, honest, check_exact=True)
    pd.testing.assert_frame_equal(states.state(MarketView(MARKET, stamp), "SYN", STEP, 8.0), honest, check_exact=True)
    assert not later.equals(honest)
    # control: a change at the decision bar itself reaches the row (the comparison above can fail)
    frame = MARKET.frame("SYN").copy()
    frame.loc[stamp, ["close", "high"]] *= 1.01
    moved = states.state(MarketView(with_bars(MARKET, frame), stamp), "SYN", STEP, 8.0)
    assert not moved.equals(honest)
    pd.testing.assert_frame_equal(states.state(MarketView(MARKET, stamp), "SYN", STEP, 8.0), honest, check_exact=True)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """Two untrained FineFT checkpoints (seeds 0, 1) over the 22 state features, 5-minute steps."""
    steps = step_bars(MARKET.frame("SYN"), STEP)
    standardiser = Standardiser.fit([state_table(steps, 8.0).iloc[LOOKBACK:]], steps.index[0], steps.index[-1])
    folders = {}
    for seed in (0, 1):
        torch.manual_seed(seed)
        model = FineFTModel(len(STATE_FEATURES), position_grid(5.0), learners=3, dynamics=2, hidden=8)
        model.chosen.copy_(torch.tensor([1, 2]))
        model.threshold.fill_(0.3)
        rng = np.random.default_rng(seed)
        for k in range(2):
            model.set_reference(k, rng.normal(-30.0, 5.0, size=400))
        config = {"features": len(STATE_FEATURES), "grid": position_grid(5.0).tolist(), "learners": 3, "dynamics": 2,
                  "hidden": 8, "vae_latent": 4, "vae_hidden": 32, "conservative": "flat", "funding_hours": 8.0,
                  "step_minutes": STEP, "standardiser": standardiser.to_dict()}
        folders[seed] = tmp_path_factory.mktemp(f"fineft-{seed}") / "checkpoint"
        save_checkpoint(folders[seed], model, config, {"seed": seed})
    return {seed: str(folder) for seed, folder in folders.items()}


def test_the_plugin_decides_the_same_with_shared_rows_as_with_fresh_ones(checkpoints):
    shared = FineFT(checkpoints)
    fresh = FineFT(checkpoints)
    portfolio = PortfolioState(cash=100_000.0, positions={"SYN": 3000.0}, marks={"SYN": 100.0}, margin=60.0, settled=True)
    stamps = INDEX[LOOKBACK * STEP - 2 * STEP:]
    targets = []
    for stamp in stamps[::3]:
        batch = [DecisionContext(ticker="SYN", date=stamp, view=MarketView(MARKET, stamp), seed=seed, portfolio=portfolio)
                 for seed in (0, 1)]
        mine = shared.decide(batch)
        for context, decision in zip(batch, mine):
            fresh.states = ViewStates()
            again = fresh.decide([context])[0]
            assert decision.model_dump() == again.model_dump()
        targets.extend(d.target for d in mine if d.target is not None)
    assert len(set(targets)) > 1     # the untrained learners move: the comparison sees decisions, not only flat
