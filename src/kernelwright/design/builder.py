"""Building lowered graphs: fresh node names, a rename map, and the metadata of new values.

``Builder`` is what every lowering rule writes through: ``emit`` appends a call node with its
``TensorMeta`` (contiguous, shapes as symbolic expressions plus concrete hints), ``reduce``,
``unary``, ``binary`` and ``view`` build the common primitives, and ``alias`` maps the old
node's value to its replacement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kernelwright.design.graph import Arg, Node, OpGraph, Ref, TensorMeta


def contiguous_strides(hint: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides for sizes ``hint``."""
    strides: list[int] = []
    acc = 1
    for s in reversed(hint):
        strides.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(strides))


def fresh_name(taken: set[str], base: str) -> str:
    """``base``, or ``base`` with underscores added, unused in ``taken`` (then taken)."""
    while base in taken:
        base += "_"
    taken.add(base)
    return base


def meta_like(m: TensorMeta, dtype: str | None = None) -> TensorMeta:
    """Same shape, contiguous, optionally another dtype."""
    return TensorMeta(m.shape, m.hint, contiguous_strides(m.hint), dtype or m.dtype)


def meta_reduced(
    m: TensorMeta, dims: Sequence[int], keepdim: bool, dtype: str | None = None
) -> TensorMeta:
    """The result of reducing ``dims`` of ``m``."""
    dset = {d % m.rank for d in dims} if dims else set(range(m.rank))
    shape: list[str] = []
    hint: list[int] = []
    for i, (s, h) in enumerate(zip(m.shape, m.hint, strict=True)):
        if i in dset:
            if keepdim:
                shape.append("1")
                hint.append(1)
        else:
            shape.append(s)
            hint.append(h)
    return TensorMeta(tuple(shape), tuple(hint), contiguous_strides(hint), dtype or m.dtype)


def meta_swapped(m: TensorMeta) -> TensorMeta:
    """The metadata of ``m`` with its last two dimensions exchanged (a view: strides follow)."""
    order = list(range(m.rank - 2)) + [m.rank - 1, m.rank - 2]
    return TensorMeta(
        tuple(m.shape[d] for d in order),
        tuple(m.hint[d] for d in order),
        tuple(m.strides[d] for d in order),
        m.dtype,
    )


def meta_shape(shape: Sequence[str], hint: Sequence[int], dtype: str) -> TensorMeta:
    """A contiguous tensor of the given sizes."""
    return TensorMeta(tuple(shape), tuple(hint), contiguous_strides(hint), dtype)


class Builder:
    """Accumulates the rewritten node list, with fresh names and a rename map."""

    def __init__(self, graph: OpGraph) -> None:
        self.graph = graph
        self.nodes: list[Node] = []
        self.taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
        self.alias: dict[str, Arg] = {}  # old value name -> its replacement
        self.metas: dict[str, TensorMeta] = {i.name: i.meta for i in graph.inputs if i.meta}
        # user-input dimensions a rule computed a literal from (the graph's ``held`` gains them)
        self.held: list[tuple[str, int]] = []

    def fresh(self, base: str) -> str:
        """An unused node name starting with ``base``."""
        name, k = base, 1
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name

    def emit(
        self,
        base: str,
        target: str,
        args: tuple[Arg, ...],
        meta: TensorMeta,
        kwargs: tuple[tuple[str, Arg], ...] = (),
    ) -> Ref:
        """Append a call node; returns a reference to it."""
        name = self.fresh(base)
        self.nodes.append(Node(name, "call", target, args, kwargs, (meta,)))
        self.metas[name] = meta
        return Ref(name)

    def sym_size(self, value: Ref, dim: int) -> Ref:
        """A ``sym_size`` node reading dimension ``dim`` of ``value``."""
        name = self.fresh(f"size_{value.name}_{dim}")
        meta = self.meta(value)
        self.nodes.append(
            Node(name, "sym", "aten.sym_size.int", (value, dim), (), (), meta.shape[dim])
        )
        return Ref(name)

    def meta(self, value: Arg) -> TensorMeta:
        """Metadata of a tensor value."""
        assert isinstance(value, Ref), value
        return self.metas[value.name]

    def remap(self, a: Arg) -> Arg:
        """Apply the rename map to an argument."""
        if isinstance(a, Ref):
            return self.alias.get(a.name, a)
        if isinstance(a, tuple):
            return tuple(self.remap(x) for x in a)
        return a

    def keep(self, node: Node) -> None:
        """Copy ``node`` with remapped arguments."""
        new = replace(
            node,
            args=tuple(self.remap(a) for a in node.args),
            kwargs=tuple((k, self.remap(v)) for k, v in node.kwargs),
        )
        self.nodes.append(new)
        if node.meta:
            self.metas[node.name] = node.meta[0]

    # -- helpers for common primitive chains ---------------------------------------------------

    def unary(self, base: str, op: str, x: Arg) -> Ref:
        """``aten.<op>.default(x)``, same shape."""
        return self.emit(base, f"aten.{op}.default", (x,), meta_like(self.meta(x)))

    def binary(self, base: str, op: str, a: Arg, b: Arg) -> Ref:
        """``aten.<op>.Tensor(a, b)`` with broadcasting (b may be a Python number)."""
        ma = self.meta(a) if isinstance(a, Ref) else None
        mb = self.meta(b) if isinstance(b, Ref) else None
        meta = broadcast_meta(ma, mb)
        return self.emit(base, f"aten.{op}.Tensor", (a, b), meta)

    def reduce(self, base: str, op: str, x: Arg, dims: Sequence[int], keepdim: bool = True) -> Ref:
        """``amax``/``amin``/``sum``/``mean`` over ``dims``."""
        m = self.meta(x)
        dims_t = tuple(d % m.rank for d in dims)
        target = {
            "sum": "aten.sum.dim_IntList",
            "mean": "aten.mean.dim",
            "amax": "aten.amax.default",
            "amin": "aten.amin.default",
        }[op]
        return self.emit(base, target, (x, dims_t, keepdim), meta_reduced(m, dims_t, keepdim))

    def view(
        self, base: str, x: Arg, sizes: tuple[Arg, ...], shape: Sequence[str], hint: Sequence[int]
    ) -> Ref:
        """``aten.view.default(x, sizes)`` (a free view, executed by PyTorch)."""
        meta = meta_shape(shape, hint, self.meta(x).dtype)
        return self.emit(base, "aten.view.default", (x, sizes), meta)


def broadcast_meta(a: TensorMeta | None, b: TensorMeta | None) -> TensorMeta:
    """The broadcast result of two tensors (either may be a Python scalar: None)."""
    if a is None and b is None:
        raise ValueError("at least one tensor operand is needed")
    if a is None or b is None:
        m = a or b
        assert m is not None
        return meta_like(m)
    rank = max(a.rank, b.rank)
    pa = ("1",) * (rank - a.rank) + a.shape, (1,) * (rank - a.rank) + a.hint
    pb = ("1",) * (rank - b.rank) + b.shape, (1,) * (rank - b.rank) + b.hint
    shape, hint = [], []
    for sa, ha, sb, hb in zip(pa[0], pa[1], pb[0], pb[1], strict=True):
        if ha == 1 and sa == "1":
            shape.append(sb)
            hint.append(hb)
        else:
            shape.append(sa)
            hint.append(ha)
    dtype = a.dtype if a.is_float or not b.is_float else b.dtype
    return meta_shape(shape, hint, dtype)
