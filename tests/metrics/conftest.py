"""A small synthetic run directory laid out as docs/run_directory.md says, for the report tests.

Four frameworks trade three tickers over 60 days under the paper's rules (decide at the close,
fill at the next open, BUY = floor(0.9 cash / price) shares, SELL closes, fee 0.1 %):
``buy_and_hold`` (BUY every day), ``always_hold``, ``momentum`` (BUY after an up day, SELL
after a down day) and ``coin_flip`` with three seeds and made-up token counts, so that the
efficiency table and the seed aggregation have something to show.
"""

import json

import numpy as np
import pandas as pd
import pytest

from metrics.performance import average_row, metrics_row

TICKERS = ("AAA", "BBB", "CCC")
DAYS = 60
EXTRA_BARS = 10
CASH = 100_000.0
FEE = 0.001


def _prices(rng) -> pd.DataFrame:
    dates = pd.bdate_range("2025-01-02", periods=DAYS + EXTRA_BARS)
    rows = []
    for i, ticker in enumerate(TICKERS):
        close = 100 * np.cumprod(1 + rng.normal(0.001 * (i - 1), 0.02, len(dates)))
        open_ = close * (1 + rng.normal(0, 0.003, len(dates)))
        rows.append(pd.DataFrame({"date": dates, "ticker": ticker, "open": open_,
                                  "high": np.maximum(open_, close) * 1.01, "low": np.minimum(open_, close) * 0.99,
                                  "close": close, "volume": 1e6}))
    return pd.concat(rows, ignore_index=True)


def _policy(name: str, seed: int):
    rng = np.random.default_rng(seed)

    def decide(closes: np.ndarray) -> str:
        if name == "buy_and_hold":
            return "BUY"
        if name == "always_hold":
            return "HOLD"
        if name == "momentum":
            return "HOLD" if len(closes) < 2 else ("BUY" if closes[-1] > closes[-2] else "SELL")
        return str(rng.choice(["BUY", "SELL", "HOLD"]))

    return decide


def _episode(bars: pd.DataFrame, framework: str, ticker: str, seed: int):
    decide = _policy(framework, seed)
    cash, shares = CASH, 0
    equity, decisions, trades = [], [], []
    dates, opens, closes = bars["date"].to_numpy(), bars["open"].to_numpy(), bars["close"].to_numpy()
    pending = None
    for t in range(DAYS):
        if pending == "BUY" and (n := int(0.9 * cash // opens[t])) > 0:
            fee = n * opens[t] * FEE
            cash -= n * opens[t] + fee
            shares += n
            trades.append((dates[t], "BUY", n, opens[t], n * opens[t], fee))
        elif pending == "SELL" and shares > 0:
            fee = shares * opens[t] * FEE
            cash += shares * opens[t] - fee
            trades.append((dates[t], "SELL", shares, opens[t], shares * opens[t], fee))
            shares = 0
        equity.append((dates[t], cash + shares * closes[t] if t else CASH, cash, shares))
        pending = decide(closes[: t + 1])
        llm = framework == "coin_flip"
        decisions.append((dates[t], pending, 1.0, 3 if llm else 0, 900 if llm else 0, 120 if llm else 0,
                          2.5 if llm else 0.0, 0, 0, 0, None, 2.6 if llm else 0.001))
    keys = {"framework": framework, "ticker": ticker, "seed": seed}
    return (
        pd.DataFrame(equity, columns=["date", "equity", "cash", "position"]).assign(**keys),
        pd.DataFrame(decisions, columns=["date", "action", "confidence", "llm_calls", "prompt_tokens",
                                         "completion_tokens", "llm_latency_s", "tool_calls", "lookahead_calls",
                                         "parse_failures", "error", "wall_s"]).assign(**keys, target=np.nan),
        pd.DataFrame(trades, columns=["date", "side", "shares", "price", "notional", "fee"]).assign(**keys),
    )


def write_run(path, seed: int = 0):
    """Write a run directory under ``path`` and return it."""
    rng = np.random.default_rng(seed)
    prices = _prices(rng)
    episodes = [("buy_and_hold", 0), ("always_hold", 0), ("momentum", 0)] + [("coin_flip", s) for s in range(3)]
    equity, decisions, trades, metrics = [], [], [], []
    for framework, episode_seed in episodes:
        rows = []
        for ticker in TICKERS:
            bars = prices[prices["ticker"] == ticker].reset_index(drop=True)
            e, d, t = _episode(bars, framework, ticker, episode_seed)
            equity.append(e)
            decisions.append(d)
            trades.append(t)
            rows.append(metrics_row(e["equity"], len(t)))
            metrics.append({"framework": framework, "ticker": ticker, "seed": episode_seed, **rows[-1]})
        metrics.append({"framework": framework, "ticker": "AVG", "seed": episode_seed, **average_row(rows)})
    path.mkdir(parents=True, exist_ok=True)
    pd.concat(equity, ignore_index=True).to_parquet(path / "equity.parquet")
    pd.concat(decisions, ignore_index=True).to_parquet(path / "decisions.parquet")
    pd.concat(trades, ignore_index=True).to_csv(path / "trades.csv", index=False)
    prices.to_parquet(path / "prices.parquet")
    pd.DataFrame(metrics).to_csv(path / "metrics.csv", index=False)
    (path / "config.yaml").write_text("name: synthetic\nexecution:\n  fee_bps: 10.0\n  kappa: 0.9\n")
    (path / "run.json").write_text(json.dumps({
        "suite": "synthetic", "tickers": list(TICKERS), "seeds": [0, 1, 2], "periods_per_year": 252,
        "initial_cash": CASH,
    }))
    return path


@pytest.fixture(scope="session")
def synthetic_run(tmp_path_factory):
    """A fresh synthetic run directory (shared by the tests of one session; copy it before changing it)."""
    return write_run(tmp_path_factory.mktemp("run") / "run")
