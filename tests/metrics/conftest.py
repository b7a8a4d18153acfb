"""A small synthetic run directory laid out as docs/run_directory.md says, for the report tests.

Four frameworks trade three tickers over 60 days through the execution simulator with the
paper's rules:
``buy_and_hold`` (BUY every day), ``always_hold``, ``momentum`` (BUY after an up day, SELL
after a down day) and ``coin_flip`` with three seeds and made-up token counts, so that the
efficiency table and the seed aggregation have something to show.
"""

import json

import numpy as np
import pandas as pd
import pytest

from harness.execution import simulate
from market.decision import Action, Decision
from metrics.episodes import episode_metrics

TICKERS = ("AAA", "BBB", "CCC")
DAYS = 60
EXTRA_BARS = 10
CASH = 100_000.0


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
    window = bars.iloc[:DAYS].set_index("date")
    closes = window["close"].to_numpy()
    actions = [decide(closes[: t + 1]) for t in range(DAYS)]
    episode = simulate(window, [Decision(action=Action(a)) for a in actions])
    llm = framework == "coin_flip"
    decisions = pd.DataFrame({
        "date": window.index, "action": actions, "confidence": 1.0, "llm_calls": 3 if llm else 0,
        "prompt_tokens": 900 if llm else 0, "completion_tokens": 120 if llm else 0,
        "llm_latency_s": 2.5 if llm else 0.0, "tool_calls": 0, "lookahead_calls": 0, "parse_failures": 0,
        "error": None, "wall_s": 2.6 if llm else 0.001})
    keys = {"framework": framework, "ticker": ticker, "seed": seed}
    return (
        episode.equity.rename_axis("date").reset_index().assign(**keys),
        decisions.assign(**keys, target=np.nan),
        episode.trades.assign(**keys),
    )


def write_run(path, seed: int = 0):
    """Write a run directory under ``path`` and return it."""
    rng = np.random.default_rng(seed)
    prices = _prices(rng)
    episodes = [("buy_and_hold", 0), ("always_hold", 0), ("momentum", 0)] + [("coin_flip", s) for s in range(3)]
    parts = [_episode(prices[prices["ticker"] == ticker].reset_index(drop=True), framework, ticker, episode_seed)
             for framework, episode_seed in episodes for ticker in TICKERS]
    equity, decisions, trades = (pd.concat(tables, ignore_index=True) for tables in zip(*parts))
    path.mkdir(parents=True, exist_ok=True)
    equity.to_parquet(path / "equity.parquet")
    decisions.to_parquet(path / "decisions.parquet")
    trades.to_csv(path / "trades.csv", index=False)
    prices.to_parquet(path / "prices.parquet")
    episode_metrics(equity, trades, 252.0).to_csv(path / "metrics.csv", index=False)
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
