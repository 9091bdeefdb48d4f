"""Restriction expressions as SymPy formulas, built from a whitelisted syntax tree.

    formula("BLOCK_M % 64 == 0")              -> Eq(Mod(BLOCK_M, 64), 0)
    formula("shared_bytes <= 96*1024", {"shared_bytes": "(BM * BK + BK * BN) * STAGES * 4"})
                                              -> the derived quantity substituted, then simplified
    equivalent("BLOCK % 64 == 0", "0 == BLOCK % 64")   -> True (same canonical formula)

The text is first checked by :class:`kernelwright.tuning.restrictions.Expression` (numbers,
names, arithmetic, comparisons, ``and / or / not``, ``min / max / abs``); the SymPy formula is
then built node by node from that tree, so nothing the user wrote is ever evaluated or handed to
``sympify``. Evaluation over a space uses the same whitelisted expression, vectorised with NumPy.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

import sympy

from kernelwright.errors import ConfigError
from kernelwright.tuning.restrictions import Expression

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: sympy.floor(a / b),
    ast.Mod: lambda a, b: sympy.Mod(a, b),
    ast.Pow: lambda a, b: a**b,
}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: sympy.Eq,
    ast.NotEq: sympy.Ne,
    ast.Lt: sympy.Lt,
    ast.LtE: sympy.Le,
    ast.Gt: sympy.Gt,
    ast.GtE: sympy.Ge,
}
_FUNCS: dict[str, Callable[..., Any]] = {"min": sympy.Min, "max": sympy.Max, "abs": sympy.Abs}


def formula(text: str, derived: Mapping[str, str] | None = None) -> sympy.Basic:
    """The SymPy formula of a restriction, with derived quantities substituted.

    Args:
        text: a restriction such as ``"BLOCK_M % 64 == 0"``.
        derived: name -> expression of a quantity computed from parameters
            (``shared_bytes``); each is substituted by its own formula.

    Raises:
        ConfigError: the text is not a whitelisted expression.
    """
    Expression.parse(text)  # the whitelist, with its error messages
    tree = ast.parse(text.strip(), mode="eval")
    built = _build(tree.body, text)
    if derived:
        names = {str(s) for s in built.free_symbols}
        table = {
            sympy.Symbol(n, integer=True): formula(e) for n, e in derived.items() if n in names
        }
        built = built.subs(table)
    return built


def canonical(text: str, derived: Mapping[str, str] | None = None) -> str:
    """A printed canonical form: equal strings mean the same formula whatever the spelling."""
    return str(sympy.sstr(sympy.simplify(formula(text, derived)), order="lex"))


def equivalent(a: str, b: str, derived: Mapping[str, str] | None = None) -> bool:
    """Whether two restrictions are the same formula (over all integers, not only a domain)."""
    return canonical(a, derived) == canonical(b, derived)


def expand_derived(text: str, derived: Mapping[str, str]) -> str:
    """``text`` with each derived name replaced by its parenthesised expression, as text the
    tuning space's whitelist accepts (``shared_bytes`` -> ``((BM * BK + ...) * 4)``)."""
    if not derived:
        return text.strip()
    tree = ast.parse(text.strip(), mode="eval")

    class _Substitute(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802 - ast's visitor naming
            if node.id in derived:
                return ast.parse(derived[node.id].strip(), mode="eval").body
            return node

    return ast.unparse(_Substitute().visit(tree))


def _build(node: ast.expr, text: str) -> Any:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return sympy.true if node.value else sympy.false
        if isinstance(node.value, int | float):
            return sympy.nsimplify(node.value)
        raise ConfigError(f"restriction {text!r}: strings cannot take part in a formula")
    if isinstance(node, ast.Name):
        return sympy.Symbol(node.id, integer=True)
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_build(node.left, text), _build(node.right, text))
    if isinstance(node, ast.UnaryOp):
        value = _build(node.operand, text)
        if isinstance(node.op, ast.Not):
            return sympy.Not(value)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BoolOp):
        parts = [_build(v, text) for v in node.values]
        return sympy.And(*parts) if isinstance(node.op, ast.And) else sympy.Or(*parts)
    if isinstance(node, ast.Compare):
        left = _build(node.left, text)
        links = []
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _build(comparator, text)
            links.append(_CMPOPS[type(op)](left, right))
            left = right
        return sympy.And(*links)
    if isinstance(node, ast.IfExp):
        test = _build(node.test, text)
        return sympy.Piecewise((_build(node.body, text), test), (_build(node.orelse, text), True))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _FUNCS[node.func.id](*(_build(a, text) for a in node.args))
    raise ConfigError(f"restriction {text!r}: {type(node).__name__} has no formula")
