"""The equal-weighted cosine (EWC) long-run covariance and the t reference that goes with it.

For a (T, k) series x_t the long-run covariance Omega = sum_h Cov(x_t, x_{t+h}) is the variance
of sqrt(T) times the sample mean under serial dependence. EWC estimates it from the first nu
type-II cosine projections of the series (Mueller 2004; Lazarus, Lewis, Stock & Watson 2018,
"HAR Inference: Recommendations for Practice"):

    Lambda_j = sqrt(2 / T) sum_{t=1..T} x_t cos(pi j (t - 1/2) / T),   j = 1..nu
    Omega_hat = (1 / nu) sum_{j=1..nu} Lambda_j Lambda_j'

The Lambda_j are the orthonormal DCT-II coefficients of x (``scipy.fft.dct(norm="ortho")``);
they are orthogonal to the mean, so x need not be demeaned, and Lambda_0 = sqrt(T) mean(x).
Under H0: E[x] = 0 the statistic Lambda_0 / sqrt(Omega_hat) is Student-t with nu degrees of
freedom in the fixed-nu limit — the critical values account for the noise of the variance
estimate, which is what keeps the test's size on short windows. nu = floor(0.4 T^(2/3)) is
LLSW's rule (6 at T = 62, 9 at 124, 15 at 250, 25 at 500), at least 1 and at most T - 1.

Written here because neither arch nor statsmodels has EWC; the formula is the DCT above.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft


def ewc_degrees_of_freedom(periods: int) -> int:
    """nu = floor(0.4 T^(2/3)), clipped to [1, T - 1]; 0 for T < 2."""
    if periods < 2:
        return 0
    return int(min(max(math.floor(0.4 * periods ** (2.0 / 3.0)), 1), periods - 1))


def cosine_projections(x: np.ndarray, nu: int) -> np.ndarray:
    """Lambda_0 .. Lambda_nu (rows) of each column of ``x`` (T, k) or of a 1-d series: DCT-II, orthonormal."""
    values = np.asarray(x, dtype=float)
    return fft.dct(values, type=2, norm="ortho", axis=0)[: nu + 1]


def ewc_long_run_covariance(x: np.ndarray, nu: int | None = None) -> np.ndarray:
    """Omega_hat (k, k) of the columns of ``x`` (T, k), from ``nu`` cosine terms (default: LLSW's rule)."""
    values = np.asarray(x, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    nu = ewc_degrees_of_freedom(len(values)) if nu is None else nu
    projections = cosine_projections(values, nu)[1:]
    return projections.T @ projections / nu
