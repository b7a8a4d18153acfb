"""The run directory's schema: the columns that identify an episode and the columns of each
table the runner writes (docs/run_directory.md). `harness.run_directory` writes and reads the
files by these names; the simulator builds its frames with them."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class EpisodeKey:
    """One episode: a framework trading one ticker with one seed over the test window."""

    framework: str
    ticker: str
    seed: int


EPISODE_KEYS: tuple[str, ...] = tuple(f.name for f in fields(EpisodeKey))
"""The columns that identify an episode in every long-format output table."""

EQUITY_COLUMNS = ["equity", "cash", "position"]
"""An episode's marks at each bar's close: equity and cash (currency units), position (shares)."""

TRADE_COLUMNS = ["date", "side", "shares", "price", "notional", "fee"]
"""One fill: its date, BUY/SELL, shares, fill price, traded notional and commission (currency units)."""

POSITION_COLUMNS = ["date", "instrument", "quantity", "mark", "weight"]
"""One position at a bar's close: quantity (shares or contracts; < 0 short), mark (close) and weight
(quantity·mark / equity)."""

FLOW_COLUMNS = ["date", "instrument", "kind", "amount"]
"""One cash flow: kind fee | slippage | funding | liquidation_fee; amount in currency units (< 0 = paid)."""

EVENT_COLUMNS = ["date", "instrument", "kind", "detail"]
"""One account event at a bar: kind liquidation | margin_call, and a one-line detail."""

REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "equity.parquet": ("date", *EPISODE_KEYS, *EQUITY_COLUMNS),
    "decisions.parquet": (
        "date", *EPISODE_KEYS, "action", "llm_calls", "prompt_tokens", "completion_tokens", "wall_s",
    ),
    "prices.parquet": ("date", "ticker", "close"),
    "trades.csv": ("date", *EPISODE_KEYS, *TRADE_COLUMNS[1:]),
    "metrics.csv": (*EPISODE_KEYS, "TR", "ARR", "SR_day", "SR_ann", "MDD"),
    "overlays.parquet": (
        "date", *EPISODE_KEYS, "original_action", "original_target", "executed_action", "executed_target", "changed",
        "loss_stop", "cool_down", "cold_start", "sizing", "drift",
    ),
}
"""The columns a reader needs of each file of a run directory (overlays.parquet only in runs with an overlay)."""

REPLAY_DIRECTORY = "anonymised"
"""The folder, inside a run directory, of its anonymised replay (the memorisation probe): a run
directory of its own; the run's run.json names it under `memorisation_replay`."""
