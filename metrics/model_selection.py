"""Tests over the whole set of frameworks: Hansen's SPA against a benchmark, and the Model Confidence Set.

Both take per-day performance: for several tickers, the cross-ticker mean daily return of
each framework (an equal-weight portfolio of its episodes). arch works with losses, so the
loss of a framework on day t is -r_t.

* :func:`spa_pvalues` — Hansen (2005) Superior Predictive Ability test,
  H0: no framework has a higher expected daily return than the benchmark (``buy_and_hold``
  in the report). Small p-value = at least one framework beats the benchmark. Returns the
  lower, consistent and upper p-values of ``arch.bootstrap.SPA`` (stationary bootstrap,
  studentized); the consistent one is the one to report. Frameworks whose returns equal the
  benchmark's on every day are left out (their loss differential has no variance).
* :func:`model_confidence_set` — Hansen, Lunde & Nason (2011) MCS with ``arch.bootstrap.MCS``
  (range statistic "R", stationary bootstrap): the set of frameworks that contains the best
  one with probability 1 - ``size``. Frameworks with identical return series are tested once
  and share the verdict.
"""

from __future__ import annotations

import pandas as pd
from arch.bootstrap import MCS, SPA

from metrics.bootstrap import block_length


def spa_pvalues(
    benchmark: pd.Series, models: pd.DataFrame, reps: int = 1000, seed: int = 0
) -> dict[str, float]:
    """SPA p-values {lower, consistent, upper} of ``models`` (columns) against ``benchmark`` daily returns."""
    differs = models.sub(benchmark, axis=0).abs().sum() > 0
    models = models.loc[:, differs]
    if models.empty:
        return {"lower": 1.0, "consistent": 1.0, "upper": 1.0}
    losses = -pd.concat([benchmark.rename("__benchmark__"), models], axis=1).dropna()
    test = SPA(
        losses.iloc[:, 0].to_numpy(),
        losses.iloc[:, 1:].to_numpy(),
        block_size=int(round(block_length(losses.to_numpy()))),
        reps=reps,
        seed=seed,
    )
    test.compute()
    return {name: float(value) for name, value in test.pvalues.items()}


def model_confidence_set(returns: pd.DataFrame, size: float = 0.10, reps: int = 1000, seed: int = 0) -> pd.DataFrame:
    """MCS over the columns of ``returns``: DataFrame indexed by framework with ``pvalue`` and ``included``."""
    returns = returns.dropna()
    distinct = returns.T.drop_duplicates().T
    if distinct.shape[1] < 2:
        return pd.DataFrame({"pvalue": 1.0, "included": True}, index=returns.columns)
    test = MCS(
        -distinct,
        size=size,
        reps=reps,
        block_size=int(round(block_length(distinct.to_numpy()))),
        seed=seed,
    )
    test.compute()
    pvalue = test.pvalues["Pvalue"]
    included = set(test.included)
    twins = [_twin(returns, distinct, name) for name in returns.columns]
    return pd.DataFrame(
        {"pvalue": [float(pvalue[t]) for t in twins], "included": [t in included for t in twins]},
        index=returns.columns,
    )


def _twin(returns: pd.DataFrame, distinct: pd.DataFrame, name: str) -> str:
    """The column of ``distinct`` equal to ``returns[name]``."""
    return next(column for column in distinct.columns if returns[name].equals(distinct[column]))
