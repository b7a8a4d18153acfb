"""Paired comparisons of two strategies on the same days, and the Holm correction.

* :func:`mean_difference_test` — H0: E[a_t - b_t] = 0. The daily differences d_t are
  resampled with the stationary bootstrap (block length by ``optimal_block_length``); se*
  = std of mean(d*) over the replications is the standard error of mean(d) under the
  serial dependence of d, and the two-sided p-value is 2 (1 - Phi(|mean(d)| / se*)).
  Unlike counting exceedances this p-value has no floor of 1 / (reps + 1), so Holm-adjusted
  p-values over a family of dozens of tests can still fall below 0.01.
* :func:`sharpe_difference_test` — H0: SR_a = SR_b, the HAC test of Ledoit & Wolf (2008,
  "Robust performance hypothesis testing with the Sharpe ratio", section 3.1): with
  mu_i = mean, gamma_i = mean of squares and SR_i = mu_i / sqrt(gamma_i - mu_i^2), the
  delta method gives se(SR_a - SR_b) = sqrt(g' Psi g / T) where Psi is the long-run
  covariance of (a_t - mu_a, b_t - mu_b, a_t^2 - gamma_a, b_t^2 - gamma_b) (quadratic-spectral
  kernel, Andrews automatic bandwidth, ``arch.covariance.kernel.QuadraticSpectral``) and g
  the gradient of SR_a - SR_b; p = 2 (1 - Phi(|z|)). SRs here use std with ddof=0.
* :func:`holm` — Holm's step-down adjustment (``statsmodels``), NaN p-values left out.
"""

from __future__ import annotations

import math

import numpy as np
from arch.covariance.kernel import QuadraticSpectral
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

from metrics.bootstrap import replication_indices


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired test: series of different lengths {a.shape} and {b.shape}")
    both = ~(np.isnan(a) | np.isnan(b))
    return a[both], b[both]


def mean_difference_test(a: np.ndarray, b: np.ndarray, reps: int = 1000, seed: int = 0) -> tuple[float, float]:
    """(mean daily difference a - b, two-sided stationary-bootstrap p-value); p = 1 when a == b every day.

    A constant non-zero difference has no sampling error to test against: its p-value is NaN.
    """
    a, b = _paired(a, b)
    difference = a - b
    observed = float(np.mean(difference)) if len(difference) else math.nan
    if len(difference) < 2 or np.all(difference == difference[0]):
        return observed, (1.0 if observed == 0.0 else math.nan)
    means = difference[replication_indices(difference, reps, seed)].mean(axis=1)
    standard_error = float(np.std(means, ddof=1))
    if standard_error == 0.0:
        return observed, math.nan
    return observed, float(2.0 * norm.sf(abs(observed) / standard_error))


def sharpe_difference_test(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(SR_a - SR_b per period, Ledoit-Wolf HAC two-sided p-value); NaN p if either series is constant."""
    a, b = _paired(a, b)
    if len(a) < 3:
        return math.nan, math.nan
    mu = np.array([a.mean(), b.mean()])
    gamma = np.array([(a**2).mean(), (b**2).mean()])
    variance = gamma - mu**2
    if np.any(variance <= 0):
        return math.nan, math.nan
    sharpe = mu / np.sqrt(variance)
    difference = float(sharpe[0] - sharpe[1])
    if np.array_equal(a, b):
        return 0.0, 1.0
    gradient = np.array(
        [
            gamma[0] / variance[0] ** 1.5,
            -gamma[1] / variance[1] ** 1.5,
            -0.5 * mu[0] / variance[0] ** 1.5,
            0.5 * mu[1] / variance[1] ** 1.5,
        ]
    )
    moments = np.column_stack([a - mu[0], b - mu[1], a**2 - gamma[0], b**2 - gamma[1]])
    psi = QuadraticSpectral(moments, center=False).cov.long_run
    standard_error = math.sqrt(max(float(gradient @ psi @ gradient), 0.0) / len(a))
    if standard_error == 0.0:
        return difference, math.nan
    return difference, float(2.0 * norm.sf(abs(difference) / standard_error))


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values over the family of finite p-values; NaN stays NaN."""
    values = np.asarray(p_values, dtype=float)
    adjusted = np.full_like(values, np.nan)
    finite = np.isfinite(values)
    if finite.any():
        adjusted[finite] = multipletests(values[finite], method="holm")[1]
    return adjusted.tolist()
