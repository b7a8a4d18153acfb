"""Record channels from Alpha Vantage (optional, online), cached on disk.

`fetch_alphavantage` downloads raw JSON responses (needs network and an API key in the
environment variable `ALPHAVANTAGE_API_KEY`) into `<cache>/alphavantage/<FUNCTION>[_<SYMBOL>].json`;
`alphavantage_records` only reads that cache, so a benchmark run never touches the network.

    python -m market.sources.alphavantage --tickers NVDA MSFT

Alpha Vantage gives few publication times, so `available_at` follows stated, conservative
rules (a record may appear later than it became public, never earlier):

| channel | functions | available_at |
|---|---|---|
| news | NEWS_SENTIMENT | `time_published` read as New York time (if it is UTC, this errs late) |
| fundamentals | INCOME_STATEMENT, BALANCE_SHEET, CASH_FLOW (quarterly) | fiscal quarter end + 45 days (10-Q deadline 40 days), + 65 for a fiscal year end (10-K deadline 60) |
| insider | INSIDER_TRANSACTIONS | transaction date + 3 days (Form 4 is due within 2 business days) |
| dividends | DIVIDENDS | the day after the declaration date, 00:00 |
| macro | TREASURY_YIELD (10y, daily), WTI (daily), CPI, UNEMPLOYMENT, FEDERAL_FUNDS_RATE (monthly) | daily: the next day, 09:00; CPI: the 20th of the next month, 08:30; unemployment: the 10th of the next month, 08:30; fed funds (monthly average): the 1st of the next month, 09:00 |

Earnings estimates are not loaded: Alpha Vantage does not say when an estimate was published.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from core.errors import DataError
from market.data import MarketData
from market.sources.cache import cache_folder
from market.sources.records import validate_records

API_URL = "https://www.alphavantage.co/query"
KEY_VARIABLE = "ALPHAVANTAGE_API_KEY"

TICKER_FUNCTIONS = ("NEWS_SENTIMENT", "INCOME_STATEMENT", "BALANCE_SHEET", "CASH_FLOW",
                    "INSIDER_TRANSACTIONS", "DIVIDENDS")
MACRO_FUNCTIONS = {  # function -> (series name, extra query parameters, release lag after the period)
    "TREASURY_YIELD": ("treasury_10y", {"interval": "daily", "maturity": "10year"}, pd.Timedelta(days=1, hours=9)),
    "WTI": ("wti", {"interval": "daily"}, pd.Timedelta(days=1, hours=9)),
    "CPI": ("cpi", {"interval": "monthly"}, pd.DateOffset(months=1, days=19, hours=8, minutes=30)),
    "UNEMPLOYMENT": ("unemployment", {}, pd.DateOffset(months=1, days=9, hours=8, minutes=30)),
    "FEDERAL_FUNDS_RATE": ("fed_funds_rate", {"interval": "monthly"}, pd.DateOffset(months=1, hours=9)),
}
STATEMENT_ITEMS = {
    "INCOME_STATEMENT": ("income", {"totalRevenue": "revenue", "grossProfit": "gross_profit",
                                    "operatingIncome": "operating_income", "netIncome": "net_income",
                                    "ebitda": "ebitda"}),
    "BALANCE_SHEET": ("balance_sheet", {"totalAssets": "total_assets", "totalLiabilities": "total_liabilities",
                                        "totalShareholderEquity": "shareholders_equity",
                                        "cashAndCashEquivalentsAtCarryingValue": "cash",
                                        "shortLongTermDebtTotal": "total_debt"}),
    "CASH_FLOW": ("cashflow", {"operatingCashflow": "operating_cash_flow",
                               "capitalExpenditures": "capital_expenditure",
                               "dividendPayout": "dividends_paid"}),
}


def cache_file(folder: Path, function: str, symbol: str | None = None) -> Path:
    """Where the raw response of `function` (for `symbol`) is cached."""
    return folder / (f"{function}_{symbol}.json" if symbol else f"{function}.json")


def _query(function: str, symbol: str | None) -> dict[str, str]:
    if function in MACRO_FUNCTIONS:
        return {"function": function, **MACRO_FUNCTIONS[function][1]}
    key = "tickers" if function == "NEWS_SENTIMENT" else "symbol"
    extra = {"limit": "1000"} if function == "NEWS_SENTIMENT" else {}
    return {"function": function, key: symbol or "", **extra}


def fetch_alphavantage(tickers: list[str], cache_dir: str | Path | None = None,
                       get: Callable[..., Any] | None = None) -> list[Path]:
    """Download every ticker and macro function into the cache; the written files.

    `get(url, params=...)` returns a response with `.json()` (default: `httpx.get`).
    """
    key = os.environ.get(KEY_VARIABLE)
    if not key:
        raise DataError(f"Alpha Vantage needs an API key in the environment variable {KEY_VARIABLE}")
    if get is None:
        import httpx
        get = lambda url, params: httpx.get(url, params=params, timeout=60)  # noqa: E731
    folder = cache_folder("alphavantage", cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    jobs = [(f, t) for t in tickers for f in TICKER_FUNCTIONS] + [(f, None) for f in MACRO_FUNCTIONS]
    written = []
    for function, symbol in jobs:
        payload = get(API_URL, params={**_query(function, symbol), "apikey": key}).json()
        _check(payload, f"{function} {symbol or ''}".strip())
        path = cache_file(folder, function, symbol)
        path.write_text(json.dumps(payload))
        written.append(path)
    return written


def _check(payload: Any, origin: str) -> None:
    """Alpha Vantage answers errors and rate limits with HTTP 200 and a message field."""
    if not isinstance(payload, dict):
        raise DataError(f"{origin}: unexpected response (not a JSON object)")
    for field in ("Error Message", "Information", "Note"):
        if field in payload:
            raise DataError(f"{origin}: Alpha Vantage says: {payload[field]}")


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise DataError(f"{path}: not cached; fetch it with: python -m market.sources.alphavantage "
                        f"--tickers <TICKERS> --cache-dir {path.parent}")
    try:
        payload = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise DataError(f"{path}: invalid JSON ({error.msg})") from None
    _check(payload, str(path))
    return payload


def _number(value: Any) -> float:
    """A float from Alpha Vantage's strings ("None", "." and "" mean missing)."""
    return float("nan") if value in (None, "None", ".", "", "-") else float(value)


def news_rows(payload: dict[str, Any], ticker: str) -> list[dict[str, Any]]:
    """One row per article mentioning `ticker`, with that ticker's sentiment score."""
    rows = []
    for article in payload.get("feed", []):
        scores = [s for s in article.get("ticker_sentiment", []) if s.get("ticker") == ticker]
        sentiment = _number(scores[0]["ticker_sentiment_score"]) if scores else _number(
            article.get("overall_sentiment_score"))
        rows.append({"ticker": ticker, "available_at": pd.Timestamp(article["time_published"]),
                     "headline": article.get("title", ""), "source": article.get("source", ""),
                     "sentiment": max(-1.0, min(1.0, sentiment)) if sentiment == sentiment else sentiment})
    return rows


def statement_rows(payload: dict[str, Any], function: str, ticker: str) -> list[dict[str, Any]]:
    """Quarterly report items, available 45 days after the quarter (65 after a fiscal year)."""
    statement, items = STATEMENT_ITEMS[function]
    year_ends = {report["fiscalDateEnding"] for report in payload.get("annualReports", [])}
    rows = []
    for report in payload.get("quarterlyReports", []):
        period_end = pd.Timestamp(report["fiscalDateEnding"])
        lag = pd.Timedelta(days=65 if report["fiscalDateEnding"] in year_ends else 45)
        for field, item in items.items():
            value = _number(report.get(field))
            if value == value:
                rows.append({"ticker": ticker, "available_at": period_end + lag, "statement": statement,
                             "period_end": period_end, "item": item, "value": value})
    return rows


def insider_rows(payload: dict[str, Any], ticker: str) -> list[dict[str, Any]]:
    """Insider trades, available 3 days after the transaction."""
    rows = []
    for trade in payload.get("data", []):
        shares, price = _number(trade.get("shares")), _number(trade.get("share_price"))
        if not (shares > 0 and price > 0):
            continue  # option grants and gifts have no price
        rows.append({"ticker": ticker, "available_at": pd.Timestamp(trade["transaction_date"]) + pd.Timedelta(days=3),
                     "insider": trade.get("executive", ""), "role": trade.get("executive_title", ""),
                     "transaction": "buy" if trade.get("acquisition_or_disposal") == "A" else "sell",
                     "shares": shares, "price": price})
    return rows


def dividend_rows(payload: dict[str, Any], ticker: str) -> list[dict[str, Any]]:
    """Dividends, available the day after their declaration (skipped when it is unknown)."""
    return [{"ticker": ticker, "available_at": pd.Timestamp(d["declaration_date"]) + pd.Timedelta(days=1),
             "ex_date": pd.Timestamp(d["ex_dividend_date"]), "amount": _number(d["amount"])}
            for d in payload.get("data", []) if d.get("declaration_date") not in (None, "None", "")]


def macro_rows(payload: dict[str, Any], function: str) -> list[dict[str, Any]]:
    """A macro series with its release times (module table); missing values are dropped."""
    series, _, lag = MACRO_FUNCTIONS[function]
    rows = []
    for point in payload.get("data", []):
        value = _number(point.get("value"))
        if value == value:
            period = pd.Timestamp(point["date"])
            rows.append({"ticker": "", "available_at": period + lag, "series": series,
                         "period": period, "value": value})
    return rows


def alphavantage_records(tickers: list[str], cache_dir: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """The news, fundamentals, insider, dividends and macro channels from the cache."""
    folder = cache_folder("alphavantage", cache_dir)
    rows: dict[str, list[dict[str, Any]]] = {c: [] for c in ("news", "fundamentals", "insider", "dividends", "macro")}
    for ticker in tickers:
        rows["news"] += news_rows(_read(cache_file(folder, "NEWS_SENTIMENT", ticker)), ticker)
        for function in STATEMENT_ITEMS:
            rows["fundamentals"] += statement_rows(_read(cache_file(folder, function, ticker)), function, ticker)
        rows["insider"] += insider_rows(_read(cache_file(folder, "INSIDER_TRANSACTIONS", ticker)), ticker)
        rows["dividends"] += dividend_rows(_read(cache_file(folder, "DIVIDENDS", ticker)), ticker)
    for function in MACRO_FUNCTIONS:
        rows["macro"] += macro_rows(_read(cache_file(folder, function)), function)
    return {channel: validate_records(pd.DataFrame(found), channel, f"{folder} ({channel})")
            for channel, found in rows.items() if found}


def with_alphavantage(data: MarketData, cache_dir: str | Path | None = None) -> MarketData:
    """`data` with the cached Alpha Vantage channels of its tickers added (replacing same-named ones)."""
    return replace(data, records={**data.records, **alphavantage_records(data.tickers, cache_dir)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fill the Alpha Vantage cache (needs network and "
                                                 f"{KEY_VARIABLE}).")
    parser.add_argument("--tickers", nargs="+", required=True)
    parser.add_argument("--cache-dir", default=None)
    args = parser.parse_args(argv)
    try:
        for path in fetch_alphavantage(args.tickers, args.cache_dir):
            print(path)
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
