"""Choosing a space's GP kernel by exact leave-one-out CRPS.

    candidates (the library's kernels, discovered expressions that read this space's parameters)
        -> MAP-fit each on the same standardised targets
        -> mean LOO-CRPS of each fit (gp.loo: exact, one Cholesky factor per candidate)
        -> the lowest wins; a tie, or a fit that breaks down, goes to the earlier candidate

The candidates are few (two library kernels and whatever discovery handed over), so taking the
minimum of their LOO estimates barely overfits, unlike the minimum over a discovery run's whole
population.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kernelwright.tuning.discovery import score_kernel
from kernelwright.tuning.gp.features import FeatureTable
from kernelwright.tuning.gp.kernels import Kernel, features_of
from kernelwright.tuning.gp.library import default_kernel, gpu_kernel
from kernelwright.tuning.space import Space

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Candidate:
    """A kernel that may be chosen, with the label reports show for it."""

    label: str
    kernel: Kernel


@dataclass(frozen=True)
class KernelChoice:
    """The outcome of one selection.

    Attributes:
        label: the winner's label (``gpu``, ``default``, ``discovered-1``...).
        kernel: the winner's expression.
        crps: mean LOO-CRPS per candidate label, in candidate order (inf: the fit broke down).
        observations: how many timings the choice was made on (warm-start ones included).
    """

    label: str
    kernel: Kernel
    crps: tuple[tuple[str, float], ...]
    observations: int

    def __str__(self) -> str:
        scores = ", ".join(f"{label} {value:.4f}" for label, value in self.crps)
        return f"{self.label} (LOO-CRPS on {self.observations} timings: {scores}): {self.kernel}"


def library_candidates(space: Space, discovered: Sequence[Kernel] = ()) -> list[Candidate]:
    """The GPU-aware kernel first (it wins ties), the default, then discovered expressions.

    A discovered expression is kept only when every parameter it reads is one of the space's
    (a discovery run on another space names other parameters).
    """
    out = [Candidate("gpu", gpu_kernel(space)), Candidate("default", default_kernel(space))]
    names = {p.name for p in space.params}
    seen = {str(c.kernel) for c in out}
    for i, kernel in enumerate(discovered, start=1):
        reads = {name for f in features_of(kernel) for name in f.params}
        if reads <= names and str(kernel) not in seen:
            out.append(Candidate(f"discovered-{i}", kernel))
            seen.add(str(kernel))
    return out


def choose_kernel(
    candidates: Sequence[Candidate],
    table: FeatureTable,
    rows: npt.NDArray[np.intp],
    y: FloatArray,
    extra_noise: FloatArray,
    *,
    max_iter: int = 40,
) -> KernelChoice:
    """The candidate whose MAP fit has the lowest mean LOO-CRPS on ``(rows, y)``."""
    if not candidates:
        raise ValueError("choose_kernel needs at least one candidate")
    scores = [
        score_kernel(c.kernel, table, rows, y, extra_noise=extra_noise, max_iter=max_iter).crps
        for c in candidates
    ]
    best = min(range(len(candidates)), key=lambda i: (scores[i], i))
    if not math.isfinite(scores[best]):
        best = 0
    return KernelChoice(
        label=candidates[best].label,
        kernel=candidates[best].kernel,
        crps=tuple((c.label, s) for c, s in zip(candidates, scores, strict=True)),
        observations=len(y),
    )
