"""Constrained parameter spaces: typed parameters, restrictions, derived quantities.

    Param       one tunable: its values and kind (int, pow2, ordinal, categorical)
    Space       params + restrictions (+ an optional allow-list) -> the valid configs, enumerated
    Config      a plain ``dict[str, value]``; inside the tuner a config is its row index in the
                space's enumerated table, so "the same config costs once" is an integer set

A space knows nothing about measurements; :mod:`kernelwright.tuning.measured` adds those.
"""

from __future__ import annotations

import enum
import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from kernelwright.errors import ConfigError
from kernelwright.tuning.restrictions import Expression, satisfied

Value = int | float | str
Config = dict[str, Value]


class Kind(enum.StrEnum):
    """How a parameter's values relate to each other (and so how a GP kernel sees them)."""

    INT = "int"  # numbers on a linear scale (or log2 scale when ``Param.log``)
    POW2 = "pow2"  # powers of two: always on a log2 scale
    ORDINAL = "ordinal"  # ordered, spacing meaningless: encoded by rank
    CATEGORICAL = "categorical"  # unordered: compared only for equality


@dataclass(frozen=True, slots=True)
class Param:
    """One tunable parameter.

    Attributes:
        name: identifier used in restrictions and configs (``BLOCK_M``, ``block_size_x``...).
        values: the allowed values, in order (ascending for numeric kinds).
        kind: see :class:`Kind`.
        log: numeric values act multiplicatively (sizes): the kernels see ``log2(value)``.
    """

    name: str
    values: tuple[Value, ...]
    kind: Kind = Kind.INT
    log: bool = False

    def __post_init__(self) -> None:
        if not self.values:
            raise ConfigError(f"parameter {self.name!r} has no values")
        if len(set(self.values)) != len(self.values):
            raise ConfigError(f"parameter {self.name!r} repeats a value: {self.values}")
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in self.values)
        if self.kind in (Kind.INT, Kind.POW2) and not numeric:
            raise ConfigError(f"parameter {self.name!r} is {self.kind} but has non-numeric values")
        if self.kind is Kind.POW2 and not all(is_pow2(v) for v in self.values):
            raise ConfigError(f"parameter {self.name!r} is pow2 but {self.values} are not all 2^k")
        nonpositive = any(not isinstance(v, str) and v <= 0 for v in self.values)
        if (self.log or self.kind is Kind.POW2) and nonpositive:
            raise ConfigError(f"parameter {self.name!r} is on a log scale but has values <= 0")

    @property
    def on_log_scale(self) -> bool:
        """Whether kernels see ``log2(value)``."""
        return self.kind is Kind.POW2 or (self.kind is Kind.INT and self.log)

    @classmethod
    def infer(cls, name: str, values: Iterable[Value]) -> Param:
        """Guess the kind from the values alone (what a CSV gives).

        Two values -> categorical (a flag); strings -> categorical; all powers of two (and more
        than two) -> pow2; positive integers spanning a factor >= 4 -> int on a log2 scale (sizes);
        other numbers -> int on a linear scale.
        """
        uniq = sorted(set(values), key=_sort_key)
        if len(uniq) <= 2 or not all(isinstance(v, int | float) for v in uniq):
            return cls(name, tuple(uniq), Kind.CATEGORICAL)
        if all(is_pow2(v) for v in uniq):
            return cls(name, tuple(uniq), Kind.POW2)
        lo, hi = float(uniq[0]), float(uniq[-1])  # type: ignore[arg-type]
        return cls(name, tuple(uniq), Kind.INT, log=lo > 0 and hi / lo >= 4)


def is_pow2(v: Value) -> bool:
    """Whether ``v`` is a positive whole power of two."""
    return (
        isinstance(v, int | float)
        and v > 0
        and float(v).is_integer()
        and (int(v) & (int(v) - 1)) == 0
    )


def _sort_key(v: Value) -> tuple[int, float, str]:
    return (1, 0.0, v) if isinstance(v, str) else (0, float(v), "")


# Configurations a space enumerates at most: its table (a tuple per row, plus the restrictions'
# columns) then takes a few hundred MB
MAX_ENUMERATED = 1 << 20


@dataclass(frozen=True)
class Space:
    """A constrained, enumerable parameter space.

    Attributes:
        params: the tunable parameters, in a fixed order (the column order of every table).
        restrictions: expressions every valid config satisfies (Kernel Tuner syntax).
        derived: named quantities computed from a config, such as
            ``{"threads": "BLOCK_M * BLOCK_N / 32"}`` (resource use, work per thread...). The
            products of parameters they contain become GP features (log2 scale), as do the
            products inside restrictions.
        allowed: when given, only these configs are valid (a measured table: absent = invalid).
    """

    params: tuple[Param, ...]
    restrictions: tuple[str, ...] = ()
    derived: Mapping[str, str] = field(default_factory=dict)
    allowed: tuple[tuple[Value, ...], ...] | None = None

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ConfigError(f"duplicate parameter names in {names}")
        known = frozenset(names)
        for text in (*self.restrictions, *self.derived.values()):
            Expression.parse(text, known)  # raises ConfigError early, with the offending text

    @property
    def names(self) -> tuple[str, ...]:
        """Parameter names in column order."""
        return tuple(p.name for p in self.params)

    @cached_property
    def fingerprint(self) -> int:
        """A hash of everything that defines the space: equal spaces share model caches."""
        derived = tuple(sorted(self.derived.items()))
        return hash((self.params, self.restrictions, derived, self.allowed))

    @cached_property
    def parsed_restrictions(self) -> tuple[Expression, ...]:
        """The restrictions, parsed and checked."""
        return tuple(Expression.parse(t, frozenset(self.names)) for t in self.restrictions)

    @property
    def size(self) -> int:
        """Configurations before the restrictions: the product of the parameters' value counts
        (the measured table's rows when ``allowed`` is given)."""
        if self.allowed is not None:
            return len(self.allowed)
        return math.prod(len(p.values) for p in self.params)

    @cached_property
    def table(self) -> tuple[tuple[Value, ...], ...]:
        """Every valid config as a tuple of values, in a deterministic order (row = config id).

        Raises ConfigError past :data:`MAX_ENUMERATED` configurations: the table is held in
        memory, and the joint space of a many-kernel model's parameters would not fit."""
        if self.allowed is not None:
            rows = sorted(set(self.allowed), key=lambda r: tuple(_sort_key(v) for v in r))
        elif self.size > MAX_ENUMERATED:
            raise ConfigError(
                f"the space has {self.size:.3g} configurations, more than the "
                f"{MAX_ENUMERATED} a table enumerates: tune fewer parameters at once"
            )
        else:
            rows = list(itertools.product(*(p.values for p in self.params)))
        if rows and self.restrictions:
            cols = {n: np.array([r[i] for r in rows]) for i, n in enumerate(self.names)}
            mask = satisfied(self.parsed_restrictions, cols)
            rows = [r for r, ok in zip(rows, mask, strict=True) if ok]
        if not rows:
            raise ConfigError("the space has no valid configuration: check its restrictions")
        return tuple(rows)

    @cached_property
    def _index(self) -> dict[tuple[Value, ...], int]:
        return {row: i for i, row in enumerate(self.table)}

    def __len__(self) -> int:
        return len(self.table)

    def config(self, i: int) -> Config:
        """The config at row ``i`` as a ``{name: value}`` dict."""
        return dict(zip(self.names, self.table[i], strict=True))

    def index(self, config: Mapping[str, Value]) -> int | None:
        """Row of ``config`` in :attr:`table`, or None when it is not a valid config."""
        try:
            key = tuple(
                _normalise(config[n], p) for n, p in zip(self.names, self.params, strict=True)
            )
        except KeyError:
            return None
        return self._index.get(key)

    def require_index(self, config: Mapping[str, Value]) -> int:
        """Like :meth:`index` but raises ConfigError naming the problem."""
        i = self.index(config)
        if i is None:
            missing = [n for n in self.names if n not in config]
            why = (
                f"misses {missing}" if missing else "violates a restriction or is not in the table"
            )
            raise ConfigError(f"config {dict(config)} is not in the space: it {why}")
        return i

    def column(self, name: str) -> npt.NDArray[Any]:
        """`(N,)` values of parameter ``name`` over the valid table."""
        j = self.names.index(name)
        return np.array([row[j] for row in self.table])


def _normalise(value: Any, param: Param) -> Value:
    # JSON and CSV round trips turn 4 into 4.0 or "4"; map back onto the declared value.
    if value in param.values:
        for v in param.values:
            if v == value and type(v) is type(value):
                return v
        return next(v for v in param.values if v == value)
    if isinstance(value, str):
        for v in param.values:
            if str(v) == value:
                return v
    return value  # type: ignore[no-any-return]
