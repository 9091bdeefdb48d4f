"""Kernel Tuner's own strategies, replayed through its simulation mode (replay only).

Kernel Tuner's strategies own their loop, so they cannot answer ask/tell; they are Drivers. For a
replay we write the measured table as a Kernel Tuner cache file (the format ``tune_kernel(...,
cache=..., simulation_mode=True)`` reads), restrict its search space to exactly the configs in
the table (failed ones included: Kernel Tuner sees them fail, as on a GPU), run the named strategy
with ``max_fevals = budget``, and read back the order in which it evaluated configs.

Kernel Tuner draws from NumPy's and Python's global generators; the driver seeds both for the
run and restores their previous state afterwards, so nothing leaks into the caller.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kernelwright.errors import ConfigError
from kernelwright.tuning.measured import OK, MeasuredSpace
from kernelwright.tuning.space import Value


@dataclass(frozen=True)
class KernelTunerStrategy:
    """Drive ``kernel_tuner.tune_kernel(strategy=...)`` on a measured space."""

    strategy: str
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        """The registry name, ``kt-<strategy>``."""
        return f"kt-{self.strategy}"

    def drive(self, measured: MeasuredSpace, budget: int, seed: int) -> list[int]:
        """Rows Kernel Tuner evaluated, in order, distinct, at most ``budget``."""
        import kernel_tuner
        from constraint import FunctionConstraint

        space = measured.space
        allowed = set(space.table)

        def in_table(*values: Value) -> bool:
            return tuple(values) in allowed

        with tempfile.TemporaryDirectory() as tmp, _seeded_globals(seed), _quiet():
            cache = Path(tmp) / "space.json"
            cache.write_text(json.dumps(_cache_file(measured)))
            results, _ = kernel_tuner.tune_kernel(
                kernel_name="replay",
                kernel_source="",
                problem_size=(1,),
                arguments=[],
                tune_params={p.name: list(p.values) for p in space.params},
                restrictions=[FunctionConstraint(in_table)],
                strategy=self.strategy,
                strategy_options={"max_fevals": budget, **dict(self.options)},
                cache=str(cache),
                simulation_mode=True,
                quiet=True,
                verbose=False,
            )
        rows: list[int] = []
        for res in results:
            if not isinstance(res, dict):
                continue
            row = space.index({n: res.get(n) for n in space.names})  # type: ignore[misc]
            if row is not None and row not in rows:
                rows.append(row)
        return rows[:budget]


def _cache_file(measured: MeasuredSpace) -> dict[str, Any]:
    space = measured.space
    entries: dict[str, Any] = {}
    for row, values in enumerate(space.table):
        key = ",".join(str(v) for v in values)
        entry: dict[str, Any] = dict(zip(space.names, values, strict=True))
        status = measured.statuses[row]
        entry["time"] = float(measured.times_ms[row]) if status == OK else status
        entry.update(compile_time=0.0, verification_time=0.0, benchmark_time=0.0, times=[])
        entries[key] = entry
    return {
        "device_name": "replay",
        "kernel_name": "replay",
        "problem_size": [1],
        "tune_params_keys": list(space.names),
        "tune_params": {p.name: list(p.values) for p in space.params},
        "objective": "time",
        "cache": entries,
    }


@contextlib.contextmanager
def _seeded_globals(seed: int) -> Iterator[None]:
    np_state, py_state = np.random.get_state(), random.getstate()
    np.random.seed(seed & 0xFFFFFFFF)
    random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")  # Kernel Tuner's deprecation and simulation notices
        yield


def make(strategy: str, **options: Any) -> KernelTunerStrategy:
    """Registry factory: ``strategy`` is a Kernel Tuner strategy name (``genetic_algorithm``...)."""
    try:
        from kernel_tuner.interface import strategy_map
    except ImportError as exc:  # pragma: no cover - the registry checks first
        raise ConfigError(
            "Kernel Tuner strategies need kernel_tuner: pip install kernel_tuner"
        ) from exc
    if strategy not in strategy_map:
        raise ConfigError(
            f"Kernel Tuner has no strategy {strategy!r}; it has {sorted(strategy_map)}"
        )
    return KernelTunerStrategy(strategy, tuple(sorted(options.items())))
