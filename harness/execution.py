"""The execution simulator: decisions in, fills, cash, shares and equity out.

Timing: a decision made on the data of bar t (at its close) is filled at the next bar's open
(`fill="next_open"`, the default) or close (`fill="next_close"`). A decision on the last bar
of the window is not filled. Equity is marked at every bar's close; the first bar's equity is
the initial cash.

Discrete mode (the AlphaQuanter rules, the default):
- BUY adds floor(κ·cash / p) shares, κ = `buy_fraction` = 0.9, p = fill price incl. slippage;
- SELL closes the whole position; HOLD does nothing; long-only.
Target mode: a decision's `target` is the desired exposure in [-max_leverage, max_leverage];
shorts only when `allow_short`. With E = cash + shares·p the equity at the unslipped price p and
p_f the fill price on the side of the trade (p moved by the slippage), the position is moved to
n = floor(|target|·E / p_f) shares with the sign of the target: sized at the price it is filled
at. A buy towards a target of at most 1 is also capped at what the cash pays, commission
f = fee_bps/1e4 included: n ≤ shares + floor(cash / (p_f·(1 + f))), so such a target never leaves
negative cash (targets above 1 borrow by design). A trade that this sizing would turn around (a
small buy sized below the current position) is not made.

Costs: slippage moves the fill price against the trader by `slippage_bps`; the commission is
`fee_bps` of the traded notional, paid in cash (10 bps = the paper's 0.1 % per side).
Everything is deterministic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from harness.bar_cursor import BarCursor
from harness.schema import EQUITY_COLUMNS, TRADE_COLUMNS
from market.decision import Action, Decision
from market.portfolio import PortfolioState


class ExecutionConfig(BaseModel):
    """Execution rules; defaults are the AlphaQuanter paper's."""

    model_config = ConfigDict(extra="forbid")

    fill: Literal["next_open", "next_close"] = "next_open"
    mode: Literal["discrete", "target"] = "discrete"
    initial_cash: float = Field(100_000.0, gt=0)
    buy_fraction: float = Field(0.9, gt=0, le=1)
    """κ: the fraction of available cash a BUY spends."""
    fee_bps: float = Field(10.0, ge=0)
    slippage_bps: float = Field(0.0, ge=0)
    allow_short: bool = False
    max_leverage: float = Field(1.0, gt=0)


@dataclass
class EpisodeResult:
    """Marks, fills, positions and cash flows of one episode (of any task, `harness.tasks`).

    `equity`: indexed by bar stamp, with EQUITY_COLUMNS equity, cash, position (shares at the
    close; a task may say otherwise and add columns, e.g. the portfolio's turnover and HHI).
    `trades`: one row per fill with TRADE_COLUMNS (date = fill date), plus `instrument` for
    multi-instrument and futures episodes, whose `side` may also be LIQUIDATION.
    `positions`: long format, one row per bar and instrument (POSITION_COLUMNS), or None
    (the trading task: its one position is the equity table's `position`).
    `flows`: long format, one row per cash flow that is not a fill's price (FLOW_COLUMNS: fees,
    slippage, funding, liquidation fees; `amount` < 0 = paid), or None (the trading task: its
    fees are in `trades`).
    `events`: liquidations and margin calls (futures), else None.
    """

    equity: pd.DataFrame
    trades: pd.DataFrame
    positions: pd.DataFrame | None = None
    flows: pd.DataFrame | None = None
    events: pd.DataFrame | None = None
    """Account events (EVENT_COLUMNS: liquidations, margin calls) of tasks that have them, else None."""


@dataclass
class Simulator(BarCursor):
    """Steps one episode bar by bar; `submit` takes the decision of the current bar.

    The state between calls is the portfolio at the close of the current bar, which is what a
    stateful framework is shown.
    """

    bars: pd.DataFrame
    config: ExecutionConfig = field(default_factory=ExecutionConfig)
    ticker: str = ""
    """The instrument traded, named in the portfolio state."""

    def __post_init__(self) -> None:
        if self.bars.empty:
            raise ValueError("cannot simulate an empty window")
        self._prices = self.bars[["open", "close"]].to_numpy(dtype=float)
        self._dates = self.bars.index
        self._i = 0
        self._cash = float(self.config.initial_cash)
        self._shares = 0.0
        self._marks: list[tuple[float, float, float]] = []
        self._trades: list[tuple] = []
        self._mark()

    @property
    def fill_price(self) -> float | None:
        """The price (before slippage) at which the current bar's decision will fill; None on the last bar."""
        if self._i + 1 >= len(self._dates):
            return None
        return float(self._prices[self._i + 1, 0 if self.config.fill == "next_open" else 1])

    @property
    def portfolio(self) -> PortfolioState:
        return PortfolioState.single(self.ticker, cash=self._cash, shares=self._shares, close=self._prices[self._i, 1])

    def submit(self, decision: Decision) -> None:
        """Take the decision of the current bar: fill it on the next bar, then advance."""
        price = self.fill_price
        if not self._advance():
            return
        self._fill(decision, price)
        self._mark()

    def result(self) -> EpisodeResult:
        index = self._dates[: len(self._marks)]
        equity = pd.DataFrame(self._marks, index=index, columns=EQUITY_COLUMNS)
        trades = pd.DataFrame(self._trades, columns=TRADE_COLUMNS)
        return EpisodeResult(equity=equity, trades=trades)

    def _mark(self) -> None:
        close = self._prices[self._i, 1]
        self._marks.append((self._cash + self._shares * close, self._cash, self._shares))

    def _fill(self, decision: Decision, price: float) -> None:
        target_shares = self._target_shares(decision, price)
        delta = target_shares - self._shares
        if delta == 0:
            return
        fill_price = self._slipped(price, buying=delta > 0)
        notional = abs(delta) * fill_price
        fee = notional * self.config.fee_bps / 1e4
        self._cash -= delta * fill_price + fee
        self._shares = target_shares
        side = "BUY" if delta > 0 else "SELL"
        self._trades.append((self._dates[self._i], side, abs(delta), fill_price, notional, fee))

    def _slipped(self, price: float, buying: bool) -> float:
        """The fill price: `price` moved against the trader by `slippage_bps`."""
        slip = self.config.slippage_bps / 1e4
        return price * (1 + slip) if buying else price * (1 - slip)

    def _target_shares(self, decision: Decision, price: float) -> float:
        """Shares held after `decision` fills at `price`, by the decision's kind: an action by the
        discrete rules, a target by the target rules. The run's mode decides which kind a framework
        must return (`harness.decision_checks`); the overlays (`harness.overlay`) also execute the
        other kind: a forced HOLD in target mode, a blended or sized target in discrete mode."""
        config = self.config
        if decision.action is not None:
            if decision.action is Action.BUY:
                buy_price = self._slipped(price, buying=True)
                return self._shares + math.floor(config.buy_fraction * max(self._cash, 0.0) / buy_price)
            if decision.action is Action.SELL:
                return 0.0
            return self._shares
        low = -config.max_leverage if config.allow_short else 0.0
        target = min(max(decision.target, low), config.max_leverage)
        equity = max(self._cash + self._shares * price, 0.0)
        buying = target * equity / price > self._shares
        fill_price = self._slipped(price, buying=buying)
        shares = math.copysign(math.floor(abs(target) * equity / fill_price), target)
        if buying and target <= 1:
            affordable = self._shares + math.floor(max(self._cash, 0.0) / (fill_price * (1 + config.fee_bps / 1e4)))
            shares = min(shares, affordable)
        return max(shares, self._shares) if buying else min(shares, self._shares)


def simulate(bars: pd.DataFrame, actions: pd.Series | list[Decision],
             config: ExecutionConfig | None = None) -> EpisodeResult:
    """Run one episode over `bars` with one decision per bar.

    `actions` is either a list of Decisions aligned with `bars`, or a Series indexed by
    decision date whose values are `Action`s (dates without an entry are HOLD).
    """
    simulator = Simulator(bars, config or ExecutionConfig())
    if isinstance(actions, pd.Series):
        aligned = actions.reindex(bars.index)
        decisions = [Decision(action=Action.HOLD if pd.isna(a) else Action(a)) for a in aligned]
    else:
        decisions = list(actions)
    if len(decisions) != len(bars):
        raise ValueError(f"{len(decisions)} decisions for {len(bars)} bars")
    for decision in decisions:
        simulator.submit(decision)
    return simulator.result()
