"""Skills are data: an expert move, when it is valid, what it is expected to gain, what it costs.

    Skill
      id, intent, applies_to (group kind), variant (the template it drives), template
      conditions   [Condition(check, args)]: each returns Ok(reason) or Fail(reason)
      expected_gain                          ranking prior (speed-up over eager where it applies)
      pitfalls                               what goes wrong, for the report and the reader
      params       {NAME: Param(values, kind)} the tunable knobs, with constraints; a knob
                   the template clamps to a shape names it (``extent``), so designs that
                   differ only beyond the clamp are known to be one kernel before any runs
      defaults     name of a heuristic giving shape-aware default values
      modifies     for modifier skills (online softmax, Welford): the variants they refine
      relieves     the hardware diagnoses (``hardware.diagnose`` kinds) the skill answers:
                   a profile showing one ranks the skill higher

Skills live in TOML files beside their kernel family (``kernelwright/design/families/<family>/
skills/*.toml``); the parser is the standard library's ``tomllib``. Conditions are named checks
(``kernelwright.skills.conditions``) so a skill file states them declaratively and the report
can say why each one held or failed.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kernelwright.errors import ConfigError

# The group quantities a parameter's ``extent`` may name (attributes of ``GroupFacts``).
EXTENTS = ("numel", "reduced_length", "parallel_length", "inner_length")


@dataclass(frozen=True, slots=True)
class Outcome:
    """A condition's verdict with its reason (``Ok("row 100 <= 16384")``)."""

    ok: bool
    reason: str

    def __bool__(self) -> bool:
        return self.ok


def Ok(reason: str) -> Outcome:  # noqa: N802 - reads like a constructor on purpose
    """A condition that holds, and why."""
    return Outcome(True, reason)


def Fail(reason: str) -> Outcome:  # noqa: N802
    """A condition that fails, and why."""
    return Outcome(False, reason)


@dataclass(frozen=True, slots=True)
class Condition:
    """A named check with its arguments (``reduced_length_at_most(limit=16384)``)."""

    check: str
    args: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """``check(limit=16384)``."""
        inner = ", ".join(f"{k}={v}" for k, v in self.args.items())
        return f"{self.check}({inner})"


@dataclass(frozen=True, slots=True)
class Param:
    """A tunable parameter: its candidate values (in order) and how they relate."""

    name: str
    values: tuple[int, ...]
    kind: str = "pow2"  # pow2 | int | categorical
    tune: bool = False  # stage 2 searches it (others keep their default)
    # The group quantity (a ``GroupFacts`` attribute: numel, reduced_length, parallel_length,
    # inner_length) whose next power of two the template clamps this value to; empty: none.
    extent: str = ""
    # For a knob that trades accuracy for speed (3xTF32 or IEEE fp32 products, TF32 scores):
    # the value whose arithmetic is closest to the reference's own. A design the harness
    # refuses as incorrect is proposed again with its knobs at these values
    # (``search.templates``); None: the knob does not change what is computed.
    accurate: int | None = None


@dataclass(frozen=True, slots=True)
class Skill:
    """One expert skill (see the module docstring)."""

    id: str
    intent: str
    applies_to: str
    variant: str
    template: str
    expected_gain: float
    conditions: tuple[Condition, ...] = ()
    pitfalls: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    constraints: tuple[str, ...] = ()
    defaults: str = ""
    modifies: tuple[str, ...] = ()
    source: str = ""
    # what the skill relieves, in the words of the hardware diagnoses (``hardware.diagnose``):
    # a profile showing one of these limits ranks the skill higher
    relieves: tuple[str, ...] = ()

    @property
    def is_modifier(self) -> bool:
        """A skill that refines another skill's variant instead of choosing one."""
        return bool(self.modifies)

    def param(self, name: str) -> Param:
        """The parameter called ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"skill {self.id} has no parameter {name}")

    def satisfies(self, params: Mapping[str, int]) -> bool:
        """Whether ``params`` meet every constraint expression."""
        return all(evaluate_constraint(c, params) for c in self.constraints)


def skill_from_dict(data: Mapping[str, Any], source: str = "") -> Skill:
    """Build a skill from a parsed TOML table.

    Raises:
        ConfigError: a required key is missing or malformed.
    """
    for key in ("id", "intent", "applies_to", "variant", "expected_gain"):
        if key not in data:
            raise ConfigError(f"skill file {source or '?'} lacks the key {key!r}")
    params = []
    for name, spec in (data.get("params") or {}).items():
        values = tuple(int(v) for v in spec.get("values", ()))
        if not values:
            raise ConfigError(f"skill {data['id']}: parameter {name} has no values")
        extent = str(spec.get("extent", ""))
        if extent and extent not in EXTENTS:
            raise ConfigError(
                f"skill {data['id']}: parameter {name} has extent {extent!r}; "
                f"expected one of {', '.join(EXTENTS)}"
            )
        accurate = spec.get("accurate")
        if accurate is not None and int(accurate) not in values:
            raise ConfigError(
                f"skill {data['id']}: parameter {name} has accurate = {accurate}, "
                f"not one of its values {list(values)}"
            )
        params.append(
            Param(
                name,
                values,
                str(spec.get("kind", "pow2")),
                bool(spec.get("tune", False)),
                extent,
                None if accurate is None else int(accurate),
            )
        )
    conditions = tuple(
        Condition(str(c["check"]), {k: v for k, v in c.items() if k != "check"})
        for c in data.get("conditions", ())
    )
    from kernelwright.hardware.diagnose import KINDS

    relieves = tuple(str(k) for k in data.get("relieves", ()))
    unknown = [k for k in relieves if k not in KINDS]
    if unknown:
        raise ConfigError(
            f"skill {data['id']}: relieves {', '.join(unknown)}; the diagnoses are "
            f"{', '.join(KINDS)}")
    return Skill(
        id=str(data["id"]),
        intent=str(data["intent"]),
        applies_to=str(data["applies_to"]),
        variant=str(data["variant"]),
        template=str(data.get("template", "")),
        expected_gain=float(data["expected_gain"]),
        conditions=conditions,
        pitfalls=tuple(str(p) for p in data.get("pitfalls", ())),
        params=tuple(params),
        constraints=tuple(str(c) for c in data.get("constraints", ())),
        defaults=str(data.get("defaults", "")),
        modifies=tuple(str(m) for m in data.get("modifies", ())),
        source=source,
        relieves=relieves,
    )


_OPS: dict[type, Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def evaluate_constraint(expr: str, names: Mapping[str, int]) -> bool:
    """Evaluate ``"BLOCK_M * BLOCK_N <= 65536"`` over ``names`` (arithmetic and comparisons
    only; an unknown name makes the constraint vacuous)."""

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise KeyError(node.id)
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            for op, right in zip(node.ops, node.comparators, strict=True):
                r = ev(right)
                if not _OPS[type(op)](left, r):
                    return False
                left = r
            return True
        if isinstance(node, ast.BoolOp):
            vals = [ev(v) for v in node.values]
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        raise ConfigError(f"constraint {expr!r}: only arithmetic and comparisons are allowed")

    try:
        return bool(ev(ast.parse(expr, mode="eval")))
    except KeyError:
        return True
