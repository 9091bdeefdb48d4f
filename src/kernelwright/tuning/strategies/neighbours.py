"""Coordinate descent: from the fastest config so far, change one parameter to its nearest value.

    start = the fastest config this run timed
            (else the fastest warm-start config, else the valid config nearest every middle value)
    for each parameter, in the space's order:
        its values by distance from the start's value (log2 distance for sizes), then by value:
        the first that gives a valid, unevaluated config is suggested; then the next parameter

One pass over the parameters per ask: once no parameter has an untried neighbour the strategy
has converged and suggests nothing. It needs no model, so it is the tuner of last resort and the
opening of ``neighbours-then-bo``; an expert's default is usually near a good config.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kernelwright.tuning.space import Kind, Param, Space, Value
from kernelwright.tuning.strategies.base import Observation, evaluated_rows


@dataclass(frozen=True)
class Neighbours:
    """One-parameter moves from the fastest config (see the module docstring)."""

    name: str = "neighbours"

    def ask(self, space: Space, history: Sequence[Observation], n: int, seed: int) -> list[int]:
        """Up to ``n`` unevaluated rows, one per parameter, nearest values first."""
        done = evaluated_rows(history)
        start = _start(space, history)
        out: list[int] = []
        if start not in done:
            out.append(start)
        best = space.config(start)
        for p in space.params:
            if len(out) >= n:
                break
            for v in sorted(p.values, key=lambda x: (_distance(p, x, best[p.name]), _order(x))):
                if v == best[p.name]:
                    continue
                row = space.index({**best, p.name: v})
                if row is None or row in done or row in out:
                    continue
                out.append(row)
                break  # nearest untried value of this parameter; the next parameter next
        return out[:n]


def _start(space: Space, history: Sequence[Observation]) -> int:
    own = [o for o in history if not o.source and o.time_ms is not None]
    prior = [o for o in history if o.source and o.time_ms is not None]
    for timed in (own, prior):
        if timed:
            return min(timed, key=lambda o: o.time_ms).row  # type: ignore[arg-type, return-value]
    return _middle(space)


def _middle(space: Space) -> int:
    """The valid config whose values are nearest (in rank) to every parameter's middle value."""
    cost = np.zeros(len(space))
    for p in space.params:
        rank = {v: i for i, v in enumerate(p.values)}
        column = np.array([rank[v] for v in space.column(p.name).tolist()], dtype=float)
        cost += np.abs(column - (len(p.values) - 1) / 2.0)
    return int(np.argmin(cost))


def _distance(p: Param, x: Value, current: Value) -> float:
    if p.kind is Kind.CATEGORICAL or isinstance(x, str) or isinstance(current, str):
        return float(abs(p.values.index(x) - p.values.index(current)))
    if x > 0 and current > 0:
        return abs(math.log2(x) - math.log2(current))
    return float(abs(x - current))


def _order(x: Value) -> tuple[int, float, str]:
    return (1, 0.0, x) if isinstance(x, str) else (0, float(x), "")


def make(**options: object) -> Neighbours:
    """Registry factory."""
    return Neighbours(**options)  # type: ignore[arg-type]
