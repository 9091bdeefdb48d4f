"""Acquisition on a discrete candidate set: expected improvement weighted by feasibility.

Notation (minimisation of standardised log time):
    mu, s2     `(m,)` posterior mean and variance of the latent log time at m candidates
    f*         best (lowest) observed target
    z          (f* - mu) / s
    EI         s (z Phi(z) + phi(z));  log EI computed stably for very negative z
    p          `(m,)` probability that the candidate runs (does not fail at launch/compile)
    a          log EI + log p          (EI weighted by feasibility; maximised)

Feasibility is least-squares classification (Rasmussen & Williams, sec. 6.5): GP regression on
labels t = 1 (ran) / 0 (failed) with the base rate as prior mean, reusing the regression GP's
correlation (its length-scales already say which configs are alike), clipped to [0.01, 1].

Batches of q use the kriging believer: pick the best candidate, pretend it was observed at its
posterior mean (and ran), condition the GP at fixed hyperparameters, repeat.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.stats import norm

from kernelwright.tuning.gp.model import GP, condition

FloatArray = npt.NDArray[np.float64]
Rows = npt.NDArray[np.intp]

_CLASSIFIER_NOISE = 0.05
_P_MIN = 0.01


def log_expected_improvement(mu: FloatArray, var: FloatArray, best: float) -> FloatArray:
    """log EI for minimisation, `(m,)`; stable where EI underflows (z << 0)."""
    s = np.sqrt(var)
    z = (best - mu) / s
    out: FloatArray = np.empty_like(z)
    mid = z > -6.0
    zm = z[mid]
    out[mid] = np.log(np.maximum(zm * norm.cdf(zm) + norm.pdf(zm), 1e-300)) + np.log(s[mid])
    # Tail: z Phi(z) + phi(z) = phi(z) (1 - Phi(-z)... ) ~ phi(z) / z^2 for z -> -inf (Mills ratio).
    zt = z[~mid]
    out[~mid] = -0.5 * zt**2 - 0.5 * math.log(2 * math.pi) - 2.0 * np.log(-zt) + np.log(s[~mid])
    return out


def feasibility(gp: GP, rows: Rows, ok: npt.NDArray[np.bool_], cand: Rows) -> FloatArray:
    """Probability that each candidate runs, `(m,)`, from every evaluated row and its outcome.

    Args:
        gp: the regression GP; its kernel and length-scales define similarity.
        rows: `(n,)` every evaluated row, failures included.
        ok: `(n,)` True where that row ran.
        cand: `(m,)` candidate rows.
    """
    if ok.all():
        return np.ones(len(cand))
    base = (ok.sum() + 1.0) / (len(ok) + 2.0)
    k = gp.kernel.matrix(gp.table, rows, rows, gp.hypers.theta)
    kc = gp.kernel.matrix(gp.table, rows, cand, gp.hypers.theta)
    scale = 0.25  # label variance of a fair coin
    cov = scale * k + _CLASSIFIER_NOISE * np.eye(len(rows))
    weights = np.linalg.solve(cov, ok.astype(float) - base)
    p = base + scale * kc.T @ weights
    return np.asarray(np.clip(p, _P_MIN, 1.0), dtype=np.float64)


def select(
    gp: GP,
    cand: Rows,
    q: int,
    *,
    best: float,
    evaluated: Rows,
    ok: npt.NDArray[np.bool_],
    use_feasibility: bool = True,
    kind: str = "ei",
) -> list[int]:
    """Choose q distinct candidate rows by log EI + log p, greedily with the kriging believer.

    Args:
        gp: the fitted regression GP (trained on the rows that ran).
        cand: `(m,)` rows not yet evaluated.
        q: how many to choose (<= m).
        best: the best observed standardised target f*.
        evaluated: `(n,)` every evaluated row (for the feasibility model).
        ok: `(n,)` which of them ran.
        use_feasibility: weight EI by p (off for the default-GP baseline).
    """
    chosen: list[int] = []
    p = feasibility(gp, evaluated, ok, cand) if use_feasibility else np.ones(len(cand))
    log_p = np.log(p)
    available = np.ones(len(cand), dtype=bool)
    model = gp
    for _ in range(min(q, len(cand))):
        mu, var = model.predict(cand)
        if kind == "ei":
            score = log_expected_improvement(mu, var, best) + log_p
        else:  # "lcb:<beta>"
            beta = float(kind.split(":")[1])
            score = -(mu - beta * np.sqrt(var)) + log_p
        score[~available] = -np.inf
        j = int(np.argmax(score))
        chosen.append(int(cand[j]))
        available[j] = False
        if len(chosen) < q:
            rows = np.append(model.rows, cand[j])
            y = np.append(model.y, mu[j])
            extra = np.append(model.extra_noise, 0.0)
            model = condition(model.kernel, model.hypers, model.table, rows, y, extra)
    return chosen
