"""Probabilistic and deflated Sharpe ratios (Bailey & Lopez de Prado 2012, 2014).

All Sharpe ratios here are per period (SR_day, not the paper's annualised SR: the formulas are
defined on the per-period ratio), estimated on T returns with skewness g3 and (non-excess)
kurtosis g4:

    PSR(SR*) = Phi( (SR - SR*) sqrt(T - 1) / sqrt(1 - g3 SR + (g4 - 1) / 4 SR^2) )

the probability that the true SR exceeds the threshold SR*. The deflated Sharpe ratio is the
PSR against the Sharpe ratio that the best of N unskilled configurations would reach by luck,

    SR*_N = sqrt(V) ((1 - g) Phi^-1(1 - 1/N) + g Phi^-1(1 - 1/(N e))),   g = 0.5772... (Euler)

where N counts every configuration of one strategy that was tried in the search (its
hyper-parameters, prompts, backbones: a sweep — not unlike strategies side by side, and not
only the configurations reported) and V is the variance of their SR estimates. With N = 1
there is nothing to deflate (SR*_1 = 0).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import kurtosis, norm, skew

from metrics.performance import clean_returns, sharpe_ratio

EULER_GAMMA = 0.5772156649015329


def probabilistic_sharpe_ratio(returns: np.ndarray, threshold: float = 0.0) -> float:
    """PSR(SR*) = P(true per-period SR > ``threshold``); NaN for fewer than 3 returns or constant returns."""
    r = clean_returns(returns)
    sr = sharpe_ratio(r)
    if len(r) < 3 or not math.isfinite(sr) or np.all(r == r[0]):
        return math.nan
    g3 = float(skew(r))
    g4 = float(kurtosis(r, fisher=False))
    denominator = 1.0 - g3 * sr + (g4 - 1.0) / 4.0 * sr**2
    if denominator <= 0:
        return math.nan
    return float(norm.cdf((sr - threshold) * math.sqrt(len(r) - 1) / math.sqrt(denominator)))


def expected_max_sharpe(n_trials: int, sharpe_variance: float) -> float:
    """SR*_N, the expected maximum per-period SR of ``n_trials`` unskilled configurations."""
    if n_trials < 1:
        raise ValueError(f"expected_max_sharpe: n_trials must be >= 1, got {n_trials}")
    if n_trials == 1:
        return 0.0
    quantiles = (1.0 - EULER_GAMMA) * norm.ppf(1.0 - 1.0 / n_trials) + EULER_GAMMA * norm.ppf(
        1.0 - 1.0 / (n_trials * math.e)
    )
    return float(math.sqrt(sharpe_variance) * quantiles)


def deflated_sharpe_ratio(returns: np.ndarray, trial_sharpes: np.ndarray, n_trials: int | None = None) -> float:
    """DSR = PSR(SR*_N) with V = var(trial_sharpes, ddof=1) and N = ``n_trials`` (default: len(trial_sharpes))."""
    trials = np.asarray(trial_sharpes, dtype=float)
    trials = trials[np.isfinite(trials)]
    n = len(trials) if n_trials is None else n_trials
    variance = float(np.var(trials, ddof=1)) if len(trials) > 1 else 0.0
    return probabilistic_sharpe_ratio(returns, expected_max_sharpe(n, variance))
