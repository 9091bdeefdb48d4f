"""Fully measured spaces: a CSV of every valid config with its time or its failure.

    CSV: one column per parameter, then time_ms, time_std_ms, n_rep, compile_ms, status
         status == "ok" -> time_ms is the measured mean (ms); anything else is a failure marker
         (Kernel Tuner writes RuntimeFailedConfig / CompilationFailedConfig) and time_ms is empty.
    Configs absent from the file are invalid (the table is the space's allow-list).

An ``index.json`` beside the CSV (the format of ``shared/data/tuning``) may describe the file;
its ``restrictions`` are then attached to the space, which adds nothing to validity (the table
already decides it) but tells the GP which quantities the kernel's author constrained.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import numpy.typing as npt

from kernelwright.errors import ConfigError
from kernelwright.tuning.space import Param, Space, Value

METRIC_COLUMNS = ("time_ms", "time_std_ms", "n_rep", "compile_ms", "status")
OK = "ok"


@dataclass(frozen=True)
class MeasuredSpace:
    """A space with a measurement for every valid config.

    Attributes:
        name: a short label (the CSV's stem).
        space: the space; its ``table`` rows align with ``times_ms`` and ``statuses``.
        times_ms: `(N,)` float, nan where the config failed.
        statuses: `(N,)` status strings, ``"ok"`` or a failure marker.
    """

    name: str
    space: Space
    times_ms: npt.NDArray[np.float64]
    statuses: tuple[str, ...]

    @cached_property
    def ok(self) -> npt.NDArray[np.bool_]:
        """`(N,)` True where the config ran."""
        return np.array([s == OK for s in self.statuses])

    @property
    def best_ms(self) -> float:
        """The optimum: the fastest measured time."""
        return float(np.nanmin(self.times_ms))

    def lookup(self, row: int) -> float | None:
        """The stored time of a row, or None when that config failed."""
        return float(self.times_ms[row]) if self.ok[row] else None


def _parse_value(text: str) -> Value:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        f = float(text)
    except ValueError:
        return text
    return int(f) if f.is_integer() else f


def load_measured_csv(
    path: str | Path,
    restrictions: tuple[str, ...] | None = None,
    derived: dict[str, str] | None = None,
) -> MeasuredSpace:
    """Read a measured space.

    Args:
        path: the CSV file (format in the module docstring).
        restrictions: restriction expressions; ``None`` reads them from a sibling ``index.json``
            that lists this file, if there is one.
        derived: named derived quantities for the GP (see :class:`Space`).

    Raises:
        ConfigError: the file is missing, lacks the metric columns, or has a malformed row.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such measured-space CSV")
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        missing = [c for c in ("time_ms", "status") if c not in header]
        if missing:
            raise ConfigError(
                f"{path}: missing columns {missing}; expected params + {METRIC_COLUMNS}"
            )
        names = [c for c in header if c not in METRIC_COLUMNS]
        if not names:
            raise ConfigError(f"{path}: no parameter columns before {METRIC_COLUMNS}")
        rows: dict[tuple[Value, ...], tuple[float, str]] = {}
        for lineno, rec in enumerate(reader, start=2):
            key = tuple(_parse_value(rec[n]) for n in names)
            status = (rec["status"] or "").strip() or "unknown"
            try:
                t = float(rec["time_ms"]) if status == OK else math.nan
            except (TypeError, ValueError) as exc:
                raise ConfigError(
                    f"{path}:{lineno}: status ok but time_ms={rec['time_ms']!r}"
                ) from exc
            if status == OK and not (math.isfinite(t) and t > 0):
                raise ConfigError(f"{path}:{lineno}: time_ms={t} must be a positive number")
            rows[key] = (t, status)
    if not rows:
        raise ConfigError(f"{path}: no configurations")
    if not any(s == OK for _, s in rows.values()):
        raise ConfigError(f"{path}: every configuration failed; nothing to tune")
    params = tuple(Param.infer(n, (k[i] for k in rows)) for i, n in enumerate(names))
    if restrictions is None:
        restrictions = _restrictions_from_index(path)
    space = Space(params, tuple(restrictions), dict(derived or {}), allowed=tuple(rows))
    # Restrictions may only narrow what the table holds; rows they reject are reported, not kept.
    times = np.array([rows[r][0] for r in space.table])
    statuses = tuple(rows[r][1] for r in space.table)
    return MeasuredSpace(path.stem, space, times, statuses)


def _restrictions_from_index(path: Path) -> tuple[str, ...]:
    index = path.parent / "index.json"
    if not index.is_file():
        return ()
    try:
        data = json.loads(index.read_text())
    except (OSError, json.JSONDecodeError):
        return ()
    for entry in data.get("datasets", []) if isinstance(data, dict) else []:
        if isinstance(entry, dict) and entry.get("file") == path.name:
            return tuple(str(r) for r in entry.get("restrictions", []))
    return ()
