"""The shared comparator modules: features, checkpoint, training log."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest
import torch

from comparators.checkpoint import fingerprint, load_checkpoint, save_checkpoint, weights_fingerprint
from comparators.features import (
    FEATURE_NAMES,
    Standardiser,
    aligned_bar_features,
    bar_features,
    channel_columns,
    cross_section_shuffle,
    panel,
    record_feature,
    universe_bar_features,
    universe_view_features,
    view_features,
    windows,
)
from comparators.training_log import CSV_FILE, TENSORBOARD_DIR, TrainingLog
from core.errors import DataError, MissingFileError


def _bars(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.01, n)))
    open_ = close * (1 + rng.normal(0, 0.005, n))
    high = np.maximum(open_, close) * 1.01
    low = np.minimum(open_, close) * 0.99
    index = pd.bdate_range("2020-01-01", periods=n)
    return pd.DataFrame({"open": open_, "high": high, "low": low, "close": close,
                         "volume": rng.uniform(1e5, 2e5, n)}, index=index)


def test_bar_features_match_their_formulas_and_are_causal():
    bars = _bars()
    features = bar_features(bars)
    assert list(features.columns) == list(FEATURE_NAMES)
    t = 25
    o, h, lo, c = (bars[k].iloc[t] for k in ("open", "high", "low", "close"))
    assert features["kmid"].iloc[t] == pytest.approx((c - o) / o)
    assert features["roc5"].iloc[t] == pytest.approx(bars["close"].iloc[t - 5] / c)
    assert features["ma10"].iloc[t] == pytest.approx(bars["close"].iloc[t - 9:t + 1].mean() / c)
    assert features["std20"].iloc[t] == pytest.approx(bars["close"].iloc[t - 19:t + 1].std(ddof=1) / c)
    assert np.isnan(features["ma20"].iloc[10])
    changed = bars.copy()
    changed.iloc[t + 1:] *= 3.0
    pd.testing.assert_frame_equal(bar_features(changed).iloc[:t + 1], features.iloc[:t + 1])


def _awkward_universe() -> dict[str, pd.DataFrame]:
    """Five instruments with what the formulas must survive: zero volume, flat bars (h = l, so
    rsv10's denominator is 0), a zero open, and two calendars (one instrument misses three bars)."""
    bars = {f"S{i}": _bars(60, seed=i) for i in range(5)}
    bars["S1"].iloc[10:15, bars["S1"].columns.get_loc("volume")] = 0.0
    bars["S2"].iloc[20:35, :4] = 50.0
    bars["S3"].iloc[5, bars["S3"].columns.get_loc("open")] = 0.0
    bars["S4"] = bars["S4"].drop(bars["S4"].index[30:33])
    return bars


def test_the_vectorised_features_equal_the_per_instrument_ones_bit_for_bit():
    bars = _awkward_universe()
    each = {name: bar_features(frame) for name, frame in bars.items()}
    together = universe_bar_features(bars)
    assert list(together) == list(bars)
    for name in bars:
        pd.testing.assert_frame_equal(together[name], each[name], check_exact=True)
    aligned = {name: bars[name] for name in ("S0", "S1", "S2", "S3")}
    np.testing.assert_array_equal(aligned_bar_features(aligned),
                                  np.stack([each[name].to_numpy() for name in aligned], axis=1))
    assert np.isnan(each["S2"]["rsv10"].iloc[34]) and np.isnan(each["S1"]["vma5"].iloc[12])
    with pytest.raises(DataError, match="share one index"):
        aligned_bar_features(bars)


def test_universe_view_features_equal_view_features_and_are_point_in_time():
    from market.synthetic import generate_market
    from market.view import MarketView

    names, channels = ["ALFA", "BRVO", "CHRL"], {"news": "sentiment"}
    data = generate_market(tickers=names, days=80, seed=0, channels={"news": {"snr": 1.0}})
    dates = data.bars["ALFA"].index
    early = universe_view_features(MarketView(data, dates[40]), names, channels)
    for name, frame in early.items():
        pd.testing.assert_frame_equal(frame, view_features(MarketView(data, dates[40]), name, channels), check_exact=True)
    before = universe_view_features(MarketView(data, dates[-1]), names, channels)
    for frame in data.bars.values():
        frame.iloc[41:, :4] *= np.linspace(1.5, 0.5, len(frame) - 41)[:, None]  # every price after dates[40] moved
    after = universe_view_features(MarketView(data, dates[-1]), names, channels)
    for name in names:
        pd.testing.assert_frame_equal(after[name].iloc[:41], early[name], check_exact=True)
        assert not after[name].iloc[41:].equals(before[name].iloc[41:])


def test_standardiser_uses_train_rows_only():
    frame = pd.DataFrame({"x": np.arange(10.0)}, index=pd.bdate_range("2020-01-01", periods=10))
    scaler = Standardiser.fit([frame], frame.index[0], frame.index[4])
    assert scaler.mean == (2.0,)
    assert scaler.std == pytest.approx((np.std(np.arange(5.0), ddof=1),))
    z = scaler.transform(frame)
    assert z[2, 0] == pytest.approx(0.0)
    assert Standardiser.from_dict(scaler.to_dict()) == scaler
    with pytest.raises(DataError, match="train split"):
        Standardiser.fit([frame], "2021-01-01", "2021-02-01")


def test_windows_hold_the_last_rows_oldest_first_with_zeros_before_the_start():
    values = np.arange(12, dtype=np.float32).reshape(6, 2)
    stacked = windows(values, 3)
    assert stacked.shape == (6, 3, 2)
    np.testing.assert_array_equal(stacked[4], values[2:5])
    np.testing.assert_array_equal(stacked[0, :2], np.zeros((2, 2)))
    np.testing.assert_array_equal(stacked[0, 2], values[0])


def test_panel_stacks_instruments_and_refuses_a_missing_date():
    a, b = bar_features(_bars(seed=1)), bar_features(_bars(seed=2))
    scaler = Standardiser.fit([a, b], a.index[0], a.index[20])
    out = panel({"A": a, "B": b}, a.index[-3:], 10, scaler)
    assert out.shape == (3, 2, 10, len(FEATURE_NAMES))
    np.testing.assert_allclose(out[-1, 1, -1], scaler.transform(b)[-1])
    with pytest.raises(DataError, match="no bar"):
        panel({"A": a}, pd.DatetimeIndex(["2030-01-01"]), 10, scaler)


def test_record_feature_averages_the_records_published_up_to_each_close():
    index = pd.bdate_range("2020-01-06", periods=3)
    records = pd.DataFrame({
        "available_at": pd.to_datetime(["2020-01-06 09:00", "2020-01-06 15:00", "2020-01-06 17:00",
                                         "2020-01-08 16:00", "2020-01-08 16:01"]),
        "sentiment": [0.2, 0.4, -0.6, 1.0, 9.0]})
    values = record_feature(records, index, "sentiment", pd.Timedelta(hours=16))
    np.testing.assert_allclose(values.to_numpy(), [0.3, -0.6, 1.0])
    assert record_feature(records.iloc[:0], index, "sentiment", pd.Timedelta(0)).eq(0).all()


def test_cross_section_shuffle_gives_every_instrument_another_ones_value_the_same_way_each_time():
    frame = pd.DataFrame(np.arange(40.0).reshape(8, 5), index=pd.bdate_range("2020-01-01", periods=8))
    shuffled = cross_section_shuffle(frame, seed=3)
    assert (shuffled.to_numpy() != frame.to_numpy()).all()
    np.testing.assert_array_equal(np.sort(shuffled.to_numpy(), axis=1), frame.to_numpy())
    pd.testing.assert_frame_equal(cross_section_shuffle(frame.iloc[2:5], seed=3), shuffled.iloc[2:5])


class _Tiny(torch.nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.layer = torch.nn.Linear(3, width)


def test_checkpoint_round_trip_and_fingerprint(tmp_path):
    torch.manual_seed(0)
    model = _Tiny(4)
    folder = tmp_path / "ckpt"
    printed = save_checkpoint(folder, model, {"width": 4}, {"seed": 0})
    loaded = load_checkpoint(folder, lambda config: _Tiny(config["width"]))
    assert torch.equal(loaded.model.layer.weight, model.layer.weight)
    assert loaded.config == {"width": 4} and loaded.facts == {"seed": 0}
    assert loaded.fingerprint == printed == fingerprint(folder)
    assert not loaded.model.training
    with torch.no_grad():
        model.layer.weight[0, 0] += 1e-3
    assert save_checkpoint(folder, model, {"width": 4}, {"seed": 0}) != printed
    assert fingerprint(folder) != printed
    assert save_checkpoint(tmp_path / "other", model, {"width": 4, "note": 1}, {}) != fingerprint(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt", "other"]


def test_checkpoint_faults_are_one_line(tmp_path):
    with pytest.raises(MissingFileError, match="no checkpoint folder"):
        fingerprint(tmp_path / "absent")
    save_checkpoint(tmp_path / "c", _Tiny(4), {"width": 4}, {})
    with pytest.raises(DataError, match="does not fit"):
        load_checkpoint(tmp_path / "c", lambda config: _Tiny(5))
    (tmp_path / "c" / "weights.pt").write_bytes(b"garbage")
    with pytest.raises(DataError, match="not a readable state dict"):
        fingerprint(tmp_path / "c")


def test_training_log_writes_csv_and_tensorboard(tmp_path):
    with TrainingLog(tmp_path, total=3, progress=False) as log:
        log.step(loss=1.0)
        log.step(loss=0.5)
        log.scalars(2, valid_accuracy=0.6)
        log.step(loss=0.25)
    with (tmp_path / CSV_FILE).open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["step"] for r in rows] == ["1", "2", "2", "3"]
    assert [r["loss"] for r in rows] == ["1.0", "0.5", "", "0.25"]
    assert rows[2]["valid_accuracy"] == "0.6"
    assert any((tmp_path / TENSORBOARD_DIR).glob("events.out.tfevents.*"))


def test_view_features_are_point_in_time():
    from market.synthetic import generate_market
    from market.view import MarketView

    data = generate_market(tickers=["ALFA", "BRVO"], days=80, seed=0, channels={"news": {"snr": 1.0}})
    dates = data.bars["ALFA"].index
    early = view_features(MarketView(data, dates[40]), "ALFA", {"news": "sentiment"})
    late = view_features(MarketView(data, dates[-1]), "ALFA", {"news": "sentiment"})
    assert list(early.columns) == [*FEATURE_NAMES, *channel_columns({"news": "sentiment"})]
    assert len(early) == 41
    pd.testing.assert_frame_equal(late.iloc[:41], early)
    assert early["news_sentiment"].abs().sum() > 0


def test_checkpoint_moves_in_what_the_trainer_asks_outside_the_fingerprint(tmp_path):
    log = tmp_path / "log-partial"
    log.mkdir()
    (log / "log.csv").write_text("step\n1\n")
    printed = save_checkpoint(tmp_path / "c", _Tiny(4), {"width": 4}, {}, include={"log": log})
    assert (tmp_path / "c" / "log" / "log.csv").read_text() == "step\n1\n" and not log.exists()
    assert fingerprint(tmp_path / "c") == printed


def test_a_zero_dimensional_tensor_is_fingerprinted_by_its_value():
    one, two = ({"threshold": torch.tensor(value)} for value in (0.25, 0.5))
    assert weights_fingerprint(one, {}) == weights_fingerprint({"threshold": torch.tensor(0.25)}, {})
    assert weights_fingerprint(one, {}) != weights_fingerprint(two, {})
