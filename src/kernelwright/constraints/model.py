"""What a person allows candidates to be, clause by clause, and how each clause is enforced.

    clause          enforced by                                          check named
    backends        the candidate's source, before it is evaluated        constraint-backend
    forbidden_ops   the candidate's source, before it is evaluated        constraint-forbidden-op
    signatures      the candidate's source, before it is evaluated        constraint-signature
    precision       the run's policy for candidate and baselines (a       constraint-precision
                    conflicting policy is an error before anything runs),
                    and the source: no TF32 or half casts under fp32
    budget          caps on the search (candidates, minutes) and on the LLM proposer (calls, cost)
    space           the tuning spaces (restrictions         constraint-space
                    prune them) and each candidate's
                    parameters, before it is evaluated
    forbidden_      the candidate's source, before it is     constraint-forbidden-construct
    constructs      evaluated (atomics, inline assembly)
    determinism     the harness: a correct candidate runs     constraint-determinism
                    twice more on the same inputs, and its
                    outputs must be identical bit for bit
    shape ranges    the harness: a correct candidate is also     constraint-shape-range
                    checked with the task's size constant at
                    each end of the range
    memory ceiling  the harness, on a GPU: each checked call's   constraint-memory
                    peak allocation beyond its inputs,
                    parameters and outputs (measured in the
                    candidate's process: it can only refuse)

``Constraints.violations(source, params)`` is the ``SourceConstraints`` protocol that
``EvalOptions.constraints`` holds: ``kernelwright optimize`` screens every proposal with it
before evaluation, and the harness checks it again as a static check. The source rules live in
:mod:`kernelwright.constraints.source_rules`; the file format in :mod:`.loader`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from kernelwright.constraints.constructs import construct_violations
from kernelwright.constraints.properties import DtypePolicy, Properties
from kernelwright.constraints.source_rules import (
    BACKENDS,
    backend_violations,
    forbidden_op_violations,
    parse_or_none,
    precision_violations,
    signature_violations,
)
from kernelwright.constraints.space_rules import SpaceRules, restrict_library
from kernelwright.errors import ConfigError
from kernelwright.records import Precision, Violation

if TYPE_CHECKING:
    from kernelwright.evaluate.options import EvalOptions
    from kernelwright.search.controller import Budget
    from kernelwright.skills.library import SkillLibrary

N = TypeVar("N", int, float)
_MAX_REFERENCE_CHARS = 6000


@dataclass(frozen=True, slots=True)
class Reference:
    """A known-good implementation shown to the planner and coder (a template, a human's file)."""

    title: str
    source: str

    def excerpt(self, limit: int = _MAX_REFERENCE_CHARS) -> str:
        """The source, cut at ``limit`` characters with a marker."""
        if len(self.source) <= limit:
            return self.source
        return self.source[:limit] + "\n# ... (truncated)\n"


@dataclass(frozen=True, slots=True)
class Constraints:
    """What a person allows candidates to be (an empty one allows everything).

    Attributes:
        backends: kernel languages allowed (``triton``, ``cuda``).
        precision: the policy the run must use; None leaves the command's choice.
        forbidden_ops: dotted names no candidate may use, aliases resolved (``F.`` is
            ``torch.nn.functional.``); their Tensor-method forms, and ``@`` for
            ``torch.matmul``, count too.
        signatures: ``(name, parameters)`` pairs; ``name`` is ``func`` or ``Class.method``.
        candidates, minutes: search budget caps (see :meth:`limit`).
        llm_calls, cost_usd: caps on the LLM proposer's calls and known spend.
        references: reference implementations for the planner and coder.
        path: the file these came from ("" when built in code).
        space: restrictions on kernel parameters (tuning spaces and candidates' parameters).
        forbidden_constructs: kinds of code no candidate may contain (``atomics``...).
        properties: determinism, shape ranges and a memory ceiling (checked by the harness;
            the ceiling on a GPU only).
        dtypes: storage and math dtypes, when stated; they agree with ``precision``.
    """

    backends: tuple[str, ...] = BACKENDS
    precision: Precision | None = None
    forbidden_ops: tuple[str, ...] = ()
    signatures: tuple[tuple[str, tuple[str, ...]], ...] = ()
    candidates: int | None = None
    minutes: float | None = None
    llm_calls: int | None = None
    cost_usd: float | None = None
    references: tuple[Reference, ...] = ()
    path: str = ""
    space: SpaceRules = SpaceRules()
    forbidden_constructs: tuple[str, ...] = ()
    properties: Properties = Properties()
    dtypes: DtypePolicy | None = None

    def __post_init__(self) -> None:
        if self.dtypes is not None and self.precision is not self.dtypes.precision:
            stated = self.precision.value if self.precision else "none"
            raise ConfigError(
                f"{self.dtypes.storage} storage with {self.dtypes.math} math is precision "
                f"{self.dtypes.precision.value!r}, but precision is {stated!r}; state one policy"
            )

    def violations(
        self, source: str, params: Mapping[str, int | float | str] | None = None
    ) -> Sequence[Violation]:
        """What in ``source`` (and in the candidate's ``params``, ``g<group>.<NAME>``, when
        given) breaks these constraints; empty when it complies."""
        broken = self.space.violations(params) if params else []
        tree = parse_or_none(source)
        if tree is None:
            return broken  # the harness reports the syntax error itself
        return [
            *backend_violations(tree, self.backends),
            *forbidden_op_violations(tree, self.forbidden_ops),
            *construct_violations(tree, self.forbidden_constructs),
            *signature_violations(tree, self.signatures),
            *(precision_violations(tree, self.precision) if self.precision else ()),
            *broken,
        ]

    @property
    def fingerprint(self) -> str:
        """A digest of the clauses that decide what is accepted (not the budget or references):
        a run under other constraints is another run."""
        clauses: list[object] = [self.backends, self.precision, self.forbidden_ops, self.signatures]
        # Clauses added later count only when present, so older files keep their run ids.
        if self.space or self.forbidden_constructs or self.properties.deterministic:
            clauses += [self.space.restrictions, self.space.derived, self.forbidden_constructs]
            clauses.append(self.properties.deterministic)
        if self.properties.shape_ranges:
            clauses.append([r.describe() for r in self.properties.shape_ranges])
        if self.properties.memory_ceiling_bytes is not None:
            clauses.append(self.properties.memory_ceiling_bytes)
        text = json.dumps(clauses, default=str, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    def describe(self) -> list[str]:
        """One line per constraint, for reports."""
        lines = [f"Allowed kernel languages: {', '.join(self.backends)}."]
        if self.precision is not None:
            lines.append(f"Precision policy: {self.precision.value}.")
        if self.dtypes is not None:
            lines.append(f"Storage {self.dtypes.storage}, math {self.dtypes.math}.")
        lines += [f"Parameter restriction: `{r}`." for r in self.space.restrictions]
        return lines + self.rules() + self.properties.describe()

    def rules(self) -> list[str]:
        """The source rules as prompt lines (forbidden operations, required signatures)."""
        lines = []
        if self.forbidden_ops:
            lines.append(
                f"Forbidden operations (also as Tensor methods): {', '.join(self.forbidden_ops)}."
            )
        if self.forbidden_constructs:
            lines.append(f"Forbidden constructs: {', '.join(self.forbidden_constructs)}.")
        for name, params in self.signatures:
            lines.append(f"Required signature: `{name}({', '.join(params)})`.")
        return lines

    def check_precision(self, precision: Precision) -> None:
        """Raise when the run's ``precision`` is not the one these constraints require.

        Raises:
            ConfigError: the policies differ (a policy is never changed silently).
        """
        if self.precision is not None and precision is not self.precision:
            where = f" ({self.path})" if self.path else ""
            raise ConfigError(
                f"the constraints{where} require precision = {self.precision.value!r}, but the "
                f"run's policy is {precision.value}; pass --precision {self.precision.value} "
                "(or leave it out) or change the constraints"
            )

    def apply(self, options: EvalOptions) -> EvalOptions:
        """``options`` with these constraints enforced (see :meth:`check_precision`)."""
        self.check_precision(options.precision)
        repeat = options.determinism or self.properties.deterministic
        # Applying twice (bench, then optimize) must not check a range twice
        ranges = tuple(dict.fromkeys(options.shape_ranges + tuple(
            (r.dim, r.low, r.high) for r in self.properties.shape_ranges)))
        ceilings = [c for c in (options.memory_ceiling_bytes,
                                self.properties.memory_ceiling_bytes) if c is not None]
        return dataclasses.replace(options, constraints=self, determinism=repeat,
                                   shape_ranges=ranges,
                                   memory_ceiling_bytes=min(ceilings) if ceilings else None)

    def restrict(self, library: SkillLibrary) -> SkillLibrary:
        """``library`` with the parameter restrictions added to the skills they apply to, so the
        tuning spaces built from it leave out what the restrictions refuse."""
        return restrict_library(library, self.space)

    def limit(self, budget: Budget) -> Budget:
        """``budget`` capped by this file's ``[budget]`` (the tighter of each limit)."""
        from kernelwright.search.controller import Budget

        return Budget(
            candidates=_tighter(budget.candidates, self.candidates),
            minutes=_tighter(budget.minutes, self.minutes),
        )


def _tighter(a: N | None, b: N | None) -> N | None:
    if a is None:
        return b
    return a if b is None else min(a, b)
