"""Record files (JSONL/CSV) load into the channel schemas; bad input gives one clear line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from core.errors import DataError
from market.sources.records import CHANNELS, load_records, validate_records

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("channel", CHANNELS)
def test_fixture_files_load(channel):
    frame = load_records(next(FIXTURES.glob(f"{channel}.*")), channel)
    assert {"ticker", "available_at"} <= set(frame.columns)
    assert frame["available_at"].is_monotonic_increasing
    assert pd.api.types.is_datetime64_dtype(frame["available_at"])


def test_offsets_become_exchange_time_and_nulls_stay_missing():
    news = load_records(FIXTURES / "news.jsonl", "news")
    assert news["available_at"].iloc[-1] == pd.Timestamp("2020-03-02 17:30")
    assert pd.Timestamp("2020-03-02 09:15") in set(news["available_at"])  # 09:15-05:00 is New York time
    assert news["sentiment"].isna().sum() == 1 and (news["source"] == "").sum() == 1
    macro = load_records(FIXTURES / "macro.csv", "macro")
    assert set(macro["ticker"]) == {""}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(("name", "text", "channel", "message"), [
    ("n.csv", "ticker,available_at,headline,source,sentiment\nA,2020-01-02,x,s,0.1\nA,someday,y,s,0.2\n",
     "news", r"n.csv: row 2: field available_at: not a date/time \('someday'\)"),
    ("n.csv", "ticker,available_at,headline,source,sentiment\nA,2020-01-02,x,s,high\n",
     "news", r"n.csv: row 1: field sentiment: not a number \('high'\)"),
    ("s.csv", "ticker,available_at,text,sentiment\nA,2020-01-02,x,0.1\n",
     "social", r"s.csv: missing column\(s\) likes"),
    ("f.csv", "ticker,available_at,statement,period_end,item,value\nA,2020-01-02,income,2019-12-31,rev,1\n"
              "A,2020-01-02,p&l,2019-12-31,rev,1\n",
     "fundamentals", r"f.csv: row 2: field statement: 'p&l' is not one of balance_sheet, cashflow, income"),
    ("i.jsonl", '{"ticker": "A", "available_at": "2020-01-02", "insider": "x", "role": "CEO", '
                '"transaction": "buy", "shares": 0, "price": 3}\n',
     "insider", r"i.jsonl: row 1: field shares: 0.0 is not positive"),
    ("i.jsonl", '{"ticker": "A"}\n{"ticker": \n',
     "insider", r"i.jsonl: row 2 \(line 2\): invalid JSON"),
    ("d.csv", "ticker,available_at,ex_date,amount\nA,2020-01-02,,0.1\n",
     "dividends", r"d.csv: row 1: field ex_date: missing"),
    ("m.txt", "x", "macro", r"m.txt: unsupported record file type '.txt'"),
    ("e.csv", "ticker,available_at,period_end,eps_estimate,revenue_estimate,analysts\n",
     "earnings_estimates", r"e.csv: no rows"),
])
def test_bad_files_fail_with_one_line_naming_file_row_and_field(tmp_path, name, text, channel, message):
    with pytest.raises(DataError, match=message) as error:
        load_records(write(tmp_path, name, text), channel)
    assert "\n" not in str(error.value)


def test_out_of_range_sentiment_names_the_row():
    with pytest.raises(DataError, match=r"news_bad_sentiment.jsonl: row 2: field sentiment: 1.7 outside \[-1, 1\]"):
        load_records(FIXTURES / "news_bad_sentiment.jsonl", "news")


def test_unknown_channel_and_missing_file(tmp_path):
    with pytest.raises(DataError, match="unknown channel 'tweets'"):
        validate_records(pd.DataFrame({"ticker": ["A"]}), "tweets", "t")
    with pytest.raises(DataError, match="no such file"):
        load_records(tmp_path / "absent.jsonl", "news")


def test_the_records_config_adds_channels_to_any_bar_source():
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    root = Path(__file__).resolve().parents[2]
    data = OmegaConf.load(root / "configs" / "data" / "files_with_records.yaml")
    data.data = {"_target_": "market.sources.embedded.load_embedded", "tickers": "${tickers}"}
    data.files = {"news": str(FIXTURES / "news.jsonl"), "dividends": str(FIXTURES / "dividends.csv")}
    market = instantiate(OmegaConf.create({"tickers": ["NVDA"], "data": data}).data)
    assert market.tickers == ["NVDA"]
    assert set(market.records) == {"macro", "news", "dividends"}
    assert len(market.records["news"]) == 4
