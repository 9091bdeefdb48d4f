"""Space-filling initial designs over the discrete valid set.

    maximin: greedy farthest-point sampling. The first point is random; each next point is the
    valid config farthest from everything evaluated so far (its nearest neighbour distance is
    largest). Distances use one coordinate per parameter: numeric parameters scaled to [0, 1] on
    their own scale (log2 for sizes), categorical parameters 0/1 for different/equal.

Only valid configs are candidates (Sobol points rounded to the valid set would cluster where the
restrictions leave few configs); a pool of at most ``pool_size`` rows, fixed by the seed, keeps the
cost linear in the pool. Greedy steps depend on the history only, so asking one point at a time
or a batch at once gives the same design.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kernelwright.tuning.gp.features import Feature, FeatureTable
from kernelwright.tuning.space import Kind, Space

FloatArray = npt.NDArray[np.float64]


def design_coordinates(table: FeatureTable) -> FloatArray:
    """`(N, d)` coordinates of every valid config for distance computations."""
    space = table.space
    cols = []
    for p in space.params:
        if len(p.values) < 2:
            continue
        if p.kind is Kind.CATEGORICAL:
            codes = table.column(Feature((p.name,), "cat"))
            for c in np.unique(codes):  # one-hot / sqrt2: different categories are 1 apart
                cols.append((codes == c) / np.sqrt(2.0))
        else:
            cols.append(table.column(Feature((p.name,), "log2" if p.on_log_scale else "lin")))
    if not cols:
        return np.zeros((len(space), 1))
    return np.stack(cols, axis=1)


def maximin(
    table: FeatureTable,
    existing: npt.NDArray[np.intp],
    excluded: set[int],
    n: int,
    rng: np.random.Generator,
    pool: npt.NDArray[np.intp],
) -> list[int]:
    """Greedy farthest-point choice of ``n`` rows from ``pool``.

    Args:
        table: feature columns of the space.
        existing: rows already evaluated (the design extends them).
        excluded: rows that may not be chosen (already evaluated).
        n: how many rows to add.
        rng: used only for the first point of an empty design.
        pool: candidate rows.
    """
    coords = design_coordinates(table)
    cand = np.array([r for r in pool if int(r) not in excluded], dtype=np.intp)
    chosen: list[int] = []
    if len(cand) == 0:
        return chosen
    dmin = np.full(len(cand), np.inf)
    for r in existing:
        dmin = np.minimum(dmin, ((coords[cand] - coords[r]) ** 2).sum(axis=1))
    for _ in range(min(n, len(cand))):
        j = int(rng.integers(len(cand))) if not np.isfinite(dmin).any() else int(np.argmax(dmin))
        chosen.append(int(cand[j]))
        dmin = np.minimum(dmin, ((coords[cand] - coords[cand[j]]) ** 2).sum(axis=1))
        dmin[j] = -1.0
    return chosen


def design_pool(space: Space, seed: int, pool_size: int = 4000) -> npt.NDArray[np.intp]:
    """The rows the initial design chooses from: all of them, or a seeded subsample."""
    if len(space) <= pool_size:
        return np.arange(len(space))
    rng = np.random.default_rng([seed & 0xFFFFFFFF, 0xD5])
    return np.sort(rng.choice(len(space), size=pool_size, replace=False))


def latin_hypercube(
    table: FeatureTable,
    excluded: set[int],
    n: int,
    rng: np.random.Generator,
) -> list[int]:
    """``n`` rows from a Latin hypercube over the design coordinates, snapped to valid configs.

    Each numeric coordinate is cut into n strata and every stratum gets one point (a random
    position inside it); each categorical parameter cycles through its categories in a random
    order. Every point is then moved to the nearest valid config not yet chosen. Unlike greedy
    maximin, which favours the corners of the space (on a GPU, mostly the slowest or failing
    configs), the design covers each parameter's range evenly, interior included.
    """
    space = table.space
    coords = design_coordinates(table)
    targets = np.zeros((n, coords.shape[1]))
    j = 0
    for p in space.params:
        if len(p.values) < 2:
            continue
        if p.kind is Kind.CATEGORICAL:
            k = len(np.unique(table.column(Feature((p.name,), "cat"))))
            cats = rng.permutation(np.resize(rng.permutation(k), n))
            targets[:, j : j + k] = np.eye(k)[cats] / np.sqrt(2.0)
            j += k
        else:
            targets[:, j] = (rng.permutation(n) + rng.random(n)) / n
            j += 1
    taken = set(excluded)
    chosen: list[int] = []
    for t in targets[: min(n, len(space) - len(taken))]:
        d = ((coords - t) ** 2).sum(axis=1)
        if taken:
            d[list(taken)] = np.inf
        r = int(np.argmin(d))
        chosen.append(r)
        taken.add(r)
    return chosen
