"""Quarterly company records of a synthetic market: fundamentals, dividends, estimates.

- Fundamentals: for every calendar quarter ending from one quarter before the start, the
  three statements are filed 25–45 days after the quarter end, at 07:30 on a trading day.
  Revenue grows by g = 2 % + 5 %·score per quarter, with score = ρ·z + √(1 − ρ²)·ε and z the
  ticker's standardised alpha on the filing day, so growth surprises carry the channel's
  information. Margins, balance sheet and cash flows follow revenue with noise.
- Dividends (always uninformative): two tickers in three pay a fixed share of net income;
  declared five trading days after each filing at 16:30 (after the close), ex-date 14 days later.
- Earnings estimates (always uninformative): every 20 trading days at 09:00, the consensus for
  the next quarter to be filed = last EPS·1.02·(1 + 3 % noise).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from market.synthetic.events import latent_scores, record_frame
from market.synthetic.knobs import Channel

FILING_TIME = pd.Timedelta(hours=7, minutes=30)
DIVIDEND_TIME = pd.Timedelta(hours=16, minutes=30)
ESTIMATE_TIME = pd.Timedelta(hours=9)


def filings(rng: np.random.Generator, dates: pd.DatetimeIndex) -> list[tuple[pd.Timestamp, int]]:
    """(quarter end, index of the filing trading day) of every quarter filed within `dates`."""
    quarters = pd.date_range(dates[0] - pd.offsets.QuarterEnd(1), dates[-1], freq="QE")
    out = []
    for period_end in quarters:
        day = dates.searchsorted(period_end + pd.Timedelta(days=int(rng.integers(25, 46))))
        if day < len(dates):
            out.append((period_end, int(day)))
    return out


def _statements(revenue: float, shares: float, payout: float, rng: np.random.Generator) -> dict[str, dict[str, float]]:
    """The three statements of one quarter from its revenue (currency units); ratios carry 5 % noise."""

    def noise() -> float:
        return 1 + 0.05 * rng.standard_normal()

    gross = revenue * 0.45 * noise()
    operating = gross * 0.45 * noise()
    net = operating * 0.8 * noise()
    operating_cf = net * 1.2 * noise()
    capex = -revenue * 0.06 * noise()
    assets = revenue * 6 * noise()
    liabilities = assets * 0.5 * noise()
    return {
        "income": {"revenue": revenue, "gross_profit": gross, "operating_income": operating,
                   "net_income": net, "eps": net / shares},
        "balance_sheet": {"total_assets": assets, "total_liabilities": liabilities,
                          "shareholders_equity": assets - liabilities, "cash": assets * 0.15 * noise(),
                          "total_debt": liabilities * 0.4 * noise()},
        "cashflow": {"operating_cash_flow": operating_cf, "capital_expenditure": capex,
                     "free_cash_flow": operating_cf + capex, "dividends_paid": -max(net, 0) * payout},
    }


def company_records(rng: np.random.Generator, z: pd.DataFrame, channel: Channel) -> dict[str, pd.DataFrame]:
    """The `fundamentals`, `dividends` and `earnings_estimates` channels of every ticker."""
    dates = pd.DatetimeIndex(z.index)
    fundamentals, dividends, estimates = [], [], []
    for ticker in z.columns:
        revenue, shares = rng.uniform(1e9, 2e10), rng.uniform(2e8, 3e9)
        payout = 0.3 if rng.random() < 2 / 3 else 0.0
        for period_end, day in filings(rng, dates):
            filed = dates[day] + FILING_TIME
            score = latent_scores(rng, z[ticker].to_numpy()[[day]], channel)[0]
            revenue *= 1 + 0.02 + 0.05 * score
            statements = _statements(revenue, shares, payout, rng)
            for statement, items in statements.items():
                fundamentals += [{"ticker": ticker, "available_at": filed, "statement": statement,
                                  "period_end": period_end, "item": item, "value": float(value)}
                                 for item, value in items.items()]
            eps = statements["income"]["eps"]
            if payout and day + 5 < len(dates) and eps > 0:
                declared = dates[day + 5]
                dividends.append({"ticker": ticker, "available_at": declared + DIVIDEND_TIME,
                                  "ex_date": declared + pd.Timedelta(days=14), "amount": round(eps * payout, 2)})
            next_end = period_end + pd.offsets.QuarterEnd(1)
            for est_day in range(day + 1, min(day + 64, len(dates)), 20):
                estimates.append({"ticker": ticker, "available_at": dates[est_day] + ESTIMATE_TIME,
                                  "period_end": next_end,
                                  "eps_estimate": round(eps * 1.02 * (1 + 0.03 * rng.standard_normal()), 3),
                                  "revenue_estimate": float(revenue * 1.02 * (1 + 0.02 * rng.standard_normal())),
                                  "analysts": float(rng.integers(5, 26))})
    return {name: record_frame(name, rows) for name, rows in (
        ("fundamentals", fundamentals), ("dividends", dividends), ("earnings_estimates", estimates))}
