"""Coordinate descent: from the fastest config so far, change one parameter to its nearest value.

    start = the fastest config this run timed
            (else the fastest warm-start config, else the valid config nearest every middle value)
    for each parameter, in the space's order:
        its values by distance from the start's value (log2 distance for sizes), then by value:
        the first that gives a valid, unevaluated config is suggested; then the next parameter

One pass over the parameters per ask: once no parameter has an untried neighbour the strategy
has converged and suggests nothing. It needs no model, so it is the tuner of last resort and the
opening of ``neighbours-then-bo``; an expert's default is usually near a good config.

Where the history holds two timings of one source (a prior task's, or this run's) that differ
in a single parameter, they tell what moving that parameter up or down did there: a move whose
direction lost by more than ``CLEAR`` on average is suggested after every other parameter's,
one that won before them (a pair gives both directions: what lost one way won the other). A
skill's halved tile that ran 2.5-6x slower on five convolutions is not the first move on the
sixth.
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
        verdicts = move_verdicts(space, history)
        moves: list[tuple[int, int]] = []  # (verdict, row): one per parameter, in its order
        for p in space.params:

            def key(x: Value, p: Param = p) -> tuple[int, float, tuple[int, float, str]]:
                way = _direction(p, x, best[p.name])
                return (verdicts.get((p.name, way), 0), _distance(p, x, best[p.name]), _order(x))

            for v in sorted(p.values, key=key):
                if v == best[p.name]:
                    continue
                row = space.index({**best, p.name: v})
                if row is None or row in done or row in out or row in (r for _, r in moves):
                    continue
                moves.append((key(v)[0], row))
                break  # nearest untried value of this parameter; the next parameter next
        moves.sort(key=lambda m: m[0])  # stable: parameters without evidence keep their order
        out += [row for _, row in moves]
        return out[:n]


# A move counts as won or lost where its timings moved by more than this factor on average:
# two readings of one kernel differ by a few percent, a wrong tile by several times.
CLEAR = 1.15


def move_verdicts(space: Space, history: Sequence[Observation]) -> dict[tuple[str, int], int]:
    """(parameter, direction +1/-1) -> -1 where moving it that way won on average, +1 where it
    lost (by ``CLEAR``), from pairs of timings of one source differing in that parameter
    alone."""
    by_source: dict[str, list[tuple[dict[str, Value], float]]] = {}
    for o in history:
        if o.time_ms is not None and o.time_ms > 0:
            by_source.setdefault(o.source, []).append((space.config(o.row), float(o.time_ms)))
    effects: dict[tuple[str, int], list[float]] = {}
    params = {p.name: p for p in space.params}
    for rows in by_source.values():
        for i, (a, ta) in enumerate(rows):
            for b, tb in rows[i + 1:]:
                changed = [name for name in params if a[name] != b[name]]
                if len(changed) != 1:
                    continue
                name = changed[0]
                way = _direction(params[name], b[name], a[name])
                effects.setdefault((name, way), []).append(math.log(tb / ta))
                effects.setdefault((name, -way), []).append(math.log(ta / tb))
    verdicts: dict[tuple[str, int], int] = {}
    for move, logs in effects.items():
        mean = sum(logs) / len(logs)
        if abs(mean) > math.log(CLEAR):
            verdicts[move] = 1 if mean > 0 else -1
    return verdicts


def _direction(p: Param, x: Value, current: Value) -> int:
    """+1 where ``x`` lies above ``current`` in the parameter's values, -1 below."""
    return 1 if p.values.index(x) > p.values.index(current) else -1


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
