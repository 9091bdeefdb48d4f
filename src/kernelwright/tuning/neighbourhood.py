"""Neighbourhoods in a constrained discrete space: the trust region of local exploitation.

Notation:
    N          valid configs (rows of ``space.table``); P parameters
    codes      `(N, P)` each row's value index per parameter (its rank among the values)
    c          a centre row (an incumbent: one of the fastest configs timed so far)
    d(r, c)    Hamming distance: how many parameters of r differ from c's
    ball       {r : d(r, c) <= radius for some centre c}, intersected with the candidates

Only rows of the valid table are ever candidates, so a neighbourhood cannot leave the valid
set: a one-parameter move that breaks a restriction is simply absent. Distances count changed
parameters, not how far a value moved, because GPU responses are not smooth in a value (a block
width of 48 is not between 32 and 64 in speed), while a config that shares most parameters with
a fast one usually shares its resource usage and memory pattern.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kernelwright.tuning.space import Space

Rows = npt.NDArray[np.intp]


def value_codes(space: Space) -> npt.NDArray[np.int64]:
    """`(N, P)` index of each row's value in its parameter's ``values``."""
    columns = []
    for p in space.params:
        rank = {v: i for i, v in enumerate(p.values)}
        columns.append(np.array([rank[v] for v in space.column(p.name).tolist()], dtype=np.int64))
    if not columns:
        return np.zeros((len(space), 0), dtype=np.int64)
    return np.stack(columns, axis=1)


def within(
    codes: npt.NDArray[np.int64], candidates: Rows, centres: Sequence[int], radius: int
) -> npt.NDArray[np.bool_]:
    """`(m,)` whether each candidate differs from some centre in at most ``radius`` parameters."""
    near = np.zeros(len(candidates), dtype=bool)
    for c in centres:
        near |= (codes[candidates] != codes[c]).sum(axis=1) <= radius
    return near


def evaluations_since_improvement(times_ms: Sequence[float | None]) -> int:
    """How many evaluations followed the fastest one (failures count); all of them if none ran."""
    best_at, best = -1, np.inf
    for i, t in enumerate(times_ms):
        if t is not None and t < best:
            best_at, best = i, t
    return len(times_ms) - 1 - best_at
