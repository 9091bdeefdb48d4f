"""Axis inference: map every dimension of every value in a fusion group onto the group's domain.

A group computes over one iteration *domain*: the shape of its anchor (a reduction's or scan's
input, or the largest pointwise result) with its size-1 dimensions dropped. Each value's
dimension is either one of the domain's dimensions or a broadcast dimension of size 1 (None):

    domain (B, S, H) of rms-norm      x: (0, 1, 2)    weight: (2,)    mean(keepdim): (0, 1, None)

The map is found by unification: PyTorch's right-aligned broadcasting in pointwise ops,
reductions (keepdim or not), scans, gathers, table lookups and the views a kernel can absorb
(unsqueeze, squeeze, expand, size-1 reshapes, permute) each say which dimensions are the same.
A group whose values cannot all be mapped, or that maps one dimension onto two domain
dimensions, is refused.

A lookup ``table[index]`` maps its result's leading dimensions onto the index's and its trailing
ones onto the table's dimensions after the first; the table itself gets no axis map (its first
dimension is addressed through the index) and is read only by the emitter's indexed load.

A selection (``topk(x, k, d)``) maps its results' dimension ``d`` onto the domain dimension of
``x``'s: the results and every value computed from them are *narrow*, k long along that
dimension instead of the row's length (softmax -> top-8 -> renormalise is one domain).

A matrix product (``mm``, ``bmm``) anchors its group's domain: its output's dimensions are the
domain, its epilogue maps onto them by broadcasting, and its operands get no axis map (the GEMM
template loads them along K itself) unless an epilogue reads them too. A 2-D or 3-D
convolution (``conv``) anchors its group the same way: its NC(D)HW output is the domain, its
input and weight get no axis map (the implicit-GEMM templates gather them themselves).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kernelwright.design.aten import (
    classify,
    lookup_index,
    reduction_dims,
    reduction_keepdim,
    scan_info,
    select_info,
)
from kernelwright.design.graph import Node, OpGraph, Ref, TensorMeta

Axes = tuple[int | None, ...]


@dataclass(frozen=True, slots=True)
class Layout:
    """The domain of a group and the axis map of each value it touches.

    Attributes:
        shape: the domain's sizes as symbolic expressions.
        hint: the domain's sizes at capture.
        axes: value name -> one domain dimension (or None) per dimension of the value.
        reduce: domain dimensions reduced (or scanned, or selected from) by the group; empty
            for pointwise.
        narrow: values that hold a selection's k positions along the selected dimension (its
            results, what is computed from them, inputs read only by those).
    """

    shape: tuple[str, ...]
    hint: tuple[int, ...]
    axes: Mapping[str, Axes]
    reduce: tuple[int, ...] = ()
    narrow: frozenset[str] = frozenset()

    def varies(self, name: str) -> frozenset[int]:
        """The domain dimensions value ``name`` varies along."""
        return frozenset(a for a in self.axes[name] if a is not None)

    def is_full(self, name: str) -> bool:
        """The value varies along a reduced dimension (it is not a per-row value)."""
        return bool(self.varies(name) & set(self.reduce))


class AxisError(Exception):
    """The group's values cannot be mapped onto one domain."""


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[tuple[str, int], tuple[str, int]] = {}
        self.axis: dict[tuple[str, int], int] = {}

    def find(self, s: tuple[str, int]) -> tuple[str, int]:
        self.parent.setdefault(s, s)
        while self.parent[s] != s:
            self.parent[s] = self.parent[self.parent[s]]
            s = self.parent[s]
        return s

    def union(self, a: tuple[str, int], b: tuple[str, int]) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        xa, xb = self.axis.get(ra), self.axis.get(rb)
        if xa is not None and xb is not None and xa != xb:
            raise AxisError(f"{a[0]} dim {a[1]} is both domain dim {xa} and {xb}")
        self.parent[rb] = ra
        if xa is None and xb is not None:
            self.axis[ra] = xb

    def seed(self, s: tuple[str, int], axis: int) -> None:
        r = self.find(s)
        if r in self.axis and self.axis[r] != axis:
            raise AxisError(f"{s[0]} dim {s[1]} is both domain dim {self.axis[r]} and {axis}")
        self.axis[r] = axis


def _is_one(meta: TensorMeta, d: int) -> bool:
    return meta.shape[d] == "1"


def infer_layout(graph: OpGraph, names: Sequence[str], anchor: str | None = None) -> Layout:
    """The layout of the group made of nodes ``names`` (in execution order).

    Raises:
        AxisError: the values cannot be mapped onto one domain.
    """
    nodes = [graph.node(n) for n in names]
    anchor_name = anchor or _choose_anchor(graph, nodes)
    am = graph.meta(anchor_name)
    dims = [d for d in range(am.rank) if not _is_one(am, d)]
    shape = tuple(am.shape[d] for d in dims)
    hint = tuple(am.hint[d] for d in dims)
    uf = _UnionFind()
    for k, d in enumerate(dims):
        uf.seed((anchor_name, d), k)
    cats = [n for n in nodes if classify(n) == "cat"]
    for n in nodes:
        kind = classify(n)
        if kind in ("reduction", "scan", "select"):
            src = n.args[0]
            assert isinstance(src, Ref)
            sm = graph.meta(src.name)
            if sm.shape == am.shape and src.name != anchor_name:
                for d in range(sm.rank):
                    if not _is_one(sm, d):
                        uf.union((anchor_name, d), (src.name, d))
        if kind == "cat":
            _cat(graph, n, uf, set(names))
            continue
        _constrain(graph, n, kind, uf)
    axes: dict[str, Axes] = {}
    values = set(names) - {c.name for c in cats}
    for n in nodes:
        values.update(
            r for r in n.refs() if not (graph.has_node(r) and graph.node(r).kind == "sym")
        )
    values -= lookup_tables(graph, nodes)
    values -= matmul_operands(nodes)
    for v in values:
        meta = _meta_or_none(graph, v)
        if meta is None:
            continue
        ax: list[int | None] = []
        for d in range(meta.rank):
            if _is_one(meta, d):
                ax.append(None)
                continue
            root = uf.find((v, d))
            if root not in uf.axis:
                raise AxisError(f"cannot tell which domain dimension {v} dim {d} is")
            ax.append(uf.axis[root])
        axes[v] = tuple(ax)
    selected = _selected(graph, nodes, uf)
    narrow = _narrow_values(nodes, axes, selected[0]) if selected else set()
    for v, value_axes in axes.items():
        meta = graph.meta(v)
        for d, a in enumerate(value_axes):
            if a is None:
                continue
            want = selected[1] if selected and v in narrow and a == selected[0] else hint[a]
            if meta.hint[d] != want:
                raise AxisError(f"{v} dim {d} has {meta.hint[d]} elements, domain dim {a} {want}")
    for c in cats:  # a concatenation has its pieces' axes (its cat dimension is n times longer)
        first = c.args[0][0]  # type: ignore[index]
        assert isinstance(first, Ref)
        axes[c.name] = axes[first.name]
    reduce: set[int] = set()
    for n in nodes:
        kind = classify(n)
        if kind in ("reduction", "scan", "select"):
            src = n.args[0]
            assert isinstance(src, Ref)
            rank = graph.meta(src.name).rank
            rdims = (
                reduction_dims(n, rank)
                if kind == "reduction"
                else (scan_info(n, rank)[0],)
                if kind == "scan"
                else (select_info(n, rank)[0],)
            )
            mapped = {axes[src.name][d] for d in rdims} - {None}
            if reduce and mapped != reduce:
                raise AxisError(f"{n.name} reduces other dimensions than the rest of the group")
            reduce = {a for a in mapped if a is not None}
            if not reduce:
                raise AxisError(f"{n.name} reduces only size-1 dimensions")
    if narrow:
        _check_sides(nodes, axes, narrow, reduce)
    return Layout(shape, hint, axes, tuple(sorted(reduce)), frozenset(narrow))


def _narrow_values(nodes: Sequence[Node], axes: Mapping[str, Axes], axis: int) -> set[str]:
    """The values on a selection's k positions along domain dimension ``axis``: the selection,
    what is computed from them along that dimension, and the inputs read only there (a weight per
    selected position). A per-row value (a sum of the k results) is not narrow, so a full row
    computed from it again is not either."""

    def along(v: str) -> bool:
        return v in axes and axis in axes[v]

    narrow: set[str] = set()
    readers: dict[str, list[bool]] = {}
    for n in nodes:
        select = classify(n) == "select"
        if along(n.name) and (select or any(r in narrow for r in n.refs())):
            narrow.add(n.name)
        for r in n.refs():
            readers.setdefault(r, []).append(n.name in narrow and not select)
    members = {n.name for n in nodes}
    return narrow | {
        r for r, flags in readers.items() if r not in members and along(r) and all(flags)
    }


def _selected(graph: OpGraph, nodes: Sequence[Node], uf: _UnionFind) -> tuple[int, int] | None:
    """(domain dimension, k) of the group's selection, if it has one."""
    for n in nodes:
        if classify(n) == "select":
            src = n.args[0]
            assert isinstance(src, Ref)
            dim, k, _, _ = select_info(n, graph.meta(src.name).rank)
            root = uf.find((src.name, dim))
            if root not in uf.axis or k is None:
                raise AxisError(f"{n.name} selects a k other than a literal, or along size 1")
            return uf.axis[root], k
    return None


def _check_sides(
    nodes: Sequence[Node], axes: Mapping[str, Axes], narrow: set[str], reduce: set[int]
) -> None:
    """A value on the k selected positions cannot be combined with one along the whole row."""
    for n in nodes:
        if n.name not in narrow or classify(n) == "select":
            continue
        for r in n.refs():
            if r in axes and r not in narrow and set(axes[r]) & reduce:
                raise AxisError(f"{n.name} mixes the selection's k positions with the row {r}")


def _meta_or_none(graph: OpGraph, name: str) -> TensorMeta | None:
    try:
        return graph.meta(name)
    except (KeyError, ValueError):
        return None


def _choose_anchor(graph: OpGraph, nodes: Sequence[Node]) -> str:
    for n in nodes:
        if classify(n) in ("matmul", "conv"):
            return n.name  # the product's output is the domain
    for n in nodes:
        if classify(n) in ("reduction", "scan", "select"):
            src = n.args[0]
            assert isinstance(src, Ref)
            return src.name
    plain = [n for n in nodes if classify(n) != "cat"] or list(nodes)
    best = max(plain, key=lambda n: (n.out.numel, n.out.rank) if n.meta else (0, 0))
    return best.name


def _constrain(graph: OpGraph, n: Node, kind: str, uf: _UnionFind) -> None:
    out = n.out if n.meta else None
    if kind in ("pointwise", "const"):
        assert out is not None
        for a in n.args:
            if isinstance(a, Ref):
                _broadcast(graph, n.name, out, a.name, uf)
        return
    if kind == "reduction":
        src = n.args[0]
        assert isinstance(src, Ref) and out is not None
        sm = graph.meta(src.name)
        rdims = set(reduction_dims(n, sm.rank))
        keep = reduction_keepdim(n)
        k = 0
        for d in range(sm.rank):
            if d in rdims:
                if keep:
                    k += 1
                continue
            if not _is_one(sm, d) and not _is_one(out, k):
                uf.union((src.name, d), (n.name, k))
            k += 1
        return
    if kind == "scan":
        src = n.args[0]
        assert isinstance(src, Ref) and out is not None
        for d in range(out.rank):
            if not _is_one(out, d):
                uf.union((src.name, d), (n.name, d))
        return
    if kind == "gather":
        src, dim, idx = n.args[0], int(n.args[1]), n.args[2]  # type: ignore[arg-type]
        assert isinstance(src, Ref) and isinstance(idx, Ref) and out is not None
        sm = graph.meta(src.name)
        dim %= sm.rank
        for d in range(out.rank):
            if not _is_one(out, d):
                uf.union((idx.name, d), (n.name, d))
                if d != dim:
                    uf.union((src.name, d), (n.name, d))
        return
    if kind == "lookup":
        index = lookup_index(n)
        assert index is not None and out is not None
        im = graph.meta(index.name)
        for d in range(im.rank):
            if not _is_one(im, d):
                uf.union((index.name, d), (n.name, d))
        return
    if kind == "view":
        _view(graph, n, uf)
        return
    if kind in ("matmul", "conv"):
        return  # the anchor: its dimensions seed the domain, its operands have no axis map
    if kind == "index":
        return  # no operand: its one dimension is whichever its readers broadcast it along
    if kind == "select" or kind == "getitem" and _reads_select(graph, n):
        _select(graph, n, uf)
        return
    raise AxisError(f"{n.name} ({n.target}) cannot be fused")


def lookup_tables(graph: OpGraph, nodes: Sequence[Node]) -> set[str]:
    """The tables the group's lookups read that nothing else in the group reads: they have no
    axis map (see the module docstring)."""
    tables: set[str] = set()
    other: set[str] = set()
    for n in nodes:
        if classify(n) == "lookup" and isinstance(n.args[0], Ref):
            tables.add(n.args[0].name)
            other.update(r for r in n.refs() if r != n.args[0].name)
        else:
            other.update(n.refs())
    return tables - other


def matmul_operands(nodes: Sequence[Node]) -> set[str]:
    """The operands of the group's matrix products (and convolutions) that nothing else in the
    group reads: they have no axis map (see the module docstring)."""
    operands: set[str] = set()
    other: set[str] = set()
    for n in nodes:
        if classify(n) in ("matmul", "conv"):
            operands.update(n.refs())
        else:
            other.update(n.refs())
    return operands - other


def _reads_select(graph: OpGraph, n: Node) -> bool:
    src = n.args[0]
    if not isinstance(src, Ref) or not graph.has_node(src.name):
        return False
    return classify(graph.node(src.name)) == "select"


def _select(graph: OpGraph, n: Node, uf: _UnionFind) -> None:
    """A selection's results (and a getitem of them) keep the source's dimensions; the selected
    one is k long (a narrow value)."""
    src = n.args[0]
    assert isinstance(src, Ref)
    sm, out = graph.meta(src.name), n.out
    for d in range(out.rank):
        if not _is_one(out, d) and not _is_one(sm, d):
            uf.union((src.name, d), (n.name, d))


def _cat(graph: OpGraph, n: Node, uf: _UnionFind, members: set[str]) -> None:
    """``cat([a, b, ...], dim)`` of same-shaped pieces: the pieces share every axis."""
    pieces = n.args[0]
    if not isinstance(pieces, tuple) or not all(isinstance(p, Ref) for p in pieces):
        raise AxisError(f"{n.name} concatenates something other than tensors")
    metas = [graph.meta(p.name) for p in pieces]  # type: ignore[union-attr]
    if any(m.hint != metas[0].hint for m in metas):
        raise AxisError(f"{n.name} concatenates pieces of different shapes")
    if any(n.name in graph.node(m).refs() for m in members if graph.has_node(m)):
        raise AxisError(f"{n.name} is read inside the group; only an output can be a concatenation")
    first = pieces[0]
    assert isinstance(first, Ref)
    for p in pieces[1:]:
        assert isinstance(p, Ref)
        for d in range(metas[0].rank):
            if not _is_one(metas[0], d):
                uf.union((first.name, d), (p.name, d))


def _broadcast(graph: OpGraph, out_name: str, out: TensorMeta, arg: str, uf: _UnionFind) -> None:
    am = _meta_or_none(graph, arg)
    if am is None:
        return
    offset = out.rank - am.rank
    if offset < 0:
        raise AxisError(f"{arg} has more dimensions than {out_name}")
    for d in range(am.rank):
        if not _is_one(am, d):
            if _is_one(out, d + offset):
                raise AxisError(f"{arg} dim {d} broadcasts into a size-1 dimension")
            uf.union((arg, d), (out_name, d + offset))


def absorbable_view(graph: OpGraph, n: Node) -> bool:
    """Whether a view can live inside a kernel as an axis map (else PyTorch runs it)."""
    src = n.args[0]
    if not isinstance(src, Ref) or not n.meta:
        return False
    sm, om = graph.meta(src.name), n.out
    if n.target in ("aten.permute.default", "aten.alias.default"):
        return True
    if n.target == "aten.expand.default":
        return True
    non1_in = [s for s in sm.shape if s != "1"]
    non1_out = [s for s in om.shape if s != "1"]
    return non1_in == non1_out


def _view(graph: OpGraph, n: Node, uf: _UnionFind) -> None:
    src = n.args[0]
    assert isinstance(src, Ref)
    sm, om = graph.meta(src.name), n.out
    if n.target == "aten.permute.default":
        perm = [int(p) % sm.rank for p in n.args[1]]  # type: ignore[union-attr,arg-type]
        for i, p in enumerate(perm):
            if not _is_one(om, i):
                uf.union((src.name, p), (n.name, i))
        return
    if n.target == "aten.expand.default":
        _broadcast(graph, n.name, om, src.name, uf)
        return
    if not absorbable_view(graph, n):
        raise AxisError(f"{n.name} reshapes more than size-1 dimensions")
    ins = [d for d in range(sm.rank) if not _is_one(sm, d)]
    outs = [d for d in range(om.rank) if not _is_one(om, d)]
    for a, b in zip(ins, outs, strict=True):
        uf.union((src.name, a), (n.name, b))
