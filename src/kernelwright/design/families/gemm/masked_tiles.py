"""Output tiles whose every value an epilogue's position mask replaces: their product is skipped.

    torch.triu(A @ B, k)              where(cols - rows >= k, acc, 0)
    torch.tril(A @ B, k)              where(cols - rows <= k, acc, 0)
    (A @ B).masked_fill(mask, v)      where the mask compares ranges (``arange``) of positions

A comparison of an affine function of the output's row, column and batch indices with zero holds
somewhere in a rectangle of positions exactly when it holds at the corner that extremises the
function (an affine function takes its extremes over a rectangle at its corners; the corner is
chosen by each coefficient's sign). Where every output of the group reads the product only
through ``where``s gated by such comparisons, a tile in which no gate can pass needs no product:
its K loop is skipped, its accumulator stays zero and is never read (the gates select the other
branch everywhere in it, NaN and infinities included). An upper or lower triangle of a square
product so skips about half of the tiles.

The test is over the whole tile, edge tiles included (positions past M or N only widen the
rectangle, so a skipped tile is always one the gates reject entirely).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kernelwright.design.aten import classify, index_range
from kernelwright.design.fusion import Group
from kernelwright.design.graph import Arg, Node, OpGraph, Ref

# a comparison ``lhs OP rhs`` read as ``lhs - rhs OP 0``
COMPARISONS = {
    "aten.ge.Scalar": ">=",
    "aten.ge.Tensor": ">=",
    "aten.gt.Scalar": ">",
    "aten.gt.Tensor": ">",
    "aten.le.Scalar": "<=",
    "aten.le.Tensor": "<=",
    "aten.lt.Scalar": "<",
    "aten.lt.Tensor": "<",
}
NEGATED = {">=": "<", ">": "<=", "<=": ">", "<": ">="}
# views that only add, drop or broadcast dimensions: each element keeps its index along the
# dimension it lies on (a reshape could renumber them)
ADDING_VIEWS = frozenset(
    {
        "aten.unsqueeze.default",
        "aten.squeeze.dim",
        "aten.squeeze.dims",
        "aten.squeeze.default",
        "aten.expand.default",
        "aten.alias.default",
    }
)


@dataclass(frozen=True)
class Affine:
    """``const + sum(coef * index along axis)``, over the group's domain dimensions."""

    coef: tuple[tuple[int, int], ...]  # (domain dimension, coefficient), sorted, none zero
    const: int

    @staticmethod
    def of(coef: Mapping[int, int], const: int) -> Affine:
        return Affine(tuple(sorted((a, c) for a, c in coef.items() if c)), const)

    def plus(self, other: Affine, sign: int = 1) -> Affine:
        total = dict(self.coef)
        for a, c in other.coef:
            total[a] = total.get(a, 0) + sign * c
        return Affine.of(total, self.const + sign * other.const)

    def times(self, k: int) -> Affine:
        return Affine.of({a: c * k for a, c in self.coef}, self.const * k)


@dataclass(frozen=True)
class Gate:
    """A position test a value passes through: the product reaches the outputs only where
    ``affine OP 0`` holds."""

    affine: Affine
    op: str


def product_gates(graph: OpGraph, group: Group, product: str) -> tuple[Gate, ...] | None:
    """The gates through which every output of ``group`` reads ``product``; None when some
    output reads it ungated (or through a gate that is no position test)."""
    positions = _Positions(graph, group)
    reads: set[str] = {product}
    for name in group.nodes:
        if any(r in reads for r in graph.node(name).refs()):
            reads.add(name)
    gates: list[Gate] = []
    seen: dict[str, bool] = {}

    def gated(name: str) -> bool:
        """Whether ``name`` reads the product only through gates (collected in ``gates``)."""
        if name not in reads:
            return True
        if name == product or name not in positions.members:
            return False
        if name not in seen:
            gate = positions.where_gate(graph.node(name), reads)
            if gate is not None:
                gates.append(gate)  # the gated branch's own value need not be gated
                seen[name] = True
            else:
                seen[name] = all(gated(r) for r in graph.node(name).refs())
        return seen[name]

    if not all(gated(out) for out in group.outputs):
        return None
    return tuple(dict.fromkeys(gates)) or None


def tile_live_test(
    graph: OpGraph, group: Group, product: str, corners: Mapping[int, tuple[str, str]]
) -> str | None:
    """A Triton expression that is false only for a tile in which no gate of the product can
    pass; None when some output reads the product ungated. ``corners`` maps each domain
    dimension of the tile to the expressions of its first and last index (the same expression
    twice for a dimension a program holds one index of, as a batch entry)."""
    gates = product_gates(graph, group, product)
    if gates is None:
        return None
    tests = []
    for gate in gates:
        if any(a not in corners for a, _ in gate.affine.coef):
            return None  # a dimension the tile does not bound
        want_max = gate.op in (">=", ">")  # the test can pass if the extreme passes
        at = [(c, corners[a][1] if (c > 0) == want_max else corners[a][0])
              for a, c in gate.affine.coef]
        tests.append(f"({_linear(at, gate.affine.const)} {gate.op} 0)")
    return " | ".join(tests)


def _linear(terms: list[tuple[int, str]], const: int) -> str:
    """``c1 * (x1) + c2 * (x2) ... + const`` written plainly (``-(x)``, no ``1 *``, no ``+ 0``)."""
    text = ""
    for c, x in terms:
        term = f"({x})" if abs(c) == 1 else f"{abs(c)} * ({x})"
        text += ("-" if c < 0 else "") + term if not text else (" - " if c < 0 else " + ") + term
    if const or not text:
        text += str(const) if not text else f" - {-const}" if const < 0 else f" + {const}"
    return text


class _Positions:
    """Reads a group's values as functions of the positions of its domain."""

    def __init__(self, graph: OpGraph, group: Group) -> None:
        assert group.layout is not None
        self.graph, self.layout = graph, group.layout
        self.members = set(group.nodes)

    def where_gate(self, node: Node, reads: set[str]) -> Gate | None:
        """The gate of ``where(test, value, other)`` or ``masked_fill(value, test, other)``
        whose test is a position comparison and whose other branch does not read the product
        (``reads``: the values that do)."""
        if node.target == "aten.where.self" and len(node.args) == 3:
            test, a, b = node.args
            if _reads(a, reads) == _reads(b, reads):
                return None
            passes_when = _reads(a, reads)  # the product in the true branch, or the false one
        elif node.target == "aten.masked_fill.Scalar" and len(node.args) == 3:
            value, test, _ = node.args
            if not _reads(value, reads):
                return None
            passes_when = False  # filled where the test holds
        else:
            return None
        if not isinstance(test, Ref) or test.name in reads:
            return None
        compared = self.comparison(test)
        if compared is None:
            return None
        affine, op = compared
        return Gate(affine, op if passes_when else NEGATED[op])

    def comparison(self, a: Ref) -> tuple[Affine, str] | None:
        """``(lhs - rhs, OP)`` for ``a = lhs OP rhs`` with both sides affine in positions."""
        if a.name not in self.members:
            return None
        node = self.graph.node(a.name)
        op = COMPARISONS.get(node.target)
        if op is None or len(node.args) != 2:
            return None
        lhs, rhs = (self.affine(x) for x in node.args)
        if lhs is None or rhs is None:
            return None
        return lhs.plus(rhs, -1), op

    def affine(self, a: Arg) -> Affine | None:
        """The value ``a`` as an affine function of the domain's indices (integers only)."""
        if type(a) is int:
            return Affine.of({}, a)
        if not isinstance(a, Ref) or a.name not in self.members:
            return None  # a float, a tensor read from memory, a value of another kernel
        node = self.graph.node(a.name)
        if classify(node) == "index":
            found = index_range(node)
            assert found is not None
            start, step = found
            (d,) = self.layout.axes[node.name]
            return Affine.of({} if d is None else {d: step}, start)
        if node.target in ADDING_VIEWS:
            return self.affine(node.args[0])  # the same values, broadcast
        args = [self.affine(x) for x in node.args[:2]]
        if node.target in ("aten.add.Tensor", "aten.sub.Tensor", "aten.add.Scalar",
                           "aten.sub.Scalar"):
            alpha = node.args[2] if len(node.args) > 2 else node.kwarg("alpha", 1)
            x, y = args
            if x is None or y is None or type(alpha) is not int:
                return None
            return x.plus(y.times(alpha), 1 if "add" in node.target else -1)
        if node.target in ("aten.mul.Tensor", "aten.mul.Scalar"):
            x, y = args
            if x is None or y is None or (x.coef and y.coef):
                return None
            return x.times(y.const) if not y.coef else y.times(x.const)
        if node.target == "aten.neg.default" and args[0] is not None:
            return args[0].times(-1)
        return None


def _reads(a: Arg, reads: set[str]) -> bool:
    return isinstance(a, Ref) and a.name in reads
