"""Kernel expressions: a small grammar whose trees print as the math they compute.

Notation:
    x, x'      two configs; f_d(x) the value of feature d (scaled to [0, 1], or a category code)
    D          number of features of one base kernel
    l_d        length-scale of feature d; hyperparameter stored as log l_d
    D_d        (f_d(x) - f_d(x')) / l_d, the scaled difference
    r          sqrt(sum_d D_d^2)
    SE         exp(-r^2 / 2)
    M52        (1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r)
    M32        (1 + sqrt3 r) exp(-sqrt3 r)
    Cat        exp(-sum_d [c_d(x) != c_d(x')] / l_d)        overlap (exponentiated Hamming)
    Sum        sum_j w_j k_j                                  w_j = exp(log w_j), hyperparameters
    Product    prod_j k_j
    theta      `(P,)` every log-hyperparameter of a tree, depth-first, left to right

Every base kernel has k(x, x) = 1; scales live in Sum weights (and the model's output scale), so
a product never carries redundant amplitudes. Shapes: ``matrix`` returns `(n, m)`;
``matrix_grad`` returns `(n, n)` and `(P, n, n)` (dK / d theta_p).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from kernelwright.tuning.gp.features import Feature, FeatureTable

Family = Literal["se", "m52", "m32", "cat"]
FloatArray = npt.NDArray[np.float64]
Rows = npt.NDArray[np.intp]

_SQRT3 = math.sqrt(3.0)
_SQRT5 = math.sqrt(5.0)
_NAMES = {"se": "SE", "m52": "M52", "m32": "M32", "cat": "Cat"}


@dataclass(frozen=True, slots=True)
class Base:
    """A stationary kernel with one length-scale per feature (ARD)."""

    family: Family
    features: tuple[Feature, ...]

    def __str__(self) -> str:
        return f"{_NAMES[self.family]}({', '.join(str(f) for f in self.features)})"

    @property
    def n_hyper(self) -> int:
        """Number of hyperparameters (one length-scale per feature)."""
        return len(self.features)

    def prior(self) -> tuple[FloatArray, FloatArray]:
        """Mean and std of the normal prior on each log length-scale.

        Continuous: LogNormal(sqrt2 + log(D) / 2, sqrt3), the dimension-scaled prior of Hvarfner et
        al. (2024) for inputs in [0, 1]; categorical: LogNormal(0, 1.5).
        """
        d = self.n_hyper
        if self.family == "cat":
            return np.zeros(d), np.full(d, 1.5)
        return np.full(d, math.sqrt(2.0) + 0.5 * math.log(max(d, 1))), np.full(d, math.sqrt(3.0))

    def matrix(self, table: FeatureTable, a: Rows, b: Rows, theta: FloatArray) -> FloatArray:
        """`(len(a), len(b))` kernel values."""
        xa, xb = table.matrix(self.features, a), table.matrix(self.features, b)
        ell = np.exp(theta)
        if self.family == "cat":
            acc = np.zeros((len(a), len(b)))
            for d in range(xa.shape[1]):
                acc += (xa[:, d, None] != xb[None, :, d]) / ell[d]
            return np.exp(-acc)
        za, zb = xa / ell, xb / ell
        r2 = (za**2).sum(1)[:, None] + (zb**2).sum(1)[None, :] - 2.0 * za @ zb.T
        return _stationary(self.family, np.maximum(r2, 0.0))

    def matrix_grad(
        self, table: FeatureTable, a: Rows, theta: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """`(n, n)` kernel and `(D, n, n)` derivatives w.r.t. each log length-scale."""
        x = table.matrix(self.features, a)
        ell = np.exp(theta)
        if self.family == "cat":
            mism = (x[:, None, :] != x[None, :, :]).transpose(2, 0, 1) / ell[:, None, None]
            k = np.exp(-mism.sum(axis=0))
            return k, k[None] * mism
        sq = ((x[:, None, :] - x[None, :, :]) / ell).transpose(2, 0, 1) ** 2  # (D, n, n)
        r2 = sq.sum(axis=0)
        k = _stationary(self.family, r2)
        r = np.sqrt(r2)
        if self.family == "se":
            g = k  # dk/dlog l_d = k * D_d^2
        elif self.family == "m52":
            g = (5.0 / 3.0) * (1.0 + _SQRT5 * r) * np.exp(-_SQRT5 * r)
        else:
            g = 3.0 * np.exp(-_SQRT3 * r)
        return k, g[None] * sq


def _stationary(family: Family, r2: FloatArray) -> FloatArray:
    out: FloatArray
    if family == "se":
        out = np.exp(-0.5 * r2)
        return out
    r = np.sqrt(r2)
    if family == "m52":
        out = (1.0 + _SQRT5 * r + (5.0 / 3.0) * r2) * np.exp(-_SQRT5 * r)
    else:
        out = (1.0 + _SQRT3 * r) * np.exp(-_SQRT3 * r)
    return out


@dataclass(frozen=True, slots=True)
class Sum:
    """``w_1 k_1 + w_2 k_2 + ...`` with one log-weight per term."""

    terms: tuple[Kernel, ...]

    def __str__(self) -> str:
        return " + ".join(str(t) for t in self.terms)

    @property
    def n_hyper(self) -> int:
        """Own weights plus every term's hyperparameters."""
        return len(self.terms) + sum(t.n_hyper for t in self.terms)

    def prior(self) -> tuple[FloatArray, FloatArray]:
        """Weights ~ LogNormal(log(1 / terms), 1); then each term's prior."""
        m = len(self.terms)
        means: list[FloatArray] = [np.full(m, -math.log(m))]
        stds: list[FloatArray] = [np.ones(m)]
        for t in self.terms:
            mu, sd = t.prior()
            means.append(mu)
            stds.append(sd)
        return np.concatenate(means), np.concatenate(stds)

    def matrix(self, table: FeatureTable, a: Rows, b: Rows, theta: FloatArray) -> FloatArray:
        """`(len(a), len(b))` weighted sum of the terms."""
        m = len(self.terms)
        out = np.zeros((len(a), len(b)))
        for j, (t, th) in enumerate(zip(self.terms, _split(self.terms, theta[m:]), strict=True)):
            out += math.exp(theta[j]) * t.matrix(table, a, b, th)
        return out

    def matrix_grad(
        self, table: FeatureTable, a: Rows, theta: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Kernel and `(P, n, n)` derivatives: weights first, then each term's."""
        m = len(self.terms)
        k = np.zeros((len(a), len(a)))
        dw, dt = [], []
        for j, (t, th) in enumerate(zip(self.terms, _split(self.terms, theta[m:]), strict=True)):
            w = math.exp(theta[j])
            kj, gj = t.matrix_grad(table, a, th)
            k += w * kj
            dw.append(w * kj)
            dt.append(w * gj)
        return k, np.concatenate([np.stack(dw), *dt], axis=0)


@dataclass(frozen=True, slots=True)
class Product:
    """``k_1 * k_2 * ...``: an interaction (both must agree for configs to correlate)."""

    factors: tuple[Kernel, ...]

    def __str__(self) -> str:
        return " × ".join(f"({f})" if isinstance(f, Sum) else str(f) for f in self.factors)

    @property
    def n_hyper(self) -> int:
        """Every factor's hyperparameters."""
        return sum(f.n_hyper for f in self.factors)

    def prior(self) -> tuple[FloatArray, FloatArray]:
        """Each factor's prior, concatenated."""
        parts = [f.prior() for f in self.factors]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def matrix(self, table: FeatureTable, a: Rows, b: Rows, theta: FloatArray) -> FloatArray:
        """`(len(a), len(b))` element-wise product of the factors."""
        out = np.ones((len(a), len(b)))
        for f, th in zip(self.factors, _split(self.factors, theta), strict=True):
            out *= f.matrix(table, a, b, th)
        return out

    def matrix_grad(
        self, table: FeatureTable, a: Rows, theta: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Kernel and derivatives by the product rule."""
        parts = [
            f.matrix_grad(table, a, th)
            for f, th in zip(self.factors, _split(self.factors, theta), strict=True)
        ]
        k: FloatArray = np.ones((len(a), len(a)))
        for kj, _ in parts:
            k = k * kj
        grads = []
        for j, (_, gj) in enumerate(parts):
            rest: FloatArray = np.ones_like(k)
            for i, (ki, _) in enumerate(parts):
                if i != j:
                    rest = rest * ki
            grads.append(gj * rest[None])
        return k, np.concatenate(grads, axis=0)


Kernel = Base | Sum | Product


def _split(children: tuple[Kernel, ...], theta: FloatArray) -> list[FloatArray]:
    out, i = [], 0
    for c in children:
        out.append(theta[i : i + c.n_hyper])
        i += c.n_hyper
    return out


def features_of(kernel: Kernel) -> tuple[Feature, ...]:
    """Every feature the expression reads, in order of first use."""
    if isinstance(kernel, Base):
        return kernel.features
    children = kernel.terms if isinstance(kernel, Sum) else kernel.factors
    out: list[Feature] = []
    for c in children:
        out.extend(f for f in features_of(c) if f not in out)
    return tuple(out)


def size(kernel: Kernel) -> int:
    """Number of base kernels in the tree (a complexity measure)."""
    if isinstance(kernel, Base):
        return 1
    children = kernel.terms if isinstance(kernel, Sum) else kernel.factors
    return sum(size(c) for c in children)
