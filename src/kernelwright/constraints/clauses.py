"""One clause of a formal constraint model: what it requires, how it is checked, and the words it
came from. :func:`clauses_of` lists the clauses of a :class:`Constraints` (a file, or a
formulation), so the command line and reports show every model the same way."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kernelwright.constraints.model import Constraints
from kernelwright.constraints.source_rules import BACKENDS


class Kind(enum.StrEnum):
    """What part of the model a clause belongs to."""

    RESTRICTION = "space restriction"
    FORBIDDEN_OP = "forbidden op"
    FORBIDDEN_CONSTRUCT = "forbidden construct"
    BACKEND = "backend"
    SIGNATURE = "signature"
    PRECISION = "precision"
    DETERMINISM = "determinism"
    SHAPE_RANGE = "shape range"
    MEMORY_CEILING = "memory ceiling"


# Short enough for a table column. "source": the candidate's code is screened before it is
# evaluated; "tuning space": configurations breaking the clause are never proposed; "parameters":
# each candidate's parameters are screened; "repeated runs": a correct candidate runs twice more
# on the same inputs, compared bit for bit; "extra shapes": a correct candidate is also checked
# at each end of the range; "peak memory (GPU)": each checked call's peak allocation beyond its
# inputs, parameters and outputs. Refusals name the check (constraint-space...).
CHECKED_BY: dict[Kind, str] = {
    Kind.RESTRICTION: "tuning space, parameters",
    Kind.FORBIDDEN_OP: "source",
    Kind.FORBIDDEN_CONSTRUCT: "source",
    Kind.BACKEND: "source",
    Kind.SIGNATURE: "source",
    Kind.PRECISION: "run policy, source",
    Kind.DETERMINISM: "repeated runs",
    Kind.SHAPE_RANGE: "extra shapes",
    Kind.MEMORY_CEILING: "peak memory (GPU)",
}


@dataclass(frozen=True, slots=True)
class Clause:
    """A clause of the model.

    Attributes:
        kind: its part of the model.
        formal: what it requires, formally (``BLOCK_M % 64 == 0``, ``atomics``...).
        words: the words it came from (the sentence's fragment, or the file it was read from).
    """

    kind: Kind
    formal: str
    words: str

    @property
    def checked_by(self) -> str:
        """How kernelwright enforces it (or that it does not yet)."""
        return CHECKED_BY[self.kind]


def clauses_of(constraints: Constraints, words: str = "") -> list[Clause]:
    """Every clause of ``constraints``, each attributed to ``words`` (the file, by default)."""
    where = words or (f"from {constraints.path}" if constraints.path else "")
    found = [Clause(Kind.RESTRICTION, r, where) for r in constraints.space.restrictions]
    found += [Clause(Kind.FORBIDDEN_OP, op, where) for op in constraints.forbidden_ops]
    found += [Clause(Kind.FORBIDDEN_CONSTRUCT, c, where) for c in constraints.forbidden_constructs]
    if tuple(constraints.backends) != BACKENDS:
        found.append(Clause(Kind.BACKEND, f"only {', '.join(constraints.backends)}", where))
    found += [
        Clause(Kind.SIGNATURE, f"{name}({', '.join(params)})", where)
        for name, params in constraints.signatures
    ]
    if constraints.dtypes is not None:
        d = constraints.dtypes
        formal = f"{d.storage} storage, {d.math} math (policy {d.precision.value})"
        found.append(Clause(Kind.PRECISION, formal, where))
    elif constraints.precision is not None:
        found.append(Clause(Kind.PRECISION, f"policy {constraints.precision.value}", where))
    props = constraints.properties
    if props.deterministic:
        found.append(Clause(Kind.DETERMINISM, "bit-identical repeated runs", where))
    found += [Clause(Kind.SHAPE_RANGE, r.describe(), where) for r in props.shape_ranges]
    if props.memory_ceiling_bytes is not None:
        formal = f"peak extra memory <= {props.memory_ceiling_bytes} bytes"
        found.append(Clause(Kind.MEMORY_CEILING, formal, where))
    return found
