"""Exact GP regression on a discrete space, with MAP hyperparameters.

Notation:
    n          training points; m candidate points
    y          `(n,)` targets, standardised (zero mean, unit variance) by the caller
    k          a kernel expression (:mod:`kernels`), k(x, x) = 1 for every base kernel
    s2         output scale (hyperparameter log s2; absent when k is a Sum, whose weights scale it)
    v          noise variance (hyperparameter log v); e_i >= 0 extra noise for point i (priors)
    K          `(n, n)` = s2 k(X, X) + diag(v + e)
    L          lower Cholesky factor of K;  alpha = K^-1 y
    phi        `(P,)` all log-hyperparameters: kernel's theta, then [log s2], then log v
    NLL        1/2 y'alpha + sum log L_ii + n/2 log 2pi   (negative log marginal likelihood)
    dNLL/dphi  -1/2 tr((alpha alpha' - K^-1) dK/dphi)
    posterior  mu(x*) = s2 k(x*, X) alpha;  var(x*) = s2 k(x*, x*) - |L^-1 s2 k(X, x*)|^2

Hyperparameters are MAP under normal priors on the log scale (kernels.Base.prior); the optimiser
is L-BFGS-B with analytic gradients, capped in iterations (``max_iter``) because BO refits often.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
import scipy.optimize

from kernelwright.tuning.gp.features import FeatureTable
from kernelwright.tuning.gp.kernels import Base, Kernel, Product, Sum

FloatArray = npt.NDArray[np.float64]
Rows = npt.NDArray[np.intp]

_NOISE_PRIOR = (math.log(1e-2), 2.0)
_SCALE_PRIOR = (0.0, 1.5)
_LOG_BOUNDS = {
    "ell": (math.log(1e-2), math.log(1e2)),
    "scale": (-6.0, 4.0),
    "noise": (math.log(1e-6), 0.0),
}


def kernel_diag(kernel: Kernel, theta: FloatArray) -> float:
    """k(x, x), the same for every x (all base kernels are stationary with unit variance)."""
    if isinstance(kernel, Base):
        return 1.0
    if isinstance(kernel, Sum):
        m = len(kernel.terms)
        total, i = 0.0, m
        for j, t in enumerate(kernel.terms):
            total += math.exp(theta[j]) * kernel_diag(t, theta[i : i + t.n_hyper])
            i += t.n_hyper
        return total
    assert isinstance(kernel, Product)
    out, i = 1.0, 0
    for f in kernel.factors:
        out *= kernel_diag(f, theta[i : i + f.n_hyper])
        i += f.n_hyper
    return out


@dataclass(frozen=True)
class Hypers:
    """Log-hyperparameters of a GP: the kernel's theta, log output scale (or None), log noise."""

    theta: FloatArray
    log_scale: float | None
    log_noise: float

    def flat(self) -> FloatArray:
        """`(P,)` vector as the optimiser sees it."""
        extra = [] if self.log_scale is None else [self.log_scale]
        return np.concatenate([self.theta, extra, [self.log_noise]])


def _unflat(kernel: Kernel, phi: FloatArray) -> Hypers:
    p = kernel.n_hyper
    has_scale = not isinstance(kernel, Sum)
    return Hypers(phi[:p], float(phi[p]) if has_scale else None, float(phi[-1]))


def default_hypers(kernel: Kernel) -> Hypers:
    """The prior means: where every fit starts."""
    mu, _ = kernel.prior()
    return Hypers(mu, None if isinstance(kernel, Sum) else _SCALE_PRIOR[0], _NOISE_PRIOR[0])


def _prior_and_bounds(kernel: Kernel) -> tuple[FloatArray, FloatArray, list[tuple[float, float]]]:
    mu, sd = kernel.prior()
    bounds = [_LOG_BOUNDS["ell"]] * kernel.n_hyper
    if isinstance(kernel, Sum):
        bounds[: len(kernel.terms)] = [_LOG_BOUNDS["scale"]] * len(kernel.terms)
    else:
        mu, sd = np.append(mu, _SCALE_PRIOR[0]), np.append(sd, _SCALE_PRIOR[1])
        bounds.append(_LOG_BOUNDS["scale"])
    mu, sd = np.append(mu, _NOISE_PRIOR[0]), np.append(sd, _NOISE_PRIOR[1])
    bounds.append(_LOG_BOUNDS["noise"])
    return mu, sd, bounds


def _cholesky(k: FloatArray) -> FloatArray:
    jitter = 0.0
    for _ in range(6):
        try:
            return np.asarray(np.linalg.cholesky(k + jitter * np.eye(len(k))), dtype=np.float64)
        except np.linalg.LinAlgError:
            jitter = 1e-8 if jitter == 0.0 else jitter * 10.0
    raise np.linalg.LinAlgError("covariance is not positive definite even with jitter 1e-3")


def inverse_from_cholesky(chol: FloatArray) -> FloatArray:
    """K^-1 = L^-T L^-1 from the lower factor L (NumPy; SciPy's LAPACK spins threads at n < 100)."""
    linv = np.linalg.inv(chol)
    return np.asarray(linv.T @ linv, dtype=np.float64)


def covariance_and_grads(
    kernel: Kernel, table: FeatureTable, rows: Rows, phi: FloatArray, extra_noise: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """K `(n, n)` and dK/dphi `(P, n, n)` for the flat log-hyperparameters ``phi``."""
    h = _unflat(kernel, phi)
    kk, dk = kernel.matrix_grad(table, rows, h.theta)
    s2 = 1.0 if h.log_scale is None else math.exp(h.log_scale)
    v = math.exp(h.log_noise)
    n = len(rows)
    cov = s2 * kk + np.diag(v + extra_noise)
    grads = [s2 * dk]
    if h.log_scale is not None:
        grads.append((s2 * kk)[None])
    grads.append((v * np.eye(n))[None])
    return cov, np.concatenate(grads, axis=0)


def neg_log_posterior(
    phi: FloatArray,
    kernel: Kernel,
    table: FeatureTable,
    rows: Rows,
    y: FloatArray,
    extra_noise: FloatArray,
) -> tuple[float, FloatArray]:
    """NLL + negative log prior, and its gradient w.r.t. ``phi``."""
    cov, dks = covariance_and_grads(kernel, table, rows, phi, extra_noise)
    n = len(y)
    try:
        chol = _cholesky(cov)
    except np.linalg.LinAlgError:
        return 1e10, np.zeros_like(phi)
    kinv = inverse_from_cholesky(chol)
    alpha = kinv @ y
    nll = (
        0.5 * float(y @ alpha)
        + float(np.log(np.diag(chol)).sum())
        + 0.5 * n * math.log(2 * math.pi)
    )
    w = np.outer(alpha, alpha) - kinv
    grad = -0.5 * np.einsum("ij,pij->p", w, dks)
    mu, sd, _ = _prior_and_bounds(kernel)
    z = (phi - mu) / sd
    return nll + 0.5 * float(z @ z), grad + z / sd


def loo_posterior(
    phi: FloatArray,
    kernel: Kernel,
    table: FeatureTable,
    rows: Rows,
    y: FloatArray,
    extra_noise: FloatArray,
) -> tuple[float, FloatArray]:
    """n * mean LOO-CRPS + negative log prior (a scoring-rule fit, Petit et al. 2021)."""
    from kernelwright.tuning.gp.loo import loo_crps_objective

    val, grad = loo_crps_objective(phi, kernel, table, rows, y, extra_noise)
    n = len(y)
    mu, sd, _ = _prior_and_bounds(kernel)
    z = (phi - mu) / sd
    return n * val + 0.5 * float(z @ z), n * grad + z / sd


@dataclass(frozen=True)
class GP:
    """A fitted GP: everything needed to predict, nothing mutable.

    Attributes:
        kernel: the expression.
        hypers: its fitted hyperparameters.
        table: feature columns of the space.
        rows: `(n,)` training rows of the space's table.
        y: `(n,)` standardised targets.
        extra_noise: `(n,)` per-point extra noise variance.
        chol: `(n, n)` lower Cholesky factor of K.
        linv: `(n, n)` its inverse L^-1.
        alpha: `(n,)` K^-1 y.
    """

    kernel: Kernel
    hypers: Hypers
    table: FeatureTable
    rows: Rows
    y: FloatArray
    extra_noise: FloatArray
    chol: FloatArray
    linv: FloatArray
    alpha: FloatArray

    @property
    def scale(self) -> float:
        """Output scale s2 (1 for a Sum, whose weights carry it)."""
        return 1.0 if self.hypers.log_scale is None else math.exp(self.hypers.log_scale)

    def predict(self, cand: Rows) -> tuple[FloatArray, FloatArray]:
        """Posterior mean and variance of the latent function at candidate rows, `(m,)` each."""
        kxs = self.scale * self.kernel.matrix(
            self.table, self.rows, cand, self.hypers.theta
        )  # (n, m)
        mu = kxs.T @ self.alpha
        v = self.linv @ kxs
        var = self.scale * kernel_diag(self.kernel, self.hypers.theta) - (v**2).sum(axis=0)
        return mu, np.maximum(var, 1e-12)

    @property
    def noise(self) -> float:
        """Noise variance v."""
        return math.exp(self.hypers.log_noise)


def condition(
    kernel: Kernel,
    hypers: Hypers,
    table: FeatureTable,
    rows: Rows,
    y: FloatArray,
    extra_noise: FloatArray | None = None,
) -> GP:
    """The GP posterior for fixed hyperparameters (one Cholesky factorisation)."""
    extra = np.zeros(len(rows)) if extra_noise is None else extra_noise
    s2 = 1.0 if hypers.log_scale is None else math.exp(hypers.log_scale)
    cov = s2 * kernel.matrix(table, rows, rows, hypers.theta) + np.diag(
        math.exp(hypers.log_noise) + extra
    )
    chol = _cholesky(cov)
    linv = np.asarray(np.linalg.inv(chol), dtype=np.float64)
    alpha = linv.T @ (linv @ y)
    return GP(kernel, hypers, table, rows, y, extra, chol, linv, alpha)


def fit(
    kernel: Kernel,
    table: FeatureTable,
    rows: Rows,
    y: FloatArray,
    *,
    extra_noise: FloatArray | None = None,
    starts: tuple[Hypers, ...] = (),
    max_iter: int = 60,
    objective: Literal["map", "loo-crps"] = "map",
    from_prior: bool = True,
) -> GP:
    """MAP-fit the hyperparameters from each of ``starts`` (and the prior mean when
    ``from_prior``, or when there are no starts); keep the best."""
    extra = np.zeros(len(rows)) if extra_noise is None else extra_noise
    _, _, bounds = _prior_and_bounds(kernel)
    best_phi, best_val = None, math.inf
    first = (default_hypers(kernel),) if from_prior or not starts else ()
    for start in (*first, *starts):
        x0 = np.clip(start.flat(), [b[0] for b in bounds], [b[1] for b in bounds])
        res = scipy.optimize.minimize(
            neg_log_posterior if objective == "map" else loo_posterior,
            x0,
            args=(kernel, table, rows, y, extra),
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": max_iter},
        )
        if float(res.fun) < best_val:
            best_phi, best_val = np.asarray(res.x, dtype=float), float(res.fun)
    assert best_phi is not None
    return condition(kernel, _unflat(kernel, best_phi), table, rows, y, extra)
