"""Each part of the risk overlay (harness.overlay) against a hand computation, on short bar paths."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from harness.execution import ExecutionConfig, Simulator
from harness.overlay import OverlayBook, OverlayConfig
from harness.overlay.drift import drift_warning
from market.decision import Action, Decision

BUY, SELL, HOLD = (Decision(action=a) for a in (Action.BUY, Action.SELL, Action.HOLD))


def bars(closes: list[float], opens: list[float] | None = None) -> pd.DataFrame:
    """Daily bars with the given closes (and opens; default: each open = the previous close, the first = its close)."""
    opens = opens or [closes[0], *closes[:-1]]
    index = pd.DatetimeIndex(pd.bdate_range("2024-01-01", periods=len(closes)), name="date")
    return pd.DataFrame({"open": opens, "high": [max(o, c) for o, c in zip(opens, closes)],
                         "low": [min(o, c) for o, c in zip(opens, closes)], "close": closes,
                         "volume": 1000.0}, index=index)


def book(frame: pd.DataFrame, overlay: dict, baseline: list[Decision] | None = None, **execution) -> OverlayBook:
    config = ExecutionConfig(initial_cash=10_000, **{"fee_bps": 0.0, **execution})
    return OverlayBook(Simulator(frame, config), OverlayConfig.model_validate(overlay), baseline)


def run(overlay_book: OverlayBook, decisions: list[Decision]) -> pd.DataFrame:
    for decision in decisions:
        overlay_book.submit(decision)
    return pd.DataFrame(overlay_book.records)


def shares(overlay_book: OverlayBook) -> list[float]:
    return overlay_book.result().equity["position"].tolist()


def test_sizing_buys_95_percent_when_flat_tops_up_and_never_sells():
    # Day 0 close 100, fill day 1 at open 100: floor(0.95 * 10,000 / 100) = 95 shares, fee 10 bps of 9,500 = 9.5,
    # cash 10,000 - 9,500 - 9.5 = 490.5. Day 1 BUY at open 100 (exposure 9,500 / 9,990.5 = 0.951 >= 0.95): no trade.
    # Day 2 BUY fills at open 50: equity 490.5 + 95 * 50 = 5,240.5, floor(0.95 * 5,240.5 / 50) = 99 shares (+4).
    overlay_book = book(bars([100, 100, 100, 50], opens=[100, 100, 100, 50]), {"sizing": {"enabled": True}}, fee_bps=10.0)
    records = run(overlay_book, [BUY, BUY, BUY, HOLD])
    assert shares(overlay_book) == [0, 95, 95, 99]
    assert overlay_book.result().equity["cash"].iloc[1] == pytest.approx(490.5)
    assert records["sizing"].tolist() == [True, True, True, False]
    assert records["executed_target"].iloc[0] == 0.95 and records["executed_action"].iloc[1] == "HOLD"
    assert records["original_action"].tolist() == ["BUY", "BUY", "BUY", "HOLD"]


def test_sizing_caps_targets_at_the_invest_fraction_both_ways():
    overlay_book = book(bars([100, 100, 100]), {"sizing": {"enabled": True}}, mode="target", allow_short=True)
    records = run(overlay_book, [Decision(target=1.0), Decision(target=-1.0), Decision(target=0.3)])
    assert records["executed_target"].tolist()[:2] == [0.95, -0.95]
    assert shares(overlay_book) == [0, 95, -95]  # equity stays 10,000 at a flat price


def test_loss_stop_forces_hold_on_a_day_that_lost_more_than_5_percent():
    # BUY on day 0 fills 90 shares (kappa 0.9) at 100; day 1 closes at 94: equity 10,000 - 9,000 + 90 * 94 = 9,460,
    # a loss of 5.4 % (> 5 %): day 1's SELL is forced to HOLD. Day 2 closes at 93: loss 90 / 9,460 = 0.95 % < 5 %:
    # day 2's SELL fills.
    overlay_book = book(bars([100, 94, 93, 93]), {"loss_stop": {"enabled": True}})
    records = run(overlay_book, [BUY, SELL, SELL, HOLD])
    assert records["loss_stop"].tolist() == [False, True, False, False]
    assert records["day_loss"].iloc[1] == pytest.approx(1 - 9_460 / 10_000)
    assert records["executed_action"].tolist() == ["BUY", "HOLD", "SELL", "HOLD"]
    assert shares(overlay_book) == [0, 90, 90, 0]
    assert records["changed"].tolist() == [False, True, False, False]


def test_a_forced_hold_in_target_mode_keeps_the_short_position_share_for_share():
    # A target of -1 at 100: -100 shares, cash 20,000. Day 1 closes at 110: equity 20,000 - 11,000 = 9,000, a 10 %
    # loss: day 1's target of 0 is forced to HOLD, a no-trade in target mode (not a target recomputed from prices).
    overlay_book = book(bars([100, 110, 110, 110]), {"loss_stop": {"enabled": True}}, mode="target", allow_short=True)
    records = run(overlay_book, [Decision(target=-1.0), Decision(target=0.0), Decision(target=0.0), Decision(target=0.0)])
    assert records["executed_action"].tolist()[1] == "HOLD" and records["loss_stop"].tolist() == [False, True, False, False]
    assert shares(overlay_book) == [0, -100, -100, 0]


def test_cool_down_after_three_wrong_decisions_judged_on_the_next_close():
    # Closes fall every day, so every BUY is wrong once the next bar has closed. Day 0's BUY is judged at day 1's
    # close, ..., day 2's (the third wrong one) at day 3's: days 3 and 4 are forced to HOLD (days=2) and not
    # judged; day 5's BUY is judged at day 6 (streak 1), day 6's at 7 (2), day 7's at 8 (3): days 8, 9 forced.
    closes = [100 - i for i in range(11)]
    overlay_book = book(bars(closes), {"cool_down": {"enabled": True, "wrong_streak": 3, "days": 2}})
    records = run(overlay_book, [BUY] * 11)
    assert records["cool_down"].tolist() == [False, False, False, True, True, False, False, False, True, True, False]
    assert records["wrong_streak"].tolist() == [0, 1, 2, 0, 0, 0, 1, 2, 0, 0, 0]


def test_cool_down_leaves_holds_unjudged_and_a_right_decision_resets_the_streak():
    # Day 0 BUY wrong (close 99), day 1 HOLD (not judged), day 2 SELL wrong (close rises to 100), day 3 BUY
    # right (close 101): streak 1, 1, 2, 0 -- never 3, no cool-down.
    overlay_book = book(bars([100, 99, 99, 100, 101, 101]), {"cool_down": {"enabled": True}})
    records = run(overlay_book, [BUY, HOLD, SELL, BUY, HOLD, HOLD])
    assert records["wrong_streak"].tolist() == [0, 1, 1, 2, 0, 0]
    assert not records["cool_down"].any()


def test_cold_start_blends_the_framework_and_the_baseline_books_in_discrete_mode():
    # Flat price 100, no fees. Day 0: the framework HOLDs (its own book: flat, x = 0), the baseline BUYs
    # (its book: 90 shares, x = 0.9): the book goes to 0.5 * 0 + 0.5 * 0.9 = 0.45, floor(0.45 * 10,000 / 100) = 45.
    # Day 1: baseline BUYs 9 more (99 shares, cash 100, x = 0.99): 0.495 -> 49 shares. Day 2 (after the 2-day cold
    # start) the framework's SELL executes as it is.
    overlay_book = book(bars([100] * 4), {"cold_start": {"enabled": True, "days": 2}}, baseline=[BUY, BUY])
    records = run(overlay_book, [HOLD, HOLD, SELL, HOLD])
    assert shares(overlay_book) == [0, 45, 49, 0]
    assert records["baseline_exposure"].tolist()[:2] == pytest.approx([0.9, 0.99])
    assert records["executed_target"].tolist()[:2] == pytest.approx([0.45, 0.495])
    assert records["cold_start"].tolist() == [True, True, False, False]
    assert records["executed_action"].tolist()[2:] == ["SELL", "HOLD"]


def test_cold_start_blends_targets_with_the_configured_weight_in_target_mode():
    # 0.25 * 0.2 + 0.75 * 1.0 = 0.8 of 10,000 at 100: 80 shares; then the framework's own 0.2: 20 shares.
    overlay_book = book(bars([100] * 3), {"cold_start": {"enabled": True, "days": 1, "framework_weight": 0.25}},
                        baseline=[Decision(target=1.0)], mode="target")
    records = run(overlay_book, [Decision(target=0.2), Decision(target=0.2), Decision(target=0.2)])
    assert shares(overlay_book) == [0, 80, 20]
    assert records["executed_target"].tolist()[:2] == pytest.approx([0.8, 0.2])


def test_a_gate_wins_over_the_cold_start_and_sizing():
    # Day 0 blends to 0.9 (90 shares); day 1 closes at 93: equity 1,000 + 90 * 93 = 9,370, a 6.3 % loss: the stop
    # forces HOLD although the blend (and sizing) would have bought.
    overlay_book = book(bars([100, 93, 93, 93]), {"loss_stop": {"enabled": True}, "sizing": {"enabled": True},
                                                  "cold_start": {"enabled": True, "days": 3}}, baseline=[BUY] * 3)
    records = run(overlay_book, [BUY, BUY, BUY, HOLD])
    assert records.loc[1, "loss_stop"] and records.loc[1, "executed_action"] == "HOLD"
    assert records["cold_start"].tolist() == [True, False, True, False]  # counted on the days it was executed
    assert shares(overlay_book)[2] == shares(overlay_book)[1]


def test_drift_monitor_fires_when_holds_exceed_the_share_of_a_full_window_and_changes_nothing():
    # HOLD flags 1 1 0 1 1 0: the window of 4 is full from day 3: shares 3/4, 3/4, 2/4 -> fires on days 3 and 4.
    overlay_book = book(bars([100] * 6), {"drift": {"enabled": True, "window": 4, "max_hold_share": 0.5}})
    records = run(overlay_book, [HOLD, HOLD, BUY, HOLD, HOLD, SELL])
    assert records["drift"].tolist() == [False, False, False, True, True, False]
    assert records["hold_share"].tolist()[3:] == [0.75, 0.75, 0.5] and math.isnan(records["hold_share"].iloc[2])
    assert not records["changed"].any()
    rows = [{**row, "framework": "f", "ticker": "AAA", "seed": 0} for row in overlay_book.records]
    assert drift_warning("f", rows, OverlayConfig.model_validate({"drift": {"enabled": True, "window": 4}}).drift) == (
        "overlay drift: f: HOLD above 80% of the last 4 decisions in 1 episode(s): AAA seed 0 from 2024-01-04 (75%)")


def test_drift_counts_an_unchanged_target_as_hold():
    overlay_book = book(bars([100] * 4), {"drift": {"enabled": True, "window": 2, "max_hold_share": 0.5}}, mode="target")
    records = run(overlay_book, [Decision(target=0.0), Decision(target=0.5), Decision(target=0.5), Decision(target=0.5)])
    assert records["hold_share"].tolist()[1:] == [0.5, 0.5, 1.0]
    assert records["drift"].tolist() == [False, False, False, True]


def test_every_part_off_executes_every_decision_as_it_is():
    frame = bars([100, 101, 99, 102, 98])
    decisions = [BUY, HOLD, SELL, BUY, HOLD]
    overlay_book = book(frame, {})
    run(overlay_book, decisions)
    plain = Simulator(frame, ExecutionConfig(initial_cash=10_000, fee_bps=0.0))
    for decision in decisions:
        plain.submit(decision)
    pd.testing.assert_frame_equal(overlay_book.result().equity, plain.result().equity)
