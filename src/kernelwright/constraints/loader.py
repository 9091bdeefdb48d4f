"""Read a constraints file (TOML); unknown keys and wrong kinds of values are errors.

references    = ["refs/online_softmax.py"]     # shown to planner and coder (relative paths)
backends      = ["triton"]                     # triton | cuda (load_inline)
precision     = "fp32"                         # fp32 | tf32 | bf16, for candidate and baselines
forbidden_ops = ["torch.matmul", "F.scaled_dot_product_attention"]
forbidden_constructs = ["atomics"]             # atomics | inline_asm

[signatures]                                   # exact parameter lists
"ModelNew.forward" = ["self", "x"]

[budget]                                       # candidates, minutes, llm_calls, cost_usd
candidates = 30

[dtypes]                                       # storage and math; must agree with precision
storage = "fp32"                               # (bf16 storage with fp32 math is "bf16")
math = "fp32"

[space]                                        # restrictions on kernel parameters
restrictions = ["BLOCK_M % 64 == 0", "shared_bytes <= 98304"]
derived = { shared_bytes = "(BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * STAGES * 4" }
domains = { BLOCK = [16, 32, 64, 128] }        # names the skill library does not know

[properties]                                   # the memory ceiling: checked on a GPU
deterministic = true
memory_ceiling_bytes = 1073741824
shape_ranges = [{ dim = "batch", low = 1, high = 4096 }]
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar

from kernelwright.constraints.constructs import check_constructs
from kernelwright.constraints.model import Constraints, Reference
from kernelwright.constraints.properties import DTYPES, DtypePolicy, Properties, ShapeRange
from kernelwright.constraints.source_rules import BACKENDS
from kernelwright.constraints.space_rules import SpaceRules
from kernelwright.errors import ConfigError
from kernelwright.records import Precision

_TOP_KEYS = frozenset(
    {
        "references", "backends", "precision", "forbidden_ops", "signatures", "budget",
        "forbidden_constructs", "dtypes", "space", "properties",
    }
)  # fmt: skip
_BUDGET_KEYS = frozenset({"candidates", "minutes", "llm_calls", "cost_usd"})
_SPACE_KEYS = frozenset({"restrictions", "derived", "domains"})
_PROPERTY_KEYS = frozenset({"deterministic", "memory_ceiling_bytes", "shape_ranges"})
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
    dtypes = _dtypes(data, where)
    if dtypes is not None and policy is None:
        policy = dtypes.precision
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
        space=_space(data, where),
        forbidden_constructs=_constructs(data, where),
        properties=_properties(data, where),
        dtypes=dtypes,
    )


def _constructs(data: dict[str, Any], where: str) -> tuple[str, ...]:
    try:
        return check_constructs(_strings(data, "forbidden_constructs", where))
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _dtypes(data: dict[str, Any], where: str) -> DtypePolicy | None:
    table = _table(data, "dtypes", where)
    if not table:
        return None
    _known(table, frozenset({"storage", "math"}), f"{where} [dtypes]")
    values = {k: table.get(k) for k in ("storage", "math")}
    for key, value in values.items():
        if value not in DTYPES:
            raise ConfigError(f"{where}: [dtypes] {key} = {value!r}; use one of {list(DTYPES)}")
    dtypes = DtypePolicy(str(values["storage"]), str(values["math"]))
    try:
        dtypes.precision  # noqa: B018 - raises for a pair with no policy
    except ConfigError as exc:
        raise ConfigError(f"{where}: [dtypes] {exc}") from None
    return dtypes


def _space(data: dict[str, Any], where: str) -> SpaceRules:
    table = _table(data, "space", where)
    here = f"{where} [space]"
    _known(table, _SPACE_KEYS, here)
    derived = _table(table, "derived", here)
    domains = _table(table, "domains", here)
    for name, values in domains.items():
        if not isinstance(values, list) or not values or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in values
        ):
            raise ConfigError(f"{here}: domains.{name} must be a non-empty list of integers")
    try:
        return SpaceRules(
            restrictions=tuple(_strings(table, "restrictions", here)),
            derived=tuple((name, str(expr)) for name, expr in derived.items()),
            domains=tuple((name, tuple(sorted(set(v)))) for name, v in domains.items()),
        )
    except ConfigError as exc:
        raise ConfigError(f"{here}: {exc}") from None


def _properties(data: dict[str, Any], where: str) -> Properties:
    table = _table(data, "properties", where)
    here = f"{where} [properties]"
    _known(table, _PROPERTY_KEYS, here)
    deterministic = table.get("deterministic", False)
    if not isinstance(deterministic, bool):
        raise ConfigError(f"{here}: deterministic must be true or false")
    ceiling = table.get("memory_ceiling_bytes")
    if ceiling is not None and (isinstance(ceiling, bool) or not isinstance(ceiling, int)
                                or ceiling <= 0):  # fmt: skip
        raise ConfigError(f"{here}: memory_ceiling_bytes must be a positive whole number")
    ranges = table.get("shape_ranges", [])
    if not isinstance(ranges, list) or not all(isinstance(r, dict) for r in ranges):
        raise ConfigError(f'{here}: shape_ranges must be a list of {{ dim = "batch", low, high }}')
    shapes = []
    for r in ranges:
        _known(r, frozenset({"dim", "low", "high"}), f"{here} shape_ranges")
        dim, low, high = r.get("dim"), r.get("low"), r.get("high")
        if not isinstance(dim, str) or not isinstance(low, int) or not isinstance(high, int):
            raise ConfigError(f"{here}: a shape range needs dim (text), low and high (integers)")
        shapes.append(ShapeRange(dim, low, high))
    return Properties(deterministic, tuple(shapes), ceiling)


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
