"""The futures task: a perpetual contract traded to a target leverage, with margin, funding and liquidation.

A decision on bar t is `Decision(target=L)` — the target position's notional as a multiple of
equity, L ∈ [-max_leverage, max_leverage] (5x by default; short when L < 0) — or HOLD (keep the
position). One contract is one unit of the underlying; quantities are fractional.

The account: wallet W (currency, the `cash` column), position q (contracts), settlement price m.
Every change of price is settled into the wallet (mark-to-market), so equity = W + q·(p − m), and
at every close equity = W. Per bar i, with open o, high, low, close c (stamp t_i):

1. gap: the wallet is settled at the open, W += q·(o − m), m = o; if W < mmr·|q|·o, the position
   is liquidated at o (step 3's rule at the open);
2. fill (the decision of bar i−1): with E = W, κ = s + f(1 ± s) (s = slippage_bps/1e4,
   f = taker_bps/1e4, or maker_bps with `order_type: maker`), the target notional N solves
   N = L·(E − κ·|N − q·o|) (the leverage after costs is L; solved in closed form on each side,
   `target_notional`), and
   q' = N / o. The fill price is o·(1 ± s); the fee is f·|Δq|·o(1 ± s); both are paid from W;
3. liquidation: at the bar's worst price for the position, w = low (long) or high (short), the
   equity is E_w = W + q·(w − m). When E_w < mmr·|q|·w (the maintenance margin), the position
   is closed at w and the liquidation fee min(liquidation_bps/1e4·|q|·w, max(E_w, 0)) is paid
   (capped at the equity left, as an exchange's insurance fund would): W = E_w − fee, q = 0. A LIQUIDATION row goes into the trades, a `liquidation_fee` flow into the flows, and a
   `liquidation` event into the events (and the decision's row of decisions.parquet);
4. funding: for every funding time τ in (t_{i−1}, t_i] (every `funding_hours` from midnight),
   the position pays q·c·r(τ) (received when negative), r(τ) the latest rate of the ticker in
   the `funding` record channel published at or before τ (per funding interval, e.g. 0.0001 =
   1 bp per 8 hours);
5. close: W += q·(c − m), m = c. Initial margin = |q|·c / max_leverage; when equity < it (the
   position exceeds the cap after losses) a `margin_call` event is recorded on the first bar
   of each such spell; nothing is forced until the maintenance margin is breached.

Recorded per bar: equity, cash (= W), position (= q), margin (initial margin), leverage
(|q|·c / equity) and funding (paid in the bar, currency; < 0 = received).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from core.errors import ConfigError, DataError
from harness.bar_cursor import BarCursor
from harness.execution import EpisodeResult
from harness.schema import EQUITY_COLUMNS, EVENT_COLUMNS, FLOW_COLUMNS, POSITION_COLUMNS
from harness.tasks.base import Episode, Task
from harness.tasks.portfolio import MULTI_TRADE_COLUMNS
from market.data import MarketData
from market.decision import Action, Decision, Trace
from market.portfolio import PortfolioState

FUTURES_EQUITY_COLUMNS = [*EQUITY_COLUMNS, "margin", "leverage", "funding"]
"""The futures account's marks per bar (module docstring)."""

FUNDING_CHANNEL = "funding"
"""The record channel of funding rates: ticker, available_at (the funding time), rate."""



class FuturesConfig(BaseModel):
    """The futures task's rules (module docstring)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["futures"] = "futures"
    initial_cash: float = Field(100_000.0, gt=0)
    max_leverage: float = Field(5.0, gt=0)
    """The leverage cap; the initial margin rate is 1 / max_leverage."""
    allow_short: bool = True
    maintenance_margin: float = Field(0.005, gt=0, lt=1)
    """mmr: the maintenance margin as a fraction of the position's notional."""
    taker_bps: float = Field(5.0, ge=0)
    maker_bps: float = Field(2.0, ge=0)
    order_type: Literal["taker", "maker"] = "taker"
    """Which fee the fills at the open pay."""
    slippage_bps: float = Field(0.0, ge=0)
    liquidation_bps: float = Field(50.0, ge=0)
    """The liquidation fee, of the liquidated notional."""
    funding_hours: float = Field(8.0, gt=0)
    fallback: Literal["hold", "flat"] = "hold"
    """What a failed decision executes: keep the position, or close it."""

    @property
    def fee_bps(self) -> float:
        return self.taker_bps if self.order_type == "taker" else self.maker_bps


class FuturesTask(Task):
    """Episodes: one perpetual per ticker, over its bars in the window (the whole last day for intraday bars)."""

    name = "futures"
    benchmark = "long_1x"

    def __init__(self, config: FuturesConfig | None = None):
        super().__init__(config or FuturesConfig())

    def episodes(self, data: MarketData, names: list[str], start: pd.Timestamp, end: pd.Timestamp) -> list[Episode]:
        if data.calendar.daily:
            return [Episode(name, (name,), data.trading_days(name, start, end)) for name in names]
        after = end + pd.Timedelta(days=1)
        return [Episode(name, (name,), (days := data.trading_days(name, start, after))[days < after]) for name in names]

    def simulator(self, data: MarketData, episode: Episode) -> FuturesSimulator:
        return FuturesSimulator(data.frame(episode.name).loc[episode.times], funding_rates(data, episode.name),
                                self.config, episode.name)

    def fallback(self, error: str) -> Decision:
        if self.config.fallback == "flat":
            return Decision(target=0.0, trace=Trace(error=error, fallback=True))
        return super().fallback(error)


def funding_rates(data: MarketData, ticker: str) -> pd.Series:
    """The funding rates of `ticker` indexed by funding time (sorted); one line when the channel is missing or bad."""
    frame = data.records.get(FUNDING_CHANNEL)
    if frame is None or frame.empty:
        raise ConfigError(f"the futures task needs a `{FUNDING_CHANNEL}` record channel (data has "
                          f"{', '.join(sorted(data.records)) or 'none'}); load funding rates with the data source")
    own = frame[frame["ticker"] == ticker]
    if own.empty:
        raise ConfigError(f"the `{FUNDING_CHANNEL}` channel has no rates of {ticker}")
    rates = pd.Series(own["rate"].to_numpy(dtype=float), index=pd.DatetimeIndex(own["available_at"])).sort_index()
    bad = ~np.isfinite(rates.to_numpy())
    if bad.any():
        raise DataError(f"{data.origin.get(ticker, ticker)}: funding rate at {rates.index[bad][0]} is not finite")
    return rates


def target_notional(leverage: float, equity: float, held: float, kappa_buy: float, kappa_sell: float) -> float:
    """N solving N = L·(E − κ·|N − h|), κ = κ_buy when N > h else κ_sell (step 2 of the module docstring):
    N = L(E + κ_buy·h)/(1 + L·κ_buy) if that is above h, else N = L(E − κ_sell·h)/(1 − L·κ_sell) if that is
    below h, else h (no trade). The map is a contraction (|L|·κ < 1), so its one fixed point is the one found."""
    buy = leverage * (equity + kappa_buy * held) / (1 + leverage * kappa_buy)
    if buy > held:
        return buy
    sell = leverage * (equity - kappa_sell * held) / (1 - leverage * kappa_sell)
    return min(sell, held)


class FuturesSimulator(BarCursor):
    """Steps one perpetual's account bar by bar (the accounting of the module docstring)."""

    def __init__(self, bars: pd.DataFrame, rates: pd.Series, config: FuturesConfig, ticker: str = ""):
        if bars.empty:
            raise ValueError("cannot simulate an empty window")
        self.config, self.ticker = config, ticker
        self._bars = bars[["open", "high", "low", "close"]].to_numpy(dtype=float)
        self._dates = bars.index
        self._stamps = bars.index.as_unit("ns").asi8
        self._rate_times, self._rates = pd.DatetimeIndex(rates.index).as_unit("ns").asi8, rates.to_numpy(dtype=float)
        self._funding_step = pd.Timedelta(hours=config.funding_hours).value
        self._i = 0
        self._wallet = float(config.initial_cash)
        self._q = 0.0
        self._settle = self._bars[0, 3]
        self._funding = 0.0
        self._called = False
        self._marks: list[tuple[float, ...]] = []
        self._trades: list[tuple] = []
        self._flows: list[tuple] = []
        self._events: list[tuple] = []
        self._mark()

    @property
    def portfolio(self) -> PortfolioState:
        close = self._bars[self._i, 3]
        return PortfolioState(cash=self._wallet, positions={self.ticker: self._q}, marks={self.ticker: close},
                              margin=abs(self._q) * close / self.config.max_leverage, settled=True)

    def submit(self, decision: Decision) -> None:
        """Take the decision of the current bar: fill it on the next bar, then advance."""
        if not self._advance():
            return
        open_, high, low, close = self._bars[self._i]
        self._funding = 0.0
        self._settle_at(open_)
        if self._q != 0 and self._wallet < self.config.maintenance_margin * abs(self._q) * open_:
            self._liquidate(open_)
        if decision.target is not None:
            self._fill(decision.target, open_)
        elif decision.action is not Action.HOLD:
            raise ValueError(f"the futures task takes a target leverage or HOLD, got {decision.action}")
        if self._q != 0:
            worst = low if self._q > 0 else high
            if self._wallet + self._q * (worst - self._settle) < self.config.maintenance_margin * abs(self._q) * worst:
                self._settle_at(worst)
                self._liquidate(worst)
        self._pay_funding(close)
        self._settle_at(close)
        margin = abs(self._q) * close / self.config.max_leverage
        called = self._q != 0 and self._wallet < margin
        if called and not self._called:
            self._events.append((int(self._stamps[self._i]), self.ticker, "margin_call",
                                 f"equity {self._wallet:.2f} below the initial margin {margin:.2f}"))
        self._called = called
        self._mark()

    def _settle_at(self, price: float) -> None:
        self._wallet += self._q * (price - self._settle)
        self._settle = price

    def _fill(self, leverage: float, price: float) -> None:
        config = self.config
        s, f = config.slippage_bps / 1e4, config.fee_bps / 1e4
        equity = self._wallet
        if equity <= 0:
            return
        held = self._q * price
        notional = target_notional(leverage, equity, held, s + f * (1 + s), s + f * (1 - s))
        delta = notional / price - self._q
        if abs(delta) * price <= 1e-12 * equity:
            return
        buying = delta > 0
        fill = price * (1 + s) if buying else price * (1 - s)
        fee = f * abs(delta) * fill
        slip = abs(delta) * abs(fill - price)
        self._wallet -= slip + fee
        self._q += delta
        i = int(self._stamps[self._i])
        self._trades.append((i, "BUY" if buying else "SELL", abs(delta), fill, abs(delta) * fill, fee, self.ticker))
        self._flows.append((i, self.ticker, "fee", -fee))
        if slip > 0:
            self._flows.append((i, self.ticker, "slippage", -slip))

    def _liquidate(self, price: float) -> None:
        fee = min(self.config.liquidation_bps / 1e4 * abs(self._q) * price, max(self._wallet, 0.0))
        i = int(self._stamps[self._i])
        self._trades.append((i, "LIQUIDATION", abs(self._q), price, abs(self._q) * price, fee, self.ticker))
        self._flows.append((i, self.ticker, "liquidation_fee", -fee))
        self._events.append((i, self.ticker, "liquidation",
                             f"{self._q:+.6g} contracts closed at {price:.6g}, fee {fee:.2f}"))
        self._wallet -= fee
        self._q = 0.0

    def _pay_funding(self, mark: float) -> None:
        """Funding of every funding time in (previous stamp, this stamp] (module docstring, step 4)."""
        lo, hi = int(self._stamps[self._i - 1]), int(self._stamps[self._i])
        step = self._funding_step
        first = (lo // step + 1) * step
        for tau in range(first, hi + 1, step):
            j = np.searchsorted(self._rate_times, tau, side="right") - 1
            rate = self._rates[j] if j >= 0 else 0.0
            paid = self._q * mark * rate
            if paid != 0:
                self._wallet -= paid
                self._funding += paid
                self._flows.append((tau, self.ticker, "funding", -paid))

    def _mark(self) -> None:
        close = self._bars[self._i, 3]
        equity = self._wallet
        notional = abs(self._q) * close
        leverage = notional / equity if equity > 0 else (np.inf if notional else 0.0)
        self._marks.append((equity, self._wallet, self._q, notional / self.config.max_leverage, leverage, self._funding))

    def result(self) -> EpisodeResult:
        n = len(self._marks)
        index = self._dates[:n]
        equity = pd.DataFrame(self._marks, index=index, columns=FUTURES_EQUITY_COLUMNS)
        positions = pd.DataFrame({"date": index, "instrument": self.ticker, "quantity": equity["position"].to_numpy(),
                                  "mark": self._bars[:n, 3],
                                  "weight": (equity["position"] * self._bars[:n, 3] / equity["equity"]).to_numpy()},
                                 columns=POSITION_COLUMNS)
        return EpisodeResult(equity=equity, trades=self._dated(self._trades, MULTI_TRADE_COLUMNS), positions=positions,
                             flows=self._dated(self._flows, FLOW_COLUMNS), events=self._dated(self._events, EVENT_COLUMNS))

    def _dated(self, rows: list[tuple], columns: list[str]) -> pd.DataFrame:
        """`rows` whose first value is a time in ns since the epoch (cheaper to keep per bar than a Timestamp),
        as a frame with that time as `date`, of the bars' resolution."""
        frame = pd.DataFrame(rows, columns=columns)
        stamps = pd.to_datetime(frame["date"].to_numpy(dtype="int64"), unit="ns").as_unit(self._dates.unit)
        return frame.assign(date=stamps)
