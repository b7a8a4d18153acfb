"""Paired comparisons of two strategies on the same days, and the Holm correction.

Both tests are t tests whose standard error comes from the equal-weighted cosine long-run
covariance (:mod:`metrics.long_run_variance`) and whose reference distribution is Student-t
with nu = floor(0.4 T^(2/3)) degrees of freedom. The choice was made by simulation
(``benchmarks/calibrate_paired_tests.py``, table in docs/metrics.md): on iid, AR(1) phi = 0.5
and GARCH pairs and on pairs of random policies trading real prices, at T = 62 .. 500 days,
these tests reject a true H0 at 5 % in 4.2-6.5 % of 2,000 draws in every cell. The
alternatives do not: the stationary bootstrap with the automatic (Politis-White) block length
rejects 8-16 % on AR(1) differences (capping the block at T^(1/3) changes nothing), Newey-West
with arch's automatic bandwidth (the Newey & West 1994 rule) and t_{T-1} 8-14 % on AR(1) and
9-10 % on 62-day iid and GARCH pairs, and the Ledoit-Wolf test with the quadratic-spectral
kernel and normal p-values 9-14 % at T = 62. Their standard errors are too small and too noisy
on short or persistent series; the t(nu) reference of EWC accounts for that noise.

* :func:`mean_difference_test` — H0: E[a_t - b_t] = 0. With d_t = a_t - b_t:
  t = mean(d) / SE, SE = sqrt(Omega_hat / T), p = 2 P(t_nu > |t|).
* :func:`sharpe_difference_test` — H0: SR_a = SR_b, the delta method of Ledoit & Wolf (2008,
  section 3.1): with mu_i = mean, gamma_i = mean of squares and SR_i = mu_i / sqrt(gamma_i - mu_i^2)
  (std with ddof=0), SE(SR_a - SR_b) = sqrt(g' Psi g / T), where Psi is the long-run covariance
  of (a_t, b_t, a_t^2, b_t^2) — here the EWC estimate — and g the gradient of SR_a - SR_b;
  p = 2 P(t_nu > |z|).
* :func:`holm` — Holm's step-down adjustment, NaN p-values left out.

Each test returns a :class:`PairedTest` with the estimate, its standard error and nu, from which
the CI and the minimum detectable effect follow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from metrics.long_run_variance import ewc_degrees_of_freedom, ewc_long_run_covariance


CONSTANT_TOLERANCE = 1e-12
"""A difference whose range is below this fraction of its size is constant (rounding is not sampling error)."""


@dataclass(frozen=True)
class PairedTest:
    """A t test: estimate, standard error, degrees of freedom nu of its t reference, two-sided p-value."""

    estimate: float
    standard_error: float
    df: int
    pvalue: float

    def ci(self, size: float = 0.95) -> tuple[float, float]:
        """estimate -+ t_{nu, (1 + size) / 2} SE; (NaN, NaN) when the SE is undefined."""
        if not (self.df > 0 and math.isfinite(self.standard_error)):
            return math.nan, math.nan
        half = float(student_t.ppf(0.5 + size / 2.0, self.df)) * self.standard_error
        return self.estimate - half, self.estimate + half

    def minimum_detectable_effect(self, alpha: float = 0.05, power: float = 0.80) -> float:
        """MDE = (t_{nu, 1 - alpha/2} + t_{nu, power}) SE: the true difference found with ``power`` at ``alpha``."""
        if not (self.df > 0 and math.isfinite(self.standard_error)):
            return math.nan
        return float(student_t.ppf(1.0 - alpha / 2.0, self.df) + student_t.ppf(power, self.df)) * self.standard_error


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired test: series of different lengths {a.shape} and {b.shape}")
    both = ~(np.isnan(a) | np.isnan(b))
    return a[both], b[both]


def _t_test(estimate: float, standard_error: float, df: int) -> PairedTest:
    if not (standard_error > 0):
        return PairedTest(estimate, standard_error, df, math.nan)
    pvalue = float(2.0 * student_t.sf(abs(estimate) / standard_error, df))
    return PairedTest(estimate, standard_error, df, pvalue)


def mean_difference_test(a: np.ndarray, b: np.ndarray) -> PairedTest:
    """Test of E[a - b] = 0 on the days both have; p = 1 when a == b every day.

    A constant non-zero difference (up to rounding) has no sampling error to test against: its
    p-value is NaN, as is every p-value with fewer than two days.
    """
    a, b = _paired(a, b)
    difference = a - b
    periods = len(difference)
    observed = float(np.mean(difference)) if periods else math.nan
    df = ewc_degrees_of_freedom(periods)
    if periods >= 2 and np.all(difference == 0.0):
        return PairedTest(0.0, 0.0, df, 1.0)
    if periods < 2 or np.ptp(difference) <= CONSTANT_TOLERANCE * np.max(np.abs(difference)):
        return PairedTest(observed, math.nan, df, math.nan)
    standard_error = math.sqrt(float(ewc_long_run_covariance(difference, df)[0, 0]) / periods)
    return _t_test(observed, standard_error, df)


def sharpe_difference_test(a: np.ndarray, b: np.ndarray) -> PairedTest:
    """Test of SR_a = SR_b (per period, std ddof=0); NaN p-value if either series is constant or T < 3."""
    a, b = _paired(a, b)
    periods = len(a)
    df = ewc_degrees_of_freedom(periods)
    if periods < 3:
        return PairedTest(math.nan, math.nan, df, math.nan)
    mu = np.array([a.mean(), b.mean()])
    gamma = np.array([(a**2).mean(), (b**2).mean()])
    variance = gamma - mu**2
    if np.any(variance <= 0):
        return PairedTest(math.nan, math.nan, df, math.nan)
    sharpe = mu / np.sqrt(variance)
    difference = float(sharpe[0] - sharpe[1])
    if np.array_equal(a, b):
        return PairedTest(0.0, 0.0, df, 1.0)
    gradient = np.array(
        [
            gamma[0] / variance[0] ** 1.5,
            -gamma[1] / variance[1] ** 1.5,
            -0.5 * mu[0] / variance[0] ** 1.5,
            0.5 * mu[1] / variance[1] ** 1.5,
        ]
    )
    psi = ewc_long_run_covariance(np.column_stack([a, b, a**2, b**2]), df)
    standard_error = math.sqrt(max(float(gradient @ psi @ gradient), 0.0) / periods)
    return _t_test(difference, standard_error, df)


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values over the family of finite p-values; NaN stays NaN.

    With the m finite p-values sorted, p_(1) <= .. <= p_(m): adj_(i) = min(1, max_{j<=i} (m - j + 1) p_(j)).
    Written out (the numbers equal ``statsmodels``' ``multipletests(method="holm")``, tested) because
    that function calls ``gc.collect()`` on every Holm call, 0.1-0.3 s in a large process: too slow
    for the thousands of families of the size calibration.
    """
    values = np.asarray(p_values, dtype=float)
    adjusted = np.full_like(values, np.nan)
    finite = np.flatnonzero(np.isfinite(values))
    order = finite[np.argsort(values[finite], kind="stable")]
    steps = np.arange(len(order), 0, -1)
    adjusted[order] = np.minimum(np.maximum.accumulate(values[order] * steps), 1.0)
    return adjusted.tolist()
