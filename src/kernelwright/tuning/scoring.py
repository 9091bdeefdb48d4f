"""Scores of a tuning run against random search (Kernel Tuner's methodology).

Notation:
    N          number of configs in the space (failures included: random search draws them too)
    t_(1) <= ... <= t_(N)   the times sorted ascending; a failed config sorts last
    n          the budget: how many distinct configs were evaluated
    R(n)       expected best time of random search *without replacement* after n draws:
               P(best is t_(i)) = C(N - i, n - 1) / C(N, n)   (t_(i) drawn, t_(1..i-1) not)
               R(n) = sum_i t_(i) * C(N - i, n - 1) / C(N, n)
    t*         the optimum t_(1)
    b          the best time a strategy found within n evaluations

    score(n)    = (R(n) - b) / (R(n) - t*)   0 = as good as random search, 1 = found the optimum
    fraction(n) = t* / b                     the best-found fraction of optimum (1 = optimum)

A failed config's time only matters when all n draws fail; it is counted as the slowest measured
time, the most charitable value to random search that is still finite (its weight is
C(F, n) / C(N, n) for F failures, below 1e-50 for the spaces here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def expected_random_best(times_ms: npt.NDArray[np.float64], n: int) -> float:
    """R(n): the expected best of n draws without replacement.

    Args:
        times_ms: `(N,)` times, nan for failed configs.
        n: number of draws, 1 <= n <= N.
    """
    t = np.asarray(times_ms, dtype=float)
    worst = float(np.nanmax(t))
    t = np.sort(np.where(np.isnan(t), worst, t))
    big_n = len(t)
    if not 1 <= n <= big_n:
        raise ValueError(f"n={n} must be between 1 and the space size {big_n}")
    i = np.arange(1, big_n + 1)
    valid = big_n - i >= n - 1
    # log C(N - i, n - 1) - log C(N, n), computed in logs: C(17956, 80) overflows a float.
    log_w = np.full(big_n, -np.inf)
    k = big_n - i[valid]
    log_w[valid] = _log_comb(k, n - 1) - _log_comb(np.array([big_n]), n)[0]
    w = np.exp(log_w)
    return float(np.sum(w * t) / np.sum(w))


def _log_comb(a: npt.NDArray[np.int_], b: int) -> npt.NDArray[np.float64]:
    """log C(a, b) element-wise (math.lgamma: no SciPy needed to score a replay)."""
    lg = np.frompyfunc(math.lgamma, 1, 1)
    out = lg(a + 1.0) - math.lgamma(b + 1.0) - lg(a - b + 1.0)
    return np.asarray(out, dtype=np.float64)


def best_so_far(times: Sequence[float | None]) -> list[float]:
    """Running minimum of a trace; ``inf`` until the first successful evaluation."""
    out: list[float] = []
    best = math.inf
    for t in times:
        if t is not None and t < best:
            best = t
        out.append(best)
    return out


def score(best_ms: float, random_ms: float, optimum_ms: float) -> float:
    """(R - b) / (R - t*): 0 at random search's expectation, 1 at the optimum (can be negative)."""
    gap = random_ms - optimum_ms
    if gap <= 0:
        return 1.0 if best_ms <= optimum_ms else 0.0
    if not math.isfinite(best_ms):
        best_ms = random_ms + gap * 10.0  # nothing ran: far worse than random, still finite
    return (random_ms - best_ms) / gap
