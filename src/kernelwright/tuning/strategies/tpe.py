"""Optuna's TPE sampler behind the ask/tell seam (Optuna defaults, seeded per step).

Each ask rebuilds an in-memory study from the history (Optuna's own rule: samplers re-read the
storage), so nothing survives between calls. Parameters reach TPE as Optuna would be told them by
a user tuning a kernel: categorical parameters as categoricals, numeric ones as the index into
their sorted values (an ordered integer, so TPE's Parzen estimators see the order). A failed
config is told as the slowest time seen so far (TPE otherwise ignores failures and keeps proposing
them). A suggestion that violates the restrictions, or was already evaluated, is moved to the
nearest valid unevaluated config (Kernel Tuner's snap-to-valid), measured per parameter on the
space's own scales.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kernelwright.tuning.gp.features import FeatureTable
from kernelwright.tuning.initial import design_coordinates
from kernelwright.tuning.space import Kind, Space
from kernelwright.tuning.strategies.base import Observation, step_rng, unevaluated


@dataclass(frozen=True)
class TPE:
    """Optuna's ``TPESampler`` with its default settings."""

    name: str = "tpe"
    n_startup_trials: int = 10

    def ask(self, space: Space, history: Sequence[Observation], n: int, seed: int) -> list[int]:
        """``n`` distinct unevaluated rows suggested by TPE (snapped to valid configs)."""
        import optuna

        free = unevaluated(space, history)
        if len(free) == 0 or n <= 0:
            return []
        varying = [p for p in space.params if len(p.values) > 1]
        dists: dict[str, Any] = {
            p.name: optuna.distributions.CategoricalDistribution(list(p.values))
            if p.kind is Kind.CATEGORICAL
            else optuna.distributions.IntDistribution(0, len(p.values) - 1)
            for p in varying
        }
        own = [o for o in history if not o.source]
        ok_times = [o.time_ms for o in own if o.time_ms is not None]
        worst = max(ok_times) if ok_times else 1.0
        sampler_seed = int(step_rng(seed, history).integers(2**31 - 1))
        with _quiet_optuna():
            study = optuna.create_study(
                direction="minimize",
                sampler=optuna.samplers.TPESampler(
                    seed=sampler_seed, n_startup_trials=self.n_startup_trials
                ),
            )
            for o in own:
                cfg = space.config(o.row)
                params = {p.name: _encode(p.values, p.kind, cfg[p.name]) for p in varying}
                value = math.log(o.time_ms if o.time_ms is not None else worst)
                study.add_trial(
                    optuna.trial.create_trial(params=params, distributions=dists, value=value)
                )
            out: list[int] = []
            taken = {o.row for o in own}
            coords: npt.NDArray[np.float64] | None = None
            for _ in range(min(n, len(free))):
                trial = study.ask(dists)
                cfg = {p.name: p.values[0] for p in space.params}
                for p in varying:
                    v = trial.params[p.name]
                    cfg[p.name] = v if p.kind is Kind.CATEGORICAL else p.values[int(v)]
                row = space.index(cfg)
                if row is None or row in taken:
                    coords = design_coordinates(FeatureTable(space)) if coords is None else coords
                    row = _nearest(space, cfg, coords, taken)
                out.append(row)
                taken.add(row)
        return out


def _encode(values: tuple[Any, ...], kind: Kind, value: Any) -> Any:
    return value if kind is Kind.CATEGORICAL else values.index(value)


def _nearest(
    space: Space, cfg: dict[str, Any], coords: npt.NDArray[np.float64], taken: set[int]
) -> int:
    """The valid, untaken row closest to ``cfg`` (which may violate the restrictions)."""
    target = _config_coordinates(space, cfg)
    d = ((coords - target) ** 2).sum(axis=1)
    if taken:
        d[list(taken)] = np.inf
    return int(np.argmin(d))


def _config_coordinates(space: Space, cfg: dict[str, Any]) -> Any:
    """Coordinates of an arbitrary (possibly invalid) config, matching ``design_coordinates``."""
    out: list[float] = []
    for p in space.params:
        if len(p.values) < 2:
            continue
        if p.kind is Kind.CATEGORICAL:
            # Same one-hot as design_coordinates: codes in order of first appearance in the table.
            seen = _first_seen(space, p.name)
            out.extend((cfg[p.name] == v) / math.sqrt(2.0) for v in seen)
        else:
            col = space.column(p.name).astype(float)
            v = float(cfg[p.name])
            if p.on_log_scale:
                col, v = np.log2(col), math.log2(v)
            lo, hi = float(col.min()), float(col.max())
            out.append((v - lo) / (hi - lo) if hi > lo else 0.0)
    return np.array(out)


def _first_seen(space: Space, name: str) -> list[Any]:
    j = space.names.index(name)
    return list(dict.fromkeys(row[j] for row in space.table))


@contextlib.contextmanager
def _quiet_optuna() -> Iterator[None]:
    """Silence Optuna's INFO lines for the duration of one ask (restored afterwards)."""
    logger = logging.getLogger("optuna")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def make(**options: Any) -> TPE:
    """Registry factory."""
    return TPE(**options)
