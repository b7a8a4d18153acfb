"""Loading and validating bars: every bad file gives one line naming file, row and problem."""

from __future__ import annotations

import pandas as pd
import pytest
from bars import random_bars, write_csv

from core.errors import ConfigError, DataError
from market.sources.embedded import EMBEDDED_TICKERS, load_embedded
from market.sources.files import load_folder
from market.sources.records import load_records
from market.sources.yfinance_source import load_yfinance


def test_embedded_tickers_load_and_share_the_quick_window():
    data = load_embedded(["AMZN", "MSFT", "NFLX", "NVDA"])
    for ticker in data.tickers:
        frame = data.bars[ticker]
        assert frame.index.is_monotonic_increasing and frame.index.is_unique
        assert frame.index.min() <= pd.Timestamp("2018-02-05") and frame.index.max() >= pd.Timestamp("2020-07-31")
    assert (data.bars["MSFT"].index == data.bars["MSFT"].index.normalize()).all()  # 16:00 stamps dropped


@pytest.mark.slow
def test_every_embedded_ticker_is_valid():
    stocks = [t for t in EMBEDDED_TICKERS if t != "BTC_15M"]
    assert set(load_embedded(stocks).tickers) == set(stocks)
    assert load_embedded(["BTC_15M"]).tickers == ["BTC_15M"]


def test_bitcoin_and_stocks_are_not_one_market():
    with pytest.raises(ConfigError, match="^tickers: BTC_15M trade 24/7 and the others on an exchange calendar"):
        load_embedded(["BTC_15M", "NVDA"])


def test_unknown_embedded_ticker_names_the_known_ones():
    with pytest.raises(ConfigError, match="unknown embedded ticker 'GOOGL'.*NVDA"):
        load_embedded(["GOOGL"])


def test_folder_round_trip_csv_and_parquet(tmp_path):
    bars = random_bars(30)
    write_csv(bars, tmp_path / "AAA.csv")
    bars.rename_axis("Date").reset_index().to_parquet(tmp_path / "BBB.parquet")
    data = load_folder(tmp_path, ["AAA", "BBB"])
    pd.testing.assert_frame_equal(data.bars["BBB"], bars, check_freq=False)
    assert data.bars["AAA"]["close"].to_numpy() == pytest.approx(bars["close"].to_numpy())


def corrupt(tmp_path, change) -> str:
    table = random_bars(10).rename_axis("date").reset_index()
    table["date"] = table["date"].dt.strftime("%Y-%m-%d")
    table = change(table)
    table.to_csv(tmp_path / "BAD.csv", index=False)
    with pytest.raises(DataError) as caught:
        load_folder(tmp_path, ["BAD"])
    message = str(caught.value)
    assert "\n" not in message and "BAD.csv" in message
    return message


def set_cell(row, column, value):
    def change(table):
        table[column] = table[column].astype(object)
        table.loc[row, column] = value
        return table
    return change


@pytest.mark.parametrize("change, expected", [
    (set_cell(3, "close", float("nan")), "row 4 (2021-01-07): NaN close"),
    (set_cell(5, "open", -1.0), "row 6 (2021-01-11): non-positive open"),
    (set_cell(2, "high", 1.0), "row 3 (2021-01-06): high < low"),
    (set_cell(4, "date", "2021-01-07"), "row 5: duplicate date 2021-01-07"),
    (set_cell(4, "date", "2021-01-01"), "row 5: date 2021-01-01 is before the previous row's 2021-01-07"),
    (set_cell(1, "date", "not a date"), "row 2: missing or unparseable date"),
    (set_cell(7, "volume", "many"), "row 8: volume is not a number ('many')"),
    (lambda t: t.drop(columns=["low"]), "missing column(s) low"),
    (lambda t: t.iloc[:0], "no rows"),
    (set_cell(3, "close", float("inf")), "row 4 (2021-01-07): infinite close (inf)"),
    (set_cell(6, "volume", "-inf"), "row 7 (2021-01-12): infinite volume (-inf)"),
])
def test_malformed_files_give_one_clear_line(tmp_path, change, expected):
    assert expected in corrupt(tmp_path, change)


def test_a_semicolon_delimited_file_is_named_with_a_hint(tmp_path):
    (tmp_path / "SEMI.csv").write_text("date;open;high;low;close;volume\n2021-01-04;1;2;0.5;1.5;100\n")
    with pytest.raises(DataError) as caught:
        load_folder(tmp_path, ["SEMI"])
    assert str(caught.value) == (
        f"{tmp_path / 'SEMI.csv'}: missing column date (the header reads 'date;open;high;low;close;volume': "
        "the file seems delimited by ';'; CSV files must be comma-separated)")


def test_an_infinite_record_value_is_refused_with_its_row(tmp_path):
    path = tmp_path / "macro.csv"
    path.write_text("series,period,value,available_at\nCPI,2021-01-01,1.5,2021-01-15\nCPI,2021-02-01,inf,2021-02-15\n")
    with pytest.raises(DataError, match=r"macro.csv: row 2: field value: infinite \('inf'\)"):
        load_records(path, "macro")


def test_missing_ticker_file_lists_what_is_there(tmp_path):
    write_csv(random_bars(5), tmp_path / "AAA.csv")
    with pytest.raises(DataError, match=r"no ZZZ.csv or ZZZ.parquet \(tickers present: AAA\)"):
        load_folder(tmp_path, ["ZZZ"])


def test_empty_window_is_an_error():
    data = load_embedded(["TSLA"])
    with pytest.raises(ConfigError, match="empty window for TSLA"):
        data.trading_days("TSLA", "2010-01-01", "2010-12-31")


def test_yfinance_cache_reads_recorded_files_and_names_the_fetch_command(tmp_path):
    bars = random_bars(300, start="2022-01-03")
    write_csv(bars, tmp_path / "AAA.csv")
    data = load_yfinance(["AAA"], "2022-01-03", str(bars.index[-1].date()), cache_dir=tmp_path)
    assert len(data.bars["AAA"]) == 300
    with pytest.raises(DataError, match="python -m market.fetch --tickers AAA BBB --start 2022-01-03"):
        load_yfinance(["AAA", "BBB"], "2022-01-03", "2023-01-01", cache_dir=tmp_path)
    with pytest.raises(DataError, match="covers 2022-01-03 .. .*refetch"):
        load_yfinance(["AAA"], "2020-01-01", "2023-01-01", cache_dir=tmp_path)
