"""Fusion: partition a lowered graph into groups, each one kernel (or one framework call).

    pointwise   chains of element-wise ops with broadcasting
    reduction   reductions over one set of dimensions with their prologue and epilogue (norms,
                softmax-like, losses); per-row results may feed a second reduction group
    scan        one cumulative sum/product with its prologue and epilogue
    select      one top-k along the innermost dimension with its prologue (element-wise chains,
                row reductions such as a softmax) and its epilogue on the k selected positions
                (renormalisation, index casts)
    pool        one pooling window op
    attention   one scaled-dot-product attention (its operands loaded by the flash template)
    gemm        one matrix product (mm, bmm) with its element-wise epilogue (bias, scale,
                residual, clamp, activations); its operands are loaded by the GEMM template, so
                whatever computes them stays in its own kernel
    conv        one 2-D or 3-D convolution (any groups, transposed or not) with its
                element-wise epilogue, as the GEMM group (an implicit GEMM or a direct kernel
                gathers the input's patches itself)
    lookup      ``table[index]`` with an integer index: an indexed load inside the element-wise
                kernel that reads it (lowering gave each reader its own copy); a lookup read by
                a reduction, a scan or a selection, or by PyTorch, stays a framework call
    index       ``arange`` of integers: computed inside the kernel of the element-wise op that
                reads it, from that kernel's index (each reader has its own copy, as a lookup);
                one read otherwise (a product's operand, a graph output) is a framework call
    framework   an op without a template (sort, an LSTM...): PyTorch runs it, labelled

A concatenation of same-shaped element-wise results merges the pieces' groups and is written
piece by piece into its slices by that one kernel.

Greedy, in execution order: a node joins the group of one of its producers when the result
still maps onto one domain (:mod:`kernelwright.design.axes`) and no cycle appears between groups;
otherwise it opens a group. Two producer groups merge when compatible. A reduction over more
dimensions than its producer group reduces is split in two (sum over the group's dimensions
inside the group, then over the rest in a new group): how losses avoid materialising the
element-wise tensor. Views that only add, drop or permute dimensions live inside kernels;
other views run in PyTorch between kernels (free; the forward writes them as reshapes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kernelwright.design.aten import (
    classify,
    lookup_fusible,
    lookup_index,
    reduction_dims,
    reduction_keepdim,
    select_info,
)
from kernelwright.design.axes import AxisError, Layout, absorbable_view, infer_layout
from kernelwright.design.builder import meta_reduced
from kernelwright.design.graph import Node, OpGraph, Ref

FUSIBLE = ("pointwise", "reduction", "scan")
# groups a later node may join (a selection and a matrix product take their epilogue)
JOINABLE = (*FUSIBLE, "select", "gemm", "conv")
# groups anchored on a product whose operands the template loads itself (an epilogue joins them)
PRODUCTS = ("gemm", "conv")
# The selection template keeps the row in registers and unrolls k rounds: beyond these sizes (at
# capture) the top-k stays with PyTorch and its prologue keeps its own kernel.
SELECT_MAX_K = 16
SELECT_MAX_ROW = 4096


@dataclass(frozen=True, slots=True)
class Group:
    """One kernel's worth of nodes (or one framework call).

    Attributes:
        id: position in execution order.
        kind: pointwise, reduction, scan, select, pool or framework.
        nodes: node names in execution order.
        inputs: tensor values read from outside the group.
        outputs: values other groups, the forward's views or the graph outputs need.
        layout: the domain and axis map (None for pool and framework groups).
        note: why a framework group was not fused.
    """

    id: int
    kind: str
    nodes: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    layout: Layout | None = None
    note: str = ""

    @property
    def label(self) -> str:
        """``g<id>`` plus its kind."""
        return f"g{self.id}-{self.kind}"


@dataclass(frozen=True, slots=True)
class Partition:
    """The lowered graph and its groups in execution order."""

    graph: OpGraph
    groups: tuple[Group, ...]

    def group_of(self, name: str) -> Group | None:
        """The group computing ``name`` (None for inputs, sym and forward-level views)."""
        for g in self.groups:
            if name in g.nodes:
                return g
        return None

    @property
    def fused(self) -> list[Group]:
        """Groups that become kernels."""
        return [g for g in self.groups if g.kind != "framework"]


@dataclass
class _Draft:
    kind: str
    nodes: list[str]
    first: int
    note: str = ""
    layout: Layout | None = None
    members: set[str] = field(default_factory=set)


def fuse(graph: OpGraph) -> Partition:
    """Partition ``graph`` (already lowered) into groups; see the module docstring."""
    nodes = list(graph.nodes)
    drafts: list[_Draft] = []
    owner: dict[str, int] = {}
    pending: dict[str, Node] = {}  # in-kernel views waiting for a consumer to pull them in
    order = {n.name: i for i, n in enumerate(nodes)}
    i = 0
    while i < len(nodes):
        n = nodes[i]
        i += 1
        kind = classify(n)
        if kind in ("sym", "const", "fview"):
            continue  # forward-level: shape arithmetic, literals, free views
        if kind == "getitem":
            src = n.args[0]
            gid = owner.get(src.name, -1) if isinstance(src, Ref) else -1
            if _pool_value(graph, n):
                drafts[gid].nodes.append(n.name)
                owner[n.name] = gid
            elif gid >= 0 and drafts[gid].kind == "select":  # a top-k's values or indices
                joined = _try_add(graph, drafts, owner, gid, [n], "getitem")
                assert joined, f"{n.name}: a selection's result must map onto its group"
            continue  # other getitems pick an output of a framework call in the forward
        if kind == "lookup" and lookup_fusible(graph, n):
            pending[n.name] = n  # loaded by the element-wise kernel that reads it
            continue
        if kind == "index":
            pending[n.name] = n  # computed by the element-wise kernel that reads it
            continue
        if kind == "view":
            src = n.args[0]
            in_kernel = isinstance(src, Ref) and (
                src.name in pending or _fusible_source(drafts, owner, src.name)
            )
            if in_kernel and absorbable_view(graph, n):
                pending[n.name] = n
            continue  # otherwise PyTorch runs it in the forward
        if kind == "pool" and not _pool_fusible(graph, n):
            kind = "framework"
        refusal = _select_refusal(graph, n) if kind == "select" else ""
        if refusal:
            kind = "framework"
        if kind == "cat" and _fuse_cat(graph, drafts, owner, n):
            continue
        if kind in ("framework", "pool", "cat", "attention"):
            owner[n.name] = len(drafts)
            draft_kind = kind if kind in ("pool", "attention") else "framework"
            drafts.append(_Draft(draft_kind, [n.name], order[n.name], note=refusal or _why(n)))
            continue
        if kind != "pointwise":
            _materialise_lookups(graph, n, pending, drafts, owner, order)
        if kind in ("matmul", "conv"):
            _open_gemm(graph, drafts, owner, order, n, "gemm" if kind == "matmul" else "conv")
            continue
        views = _pull_views(n, pending)
        producers = {owner[r] for v in views for r in v.refs() if r in owner} | _producers(
            graph, n, owner
        )
        joined = False
        # an epilogue joins its matrix product first (else the product is written and re-read)
        for gid in sorted(producers, key=lambda g: (drafts[g].kind not in PRODUCTS, -g)):
            d = drafts[gid]
            if d.kind not in JOINABLE:
                continue
            if kind == "reduction" and d.kind == "reduction" and not views:
                split = _split_reduction(graph, n, d)
                if split is not None:
                    inner, outer = split
                    graph = _replace_node(graph, n, (inner, outer))
                    nodes[i - 1 : i] = [inner, outer]
                    order = {x.name: k for k, x in enumerate(nodes)}
                    n = inner
            if _try_add(graph, drafts, owner, gid, [*views, n], kind):
                joined = True
                _merge_producers(graph, drafts, owner, gid, producers - {gid})
                break
        if joined:
            for v in views:
                pending.pop(v.name, None)
            continue
        names = [v.name for v in views] + [n.name]
        new_kind = kind if kind in JOINABLE else "pointwise"
        layout = None if kind == "gather" else _layout(graph, names, new_kind)
        if layout is None:
            owner[n.name] = len(drafts)
            drafts.append(_Draft("framework", [n.name], order[n.name], note=_why(n)))
            continue
        for v in views:
            pending.pop(v.name, None)
            owner[v.name] = len(drafts)
        owner[n.name] = len(drafts)
        drafts.append(_Draft(new_kind, names, order[names[0]], layout=layout))
        _merge_producers(graph, drafts, owner, owner[n.name], producers)
    for name, v in list(pending.items()):
        if classify(v) in PENDING_NOTES:
            # read by no kernel (a graph output, a view PyTorch runs): PyTorch computes it
            owner[name] = len(drafts)
            note = PENDING_NOTES[classify(v)]
            drafts.append(_Draft("framework", [name], order[name], note=note))
    return _finish(graph, drafts, owner, order)


LOOKUP_NOTE = "a table lookup read outside element-wise kernels (only they load through an index)"
# why a lookup or an index range that no element-wise op pulled into its kernel stays with PyTorch
PENDING_NOTES = {
    "lookup": LOOKUP_NOTE,
    "index": "an index range read outside element-wise ops (only they compute it from an index)",
}


def _open_gemm(
    graph: OpGraph,
    drafts: list[_Draft],
    owner: dict[str, int],
    order: dict[str, int],
    n: Node,
    kind: str = "gemm",
) -> None:
    """A matrix product (or a convolution: ``kind``) opens its own group: its operands are whole
    tensors the template loads tile by tile, so no producer is merged into it (an element-wise
    prologue keeps its kernel)."""
    layout = _layout(graph, [n.name], kind)
    owner[n.name] = len(drafts)
    if layout is None:
        drafts.append(_Draft("framework", [n.name], order[n.name], note=_why(n)))
    else:
        drafts.append(_Draft(kind, [n.name], order[n.name], layout=layout))


def _materialise_lookups(
    graph: OpGraph,
    n: Node,
    pending: dict[str, Node],
    drafts: list[_Draft],
    owner: dict[str, int],
    order: dict[str, int],
) -> None:
    """Pending lookups and index ranges ``n`` reads (through pending views) become framework
    calls: ``n`` opens or joins a reduction, scan or selection, whose templates do not load
    through an index, or is a product, which loads its operands from memory."""
    for v in _pull_views(n, pending):
        if classify(v) in PENDING_NOTES:
            pending.pop(v.name)
            owner[v.name] = len(drafts)
            drafts.append(_Draft("framework", [v.name], order[v.name],
                                 note=PENDING_NOTES[classify(v)]))


def _fuse_cat(graph: OpGraph, drafts: list[_Draft], owner: dict[str, int], n: Node) -> bool:
    """Merge the pointwise groups computing a concatenation's pieces and add the cat to them:
    one kernel writes every piece into its slice of the output (rotary embeddings' halves)."""
    pieces = n.args[0]
    if not isinstance(pieces, tuple) or not pieces or not all(isinstance(p, Ref) for p in pieces):
        return False
    gids = {owner.get(p.name, -1) for p in pieces if isinstance(p, Ref)}
    if -1 in gids or any(drafts[g].kind != "pointwise" for g in gids):
        return False
    target = max(gids)
    for g in sorted(gids - {target}, reverse=True):
        _merge_producers(graph, drafts, owner, target, {g})
    if {owner[p.name] for p in pieces if isinstance(p, Ref)} != {target}:
        return False
    return _try_add(graph, drafts, owner, target, [n], "cat")


def _fusible_source(drafts: list[_Draft], owner: dict[str, int], name: str) -> bool:
    return name in owner and drafts[owner[name]].kind in JOINABLE


def _pull_views(n: Node, pending: dict[str, Node]) -> list[Node]:
    """The pending views (and lookups) ``n`` reads, with the pending ones they read, in order.
    A lookup's table is read through its pointer, never computed in the kernel: only its index
    is followed."""
    found: list[Node] = []

    def visit(name: str) -> None:
        v = pending.get(name)
        if v is None or v in found:
            return
        src = lookup_index(v) if classify(v) == "lookup" else v.args[0]
        if isinstance(src, Ref):
            visit(src.name)
        found.append(v)

    for r in n.refs():
        visit(r)
    return found


def _why(n: Node) -> str:
    kind = classify(n)
    if kind == "framework":
        return f"no template for {n.target}"
    if kind in ("pool", "attention"):
        return ""
    if kind == "select":
        return "a top-k along a strided dimension (the template selects along the innermost one)"
    return f"{n.target} could not be mapped onto a kernel domain"


def _select_refusal(graph: OpGraph, n: Node) -> str:
    """Why the selection template cannot take this top-k ('' when it can)."""
    src = n.args[0]
    if not isinstance(src, Ref):
        return "a top-k of a constant"
    sm = graph.meta(src.name)
    if sm.dtype not in ("float32", "float16", "bfloat16"):
        return f"a top-k of {sm.dtype} values (the template orders fp32 keys)"
    dim, k, _, ordered = select_info(n, sm.rank)
    if k is None or not ordered:
        return "a top-k with a runtime k or unsorted results (torch's order is unspecified)"
    if k > SELECT_MAX_K or sm.hint[dim] > SELECT_MAX_ROW:
        return (
            f"top-{k} of rows of {sm.hint[dim]}: beyond the selection template's k <= "
            f"{SELECT_MAX_K} and rows <= {SELECT_MAX_ROW}"
        )
    return ""


def _pool_fusible(graph: OpGraph, n: Node) -> bool:
    """Only the pooled values are read (the indices of max pooling are not)."""
    if "with_indices" not in n.target:
        return True
    for m in graph.nodes:
        if m.kind == "getitem" and m.args[0] == Ref(n.name) and m.args[1] != 0:
            return False
        if m.kind != "getitem" and Ref(n.name) in m.args:
            return False
    return n.name not in graph.output_names()


def _pool_value(graph: OpGraph, n: Node) -> bool:
    src = n.args[0]
    return (
        isinstance(src, Ref)
        and graph.has_node(src.name)
        and classify(graph.node(src.name)) == "pool"
        and n.args[1] == 0
    )


def _producers(graph: OpGraph, n: Node, owner: dict[str, int]) -> set[int]:
    return {owner[r] for r in n.refs() if r in owner}


def _layout(graph: OpGraph, names: Sequence[str], kind: str) -> Layout | None:
    try:
        layout = infer_layout(graph, names)
    except AxisError:
        return None
    if kind == "reduction" and not layout.reduce:
        return None
    if kind == "scan" and len(layout.reduce) != 1:
        return None
    if kind == "select" and layout.reduce != (len(layout.hint) - 1,):
        return None  # the template selects along the innermost (contiguous) dimension
    if kind in PRODUCTS and (layout.reduce or len(_matmuls(graph, names)) != 1):
        return None  # one product and its element-wise epilogue
    return layout


def _matmuls(graph: OpGraph, names: Sequence[str]) -> list[str]:
    """The matrix products and convolutions among ``names``."""
    return [x for x in names if classify(graph.node(x)) in ("matmul", "conv")]


def _kind_after(d: _Draft, kind: str) -> str | None:
    if d.kind in PRODUCTS:  # the product's element-wise epilogue
        return d.kind if kind in ("pointwise", "view") else None
    if d.kind == "select":  # the epilogue on the k results (or the rest of the prologue)
        return "select" if kind in ("pointwise", "view", "reduction", "getitem") else None
    if kind == "select":  # a top-k of an element-wise chain or of a row reduction's results
        return "select" if d.kind in ("pointwise", "reduction") else None
    if kind == "cat":
        return "pointwise" if d.kind == "pointwise" else None
    if kind in ("pointwise", "view", "gather"):
        if kind == "gather" and d.kind != "reduction":
            return None
        return d.kind
    if kind == "reduction":
        return "reduction" if d.kind in ("pointwise", "reduction") else None
    if kind == "scan":
        return "scan" if d.kind == "pointwise" else None
    return None


def _try_add(
    graph: OpGraph,
    drafts: list[_Draft],
    owner: dict[str, int],
    gid: int,
    new: list[Node],
    kind: str,
) -> bool:
    d = drafts[gid]
    new_kind = _kind_after(d, kind)
    if new_kind is None:
        return False
    if _creates_cycle(graph, drafts, owner, gid, new):
        return False
    names = d.nodes + [x.name for x in new]
    if new_kind != "pointwise" and _has_lookup(graph, names):
        return False
    if new_kind in PRODUCTS and _operands(graph, d.nodes) & {x.name for x in new}:
        return False  # a view the product reads must stay a tensor it loads (x.T @ w + x.T)
    layout = _layout(graph, names, new_kind)
    if layout is None or _serial_epilogue(graph, names, layout, new_kind):
        return False
    d.nodes.extend(x.name for x in new)
    d.kind, d.layout = new_kind, layout
    for x in new:
        owner[x.name] = gid
    return True


def _has_lookup(graph: OpGraph, names: Sequence[str]) -> bool:
    """Only the element-wise templates load through an index (a table lookup)."""
    return any(classify(graph.node(x)) == "lookup" for x in names)


def _serial_epilogue(graph: OpGraph, names: Sequence[str], layout: Layout, kind: str) -> bool:
    """A full-size value computed after a reduction over *every* dimension would be written by
    a single program: keep it in its own element-wise kernel instead (x / ||x||_F). A selection's
    group is one program per row anyway: its epilogue is k values."""
    if kind == "select" or not layout.reduce or len(layout.reduce) < len(layout.hint):
        return False
    after: set[str] = set()
    for m in names:
        node = graph.node(m)
        if classify(node) == "reduction" or any(r in after for r in node.refs()):
            after.add(m)
            if classify(node) != "reduction" and m in layout.axes and layout.is_full(m):
                return True
    return False


def _creates_cycle(
    graph: OpGraph, drafts: list[_Draft], owner: dict[str, int], gid: int, extra: list[Node]
) -> bool:
    """Adding ``extra`` to group ``gid`` makes a cycle: it reads (transitively) from a group that
    reads from ``gid``."""
    sources = {
        s for n in extra for r in n.refs() for s in owned_sources(graph, r, owner) if s != gid
    }
    seen: set[int] = set()
    stack = list(sources)
    while stack:
        g = stack.pop()
        if g == gid:
            return True
        if g in seen:
            continue
        seen.add(g)
        for name in drafts[g].nodes:
            for r in graph.node(name).refs():
                stack.extend(s for s in owned_sources(graph, r, owner) if s != g)
    return False


def owned_sources(graph: OpGraph, name: str, owner: dict[str, int]) -> set[int]:
    """The groups a value comes from, looking through forward-level nodes (views, getitems,
    shape arithmetic) that belong to no group."""
    found: set[int] = set()
    stack, seen = [name], set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in owner:
            found.add(owner[n])
        elif graph.has_node(n):
            stack.extend(graph.node(n).refs())
    return found


def _merge_producers(
    graph: OpGraph, drafts: list[_Draft], owner: dict[str, int], gid: int, producers: set[int]
) -> None:
    """Fold compatible producer groups into the new group ``gid`` (most recent first)."""
    for pid in sorted(producers, reverse=True):
        p, d = drafts[pid], drafts[gid]
        if not p.nodes or p.kind not in FUSIBLE or pid == gid:
            continue
        kinds = {p.kind, d.kind}
        if "scan" in kinds and ("reduction" in kinds or "select" in kinds):
            continue
        product = next((k for k in PRODUCTS if k in kinds), None)
        if product is not None and (
            kinds != {product, "pointwise"} or _feeds_matmul(graph, owner, pid, d)
        ):
            continue  # only an element-wise producer of the epilogue, never of the operands
        new_kind = (
            product
            if product is not None
            else "select"
            if "select" in kinds
            else "reduction"
            if "reduction" in kinds
            else "scan"
            if "scan" in kinds
            else "pointwise"
        )
        names = sorted(p.nodes + d.nodes, key=lambda x: _index(graph, x))
        if new_kind != "pointwise" and _has_lookup(graph, names):
            continue
        layout = _layout(graph, names, new_kind)
        if layout is None or _serial_epilogue(graph, names, layout, new_kind):
            continue
        merged = [graph.node(x) for x in names]
        if _creates_cycle(graph, drafts, {**owner, **{x: gid for x in p.nodes}}, gid, merged):
            continue
        for x in p.nodes:
            owner[x] = gid
        d.nodes, d.kind, d.layout = names, new_kind, layout
        d.first = min(d.first, p.first)
        p.nodes = []


def _operands(graph: OpGraph, names: Sequence[str]) -> set[str]:
    """The operands of the matrix products among ``names``."""
    return {r for x in _matmuls(graph, names) for r in graph.node(x).refs()}


def _feeds_matmul(graph: OpGraph, owner: dict[str, int], pid: int, d: _Draft) -> bool:
    """Whether group ``pid`` computes an operand of a matrix product of ``d``, directly or
    through views the forward runs (``y.T @ w`` reads ``y``)."""
    return any(pid in owned_sources(graph, r, owner) for r in _operands(graph, d.nodes))


def _index(graph: OpGraph, name: str) -> int:
    for i, n in enumerate(graph.nodes):
        if n.name == name:
            return i
    return -1


def _split_reduction(graph: OpGraph, n: Node, d: _Draft) -> tuple[Node, Node] | None:
    """sum/mean/amax/amin over dims D of a value in a group reducing R < D: (inner, outer)."""
    if n.target not in (
        "aten.sum.dim_IntList",
        "aten.mean.dim",
        "aten.amax.default",
        "aten.amin.default",
    ):
        return None
    if d.layout is None or not d.layout.reduce or n.kwarg("dtype") is not None:
        return None
    src = n.args[0]
    if not isinstance(src, Ref) or src.name not in d.layout.axes:
        return None
    sm = graph.meta(src.name)
    axes = d.layout.axes[src.name]
    dims = {k for k in reduction_dims(n, sm.rank) if axes[k] is not None}  # size-1 dims are free
    inner = {k for k in dims if axes[k] in d.layout.reduce}
    if (
        not inner
        or inner == dims
        or any(axes[k] in d.layout.reduce for k in set(range(sm.rank)) - dims)
    ):
        return None
    keep = reduction_keepdim(n)
    inner_t = tuple(sorted(inner))
    inner_meta = meta_reduced(sm, inner_t, True)
    inner_node = Node(f"{n.name}_part", "call", n.target, (src, inner_t, True), (), (inner_meta,))
    # the outer node reduces every dimension the reduction named, size-1 ones included (the
    # inner one kept its dimensions: reducing them again changes nothing)
    dims_all = tuple(sorted(reduction_dims(n, sm.rank)))
    outer_meta = meta_reduced(inner_meta, dims_all, keep)
    outer_node = Node(
        n.name, "call", n.target, (Ref(inner_node.name), dims_all, keep), (), (outer_meta,)
    )
    return inner_node, outer_node


def _replace_node(graph: OpGraph, old: Node, new: tuple[Node, ...]) -> OpGraph:
    nodes: list[Node] = []
    for n in graph.nodes:
        nodes.extend(new if n.name == old.name else (n,))
    return graph.replace(tuple(nodes))


def _finish(
    graph: OpGraph, drafts: list[_Draft], owner: dict[str, int], order: dict[str, int]
) -> Partition:
    live = [d for d in drafts if d.nodes]
    ids = {id(d): k for k, d in enumerate(live)}
    index = {name: ids[id(drafts[g])] for name, g in owner.items() if drafts[g].nodes}
    deps: dict[int, set[int]] = {k: set() for k in range(len(live))}
    for k, d in enumerate(live):
        for name in d.nodes:
            for r in graph.node(name).refs():
                if r in index and index[r] != k:
                    deps[k].add(index[r])
        for name in d.nodes:  # forward-level values read by this group depend on their sources
            for r in graph.node(name).refs():
                deps[k].update(owned_sources(graph, r, index) - {k})
    ordered: list[int] = []
    done: set[int] = set()
    while len(ordered) < len(live):
        ready = [k for k in range(len(live)) if k not in done and deps[k] <= done]
        if not ready:
            raise AssertionError("fusion produced a cycle between groups")
        k = min(ready, key=lambda x: live[x].first)
        ordered.append(k)
        done.add(k)
    outputs_needed = _needed_outside(graph, live, index)
    groups: list[Group] = []
    for pos, k in enumerate(ordered):
        d = live[k]
        names = tuple(sorted(d.nodes, key=lambda x: order.get(x, _index(graph, x))))
        members = set(names)
        inputs: list[str] = []
        for name in names:
            for r in graph.node(name).refs():
                if (
                    r not in members
                    and r not in inputs
                    and _is_tensor(graph, r)
                    and not _is_const(graph, r)
                ):
                    inputs.append(r)
        outs = tuple(x for x in names if x in outputs_needed[k])
        groups.append(Group(pos, d.kind, names, tuple(inputs), outs, d.layout, d.note))
    return Partition(graph, tuple(groups))


def _is_const(graph: OpGraph, name: str) -> bool:
    return graph.has_node(name) and classify(graph.node(name)) == "const"


def _is_tensor(graph: OpGraph, name: str) -> bool:
    if graph.has_node(name):
        return bool(graph.node(name).meta)
    return graph.input(name).meta is not None


def _needed_outside(
    graph: OpGraph, live: list[_Draft], index: dict[str, int]
) -> dict[int, set[str]]:
    needed: dict[int, set[str]] = {k: set() for k in range(len(live))}
    for name in graph.output_names():
        if name in index:
            needed[index[name]].add(name)
    for n in graph.nodes:
        mine = index.get(n.name)
        for r in n.refs():
            if r in index and index[r] != mine:
                needed[index[r]].add(r)
    return needed
