"""Monte Carlo size of paired tests: return processes under H0 and rejection rates with their CIs.

A sample is an array (reps, T, m): ``reps`` independent draws of T daily returns of m
strategies that are equal in distribution, so every paired test between two of them has a
true H0 (equal mean, equal Sharpe ratio). Processes, each series with mean ``NULL_MEAN`` and
unit unconditional variance:

* ``iid``: Gaussian;
* ``AR(1) phi=0.5``: x_t - mu = phi (x_{t-1} - mu) + e_t, e_t ~ N(0, 1 - phi^2) (``scipy.signal.lfilter``);
* ``GARCH(1,1)-t5``: GARCH(1,1) with alpha = 0.10, beta = 0.85 and standardised Student-t(5)
  innovations (``arch``'s ``ConstantMean`` + ``GARCH`` + ``StudentsT`` simulators).

The rejection rate of a test at level 5 % comes with its Wilson 95 % CI
(``statsmodels.stats.proportion.proportion_confint``). The design's rule: a test holds its
size when that CI overlaps [3 %, 7 %], with at least 2,000 repetitions per cell. For a family
of tests (every strategy j >= 1 against strategy 0, Holm-adjusted) the rate counted is the
family-wise one: the share of draws in which any test rejects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from arch.univariate import GARCH, ConstantMean, StudentsT
from scipy.signal import lfilter
from statsmodels.stats.proportion import proportion_confint

from metrics.paired import holm

NULL_MEAN = 0.05
"""Mean per period of every simulated series (unit variance): a per-period Sharpe ratio of 0.05."""

SIZE_BAND = (0.03, 0.07)
"""A test holds its nominal 5 % size when the CI of its rejection rate overlaps this band."""

PairedPValue = Callable[[np.ndarray, np.ndarray], float]
"""A paired test reduced to its two-sided p-value: (a, b) -> p."""


def iid_returns(rng: np.random.Generator, reps: int, periods: int, strategies: int = 2) -> np.ndarray:
    """(reps, T, m) iid N(NULL_MEAN, 1) returns."""
    return rng.normal(NULL_MEAN, 1.0, (reps, periods, strategies))


def ar1_returns(
    rng: np.random.Generator, reps: int, periods: int, strategies: int = 2, phi: float = 0.5, burn: int = 100
) -> np.ndarray:
    """(reps, T, m) stationary AR(1) returns with coefficient ``phi``, mean NULL_MEAN, variance 1."""
    shocks = rng.normal(0.0, np.sqrt(1.0 - phi**2), (reps, burn + periods, strategies))
    return NULL_MEAN + lfilter([1.0], [1.0, -phi], shocks, axis=1)[:, burn:]


def garch_returns(
    rng: np.random.Generator, reps: int, periods: int, strategies: int = 2,
    alpha: float = 0.10, beta: float = 0.85, nu: float = 5.0, burn: int = 250,
) -> np.ndarray:
    """(reps, T, m) GARCH(1,1) returns with Student-t(nu) shocks, omega = 1 - alpha - beta (variance 1)."""
    model = ConstantMean(None, volatility=GARCH(), distribution=StudentsT(seed=rng))
    params = [NULL_MEAN, 1.0 - alpha - beta, alpha, beta, nu]
    draws = [model.simulate(params, periods, burn=burn)["data"].to_numpy() for _ in range(reps * strategies)]
    return np.asarray(draws).reshape(reps, strategies, periods).transpose(0, 2, 1)


NULL_PROCESSES: dict[str, Callable[..., np.ndarray]] = {
    "iid": iid_returns,
    "AR(1) phi=0.5": ar1_returns,
    "GARCH(1,1)-t5": garch_returns,
}


@dataclass(frozen=True)
class RejectionRate:
    """How often a test rejected a true H0 out of ``reps`` draws, with the Wilson 95 % CI of the rate."""

    rejections: int
    reps: int

    @property
    def rate(self) -> float:
        return self.rejections / self.reps

    @property
    def ci(self) -> tuple[float, float]:
        low, high = proportion_confint(self.rejections, self.reps, alpha=0.05, method="wilson")
        return float(low), float(high)

    def holds_size(self, band: tuple[float, float] = SIZE_BAND) -> bool:
        """Whether the CI overlaps ``band`` (the design's rule for a 5 % test)."""
        low, high = self.ci
        return low <= band[1] and high >= band[0]

    def at_most(self, level: float) -> bool:
        """Whether the CI reaches down to ``level`` or below (a family-wise rate may be conservative)."""
        return self.ci[0] <= level


def pair_rejection_rate(samples: np.ndarray, test: PairedPValue, level: float = 0.05) -> RejectionRate:
    """Rejection rate at ``level`` of ``test`` between strategies 0 and 1 of every draw of ``samples``."""
    rejections = sum(test(draw[:, 0], draw[:, 1]) < level for draw in samples)
    return RejectionRate(int(rejections), len(samples))


def family_rejection_rate(samples: np.ndarray, test: PairedPValue, level: float = 0.05) -> RejectionRate:
    """Family-wise rejection rate at ``level`` of every strategy j >= 1 against strategy 0, Holm-adjusted."""
    rejections = 0
    for draw in samples:
        p_values = [test(draw[:, j], draw[:, 0]) for j in range(1, draw.shape[1])]
        rejections += any(p < level for p in holm(p_values))
    return RejectionRate(int(rejections), len(samples))
