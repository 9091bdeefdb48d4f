"""Restrictions on a parameter space, written as Kernel Tuner writes them.

    "MWG % (MDIMC * VWM) == 0"                      divisibility
    "32 <= block_size_x * block_size_y <= 1024"     threads per block (chained comparison)
    "use_shmem == 0 or (bx * tx + 14) * (by * ty + 14) < 12 * 1024"   a shared-memory budget

An expression is parsed with :mod:`ast` and checked against a whitelist before anything runs:
only numbers, strings, the space's parameter names, arithmetic (``+ - * / // % **``), comparisons,
``and / or / not``, ``x if c else y`` and the functions ``min``, ``max``, ``abs`` are allowed.
Nothing is ever passed to ``eval``. Evaluation is vectorised: every name is bound to a NumPy array
of one value per config, so a restriction filters a whole Cartesian product in one pass.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kernelwright.errors import ConfigError

Array = npt.NDArray[Any]

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_FUNCS: dict[str, Callable[..., Any]] = {
    "min": lambda *a: np.minimum.reduce(np.broadcast_arrays(*a)),
    "max": lambda *a: np.maximum.reduce(np.broadcast_arrays(*a)),
    "abs": np.abs,
}


@dataclass(frozen=True, slots=True)
class Expression:
    """A checked arithmetic/boolean expression over parameter names.

    Attributes:
        text: the source text, as the user wrote it.
        names: the parameter names it reads, in order of first use.
    """

    text: str
    names: tuple[str, ...]

    @classmethod
    def parse(cls, text: str, allowed: frozenset[str] | None = None) -> Expression:
        """Parse and whitelist-check ``text``.

        Args:
            text: a Python-syntax expression such as ``"MWG % (MDIMC * VWM) == 0"``.
            allowed: the names it may read (the space's parameters); ``None`` accepts any name.

        Raises:
            ConfigError: a syntax error, a construct outside the whitelist, or an unknown name.
        """
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            raise ConfigError(f"restriction {text!r} is not an expression: {exc.msg}") from exc
        names: list[str] = []
        for node in ast.walk(tree):
            _check_node(node, text)
            if isinstance(node, ast.Name) and node.id not in _FUNCS and node.id not in names:
                names.append(node.id)
        if allowed is not None:
            unknown = [n for n in names if n not in allowed]
            if unknown:
                raise ConfigError(
                    f"restriction {text!r} reads {unknown}, which are not parameters of the space "
                    f"(known: {sorted(allowed)})"
                )
        return cls(text=text.strip(), names=tuple(names))

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """Evaluate with each name bound to a scalar or to a NumPy array (one value per config)."""
        tree = ast.parse(self.text, mode="eval")
        with np.errstate(divide="ignore", invalid="ignore"):
            return _eval(tree.body, env)

    def __str__(self) -> str:
        return self.text


def _check_node(node: ast.AST, text: str) -> None:
    allowed = (
        ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
        ast.BinOp, ast.Compare, ast.IfExp, ast.Name, ast.Load, ast.Constant, ast.Call,
        *_BINOPS, *_CMPOPS,
    )  # fmt: skip
    if not isinstance(node, allowed):
        raise ConfigError(
            f"restriction {text!r} uses {type(node).__name__}, which is not allowed "
            "(allowed: arithmetic, comparisons, and/or/not, if-else, min/max/abs)"
        )
    if isinstance(node, ast.Constant) and not isinstance(node.value, int | float | str | bool):
        raise ConfigError(
            f"restriction {text!r}: constant {node.value!r} is not a number or string"
        )
    if isinstance(node, ast.Call) and not (
        isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords
    ):
        raise ConfigError(f"restriction {text!r}: only min(), max() and abs() may be called")


def _eval(node: ast.expr, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ConfigError(f"restriction reads {node.id!r}, which has no value")
        return env[node.id]
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, env), _eval(node.right, env)
        if isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod):
            # Division by zero gives nan/inf under np.errstate; plain ints need arrays for that.
            left, right = np.asarray(left), np.asarray(right)
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return np.logical_not(value)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BoolOp):
        values = [np.asarray(_eval(v, env), dtype=bool) for v in node.values]
        combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        acc = values[0]
        for v in values[1:]:
            acc = combine(acc, v)
        return acc
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        out: Any = True
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, env)
            out = np.logical_and(out, _CMPOPS[type(op)](left, right))
            left = right
        return out
    if isinstance(node, ast.IfExp):
        return np.where(_eval(node.test, env), _eval(node.body, env), _eval(node.orelse, env))
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        return _FUNCS[node.func.id](*(_eval(a, env) for a in node.args))
    raise ConfigError(f"cannot evaluate {ast.dump(node)}")  # unreachable after _check_node


def satisfied(restrictions: tuple[Expression, ...], columns: Mapping[str, Array]) -> Array:
    """Which configs satisfy every restriction.

    Args:
        restrictions: parsed expressions.
        columns: name -> `(N,)` array of values, one entry per config.

    Returns:
        `(N,)` bool mask. A restriction that evaluates to nan (``x % 0``) counts as violated.
    """
    n = len(next(iter(columns.values()))) if columns else 0
    mask = np.ones(n, dtype=bool)
    for expr in restrictions:
        value = np.asarray(expr.evaluate(columns))
        if value.dtype != bool:
            with np.errstate(invalid="ignore"):
                value = np.nan_to_num(value.astype(float), nan=0.0) != 0
        mask &= np.broadcast_to(value, (n,))
    return mask
