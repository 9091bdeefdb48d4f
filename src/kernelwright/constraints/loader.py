"""Read a constraints file (TOML); unknown keys and wrong kinds of values are errors.

references    = ["refs/online_softmax.py"]     # shown to planner and coder (relative paths)
backends      = ["triton"]                     # triton | cuda (load_inline)
precision     = "fp32"                         # fp32 | tf32 | bf16, for candidate and baselines
forbidden_ops = ["torch.matmul", "F.scaled_dot_product_attention"]

[signatures]                                   # exact parameter lists
"ModelNew.forward" = ["self", "x"]

[budget]                                       # candidates, minutes, llm_calls, cost_usd
candidates = 30
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar

from kernelwright.constraints.model import Constraints, Reference
from kernelwright.constraints.source_rules import BACKENDS
from kernelwright.errors import ConfigError
from kernelwright.records import Precision

_TOP_KEYS = frozenset(
    {"references", "backends", "precision", "forbidden_ops", "signatures", "budget"}
)
_BUDGET_KEYS = frozenset({"candidates", "minutes", "llm_calls", "cost_usd"})
N = TypeVar("N", int, float)


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
