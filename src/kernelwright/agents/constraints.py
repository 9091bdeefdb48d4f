"""Human constraints: a TOML file the harness enforces on every candidate's source.

    references    = ["refs/online_softmax.py"]     # shown to planner and coder (relative paths)
    backends      = ["triton"]                     # triton | cuda (load_inline)
    precision     = "fp32"                         # fp32 | tf32 | bf16, for candidate and baselines
    forbidden_ops = ["torch.matmul", "F.scaled_dot_product_attention"]

    [signatures]                                   # exact parameter lists
    "ModelNew.forward" = ["self", "x"]

    [budget]                                       # candidates, minutes, llm_calls, cost_usd
    candidates = 30

``Constraints.violations(source)`` is what ``EvalOptions.constraints`` calls: each violation
rejects the candidate before it runs, named ``constraint-backend``, ``constraint-forbidden-op``
or ``constraint-signature``. The rules themselves live in :mod:`kernelwright.agents.source_rules`.
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kernelwright.agents.context import Reference
from kernelwright.agents.source_rules import (
    BACKENDS,
    backend_violations,
    forbidden_op_violations,
    parse_or_none,
    signature_violations,
)
from kernelwright.errors import ConfigError
from kernelwright.records import Precision, Violation

if TYPE_CHECKING:
    from kernelwright.evaluate.options import EvalOptions
    from kernelwright.search.controller import Budget

_TOP_KEYS = frozenset(
    {"references", "backends", "precision", "forbidden_ops", "signatures", "budget"}
)
_BUDGET_KEYS = frozenset({"candidates", "minutes", "llm_calls", "cost_usd"})
N = TypeVar("N", int, float)


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

    def violations(self, source: str) -> Sequence[Violation]:
        """What in ``source`` breaks these constraints (empty when it complies)."""
        tree = parse_or_none(source)
        if tree is None:
            return []  # the harness reports the syntax error itself
        return [
            *backend_violations(tree, self.backends),
            *forbidden_op_violations(tree, self.forbidden_ops),
            *signature_violations(tree, self.signatures),
        ]

    def describe(self) -> list[str]:
        """One line per constraint, for reports."""
        lines = [f"Allowed kernel languages: {', '.join(self.backends)}."]
        if self.precision is not None:
            lines.append(f"Precision policy: {self.precision.value}.")
        return lines + self.rules()

    def rules(self) -> list[str]:
        """The source rules as prompt lines (forbidden operations, required signatures)."""
        lines = []
        if self.forbidden_ops:
            lines.append(
                f"Forbidden operations (also as Tensor methods): {', '.join(self.forbidden_ops)}."
            )
        for name, params in self.signatures:
            lines.append(f"Required signature: `{name}({', '.join(params)})`.")
        return lines

    def apply(self, options: EvalOptions) -> EvalOptions:
        """``options`` with these constraints enforced and their precision policy, if any."""
        return dataclasses.replace(
            options, constraints=self, precision=self.precision or options.precision
        )

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


def load_constraints(path: str | Path) -> Constraints:
    """Read a constraints file (TOML, see the module docstring).

    Raises:
        ConfigError: unreadable file, unknown key, or a value of the wrong kind.
    """
    file = Path(path).expanduser()
    try:
        data = tomllib.loads(file.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read the constraints file ({exc})") from exc
    where = str(file)
    _known(data, _TOP_KEYS, where)
    budget = _table(data, "budget", where)
    _known(budget, _BUDGET_KEYS, f"{where} [budget]")
    signatures = _table(data, "signatures", where)
    backends = tuple(_strings(data, "backends", where) or BACKENDS)
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        raise ConfigError(f"{where}: backends {unknown} unknown; use {list(BACKENDS)}")
    precision = data.get("precision")
    try:
        policy = Precision(precision) if precision is not None else None
    except ValueError:
        raise ConfigError(
            f"{where}: precision {precision!r} unknown; use one of "
            f"{', '.join(p.value for p in Precision)}"
        ) from None
    return Constraints(
        backends=backends,
        precision=policy,
        forbidden_ops=tuple(_strings(data, "forbidden_ops", where)),
        signatures=tuple(
            (name, tuple(_strings(signatures, name, f"{where} [signatures]")))
            for name in signatures
        ),
        candidates=_number(budget, "candidates", where, int),
        minutes=_number(budget, "minutes", where, float),
        llm_calls=_number(budget, "llm_calls", where, int),
        cost_usd=_number(budget, "cost_usd", where, float),
        references=tuple(
            _reference(file.parent / p, where) for p in _strings(data, "references", where)
        ),
        path=where,
    )


def _known(table: dict[str, Any], keys: frozenset[str], where: str) -> None:
    unknown = sorted(set(table) - keys)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; known: {sorted(keys)}")


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {key} must be a table ([{key}])")
    return value


def _strings(data: dict[str, Any], key: str, where: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'{where}: {key} must be a list of strings, e.g. {key} = ["..."]')
    return list(value)


def _number(data: dict[str, Any], key: str, where: str, kind: type[N]) -> N | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where}: [budget] {key} must be a positive number, got {value!r}")
    if kind is int and not isinstance(value, int):
        raise ConfigError(f"{where}: [budget] {key} must be a whole number, got {value!r}")
    return kind(value)


def _reference(path: Path, where: str) -> Reference:
    try:
        return Reference(title=path.name, source=path.read_text())
    except OSError as exc:
        raise ConfigError(f"{where}: reference {path} cannot be read ({exc})") from exc
