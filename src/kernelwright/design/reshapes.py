"""Reductions and reshapes in a lowered graph, rewritten so that fewer tensors are written.

    unit_reductions             a float sum, mean, max or min over dimensions all of extent 1
                                is a copy of its input (then a view without those dimensions)
    reductions_before_reshapes  ``reduce(reshape(a), dims)`` -> ``reshape(reduce(a, dims'))``
                                where the reshape splits and merges runs of dimensions that are
                                reduced whole or kept whole: the reduction reads ``a`` in its
                                own layout and can join ``a``'s group
    sink_reshapes               ``op(view(a), ...)`` -> ``view(op(a, ...))`` for an element-wise
                                op whose other operands broadcast along the kept last dimension
                                alone, or are single values: the op joins ``a``'s group

Part of lowering (:mod:`kernelwright.design.lower`, whose docstring lists every rewrite).
"""

from __future__ import annotations

from kernelwright.design.aten import classify
from kernelwright.design.builder import contiguous_strides, fresh_name, meta_like, meta_reduced
from kernelwright.design.graph import Arg, Node, OpGraph, Ref, TensorMeta

UNIT_REDUCTIONS = ("aten.sum.dim_IntList", "aten.mean.dim", "aten.amax.default",
                   "aten.amin.default")


def unit_reductions(graph: OpGraph) -> OpGraph:
    """A float sum, mean, max or min (the task's or one a rule made) over dimensions all of
    extent 1, fixed at capture: each output is one input value, so the result is a copy
    (``clone``, which the element-wise templates compute as nothing), then a view without the
    dimensions unless they are kept. Left alone: a dtype argument, an empty list (every
    dimension), an extent that is not a literal 1."""
    taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
    nodes: list[Node] = []
    for n in graph.nodes:
        x = n.args[0] if n.args else None
        dims = n.args[1] if len(n.args) > 1 else n.kwarg("dim")
        if (n.target not in UNIT_REDUCTIONS or not isinstance(x, Ref)
                or n.kwarg("dtype") is not None or not isinstance(dims, tuple) or not dims):
            nodes.append(n)
            continue
        mx = graph.meta(x.name)
        reduced = sorted({int(d) % max(mx.rank, 1) for d in dims})  # type: ignore[arg-type]
        if (mx.rank == 0 or not mx.is_float or n.out.dtype != mx.dtype
                or any(mx.shape[d] != "1" for d in reduced)):
            nodes.append(n)
            continue
        keepdim = bool(n.args[2]) if len(n.args) > 2 else bool(n.kwarg("keepdim", False))
        if keepdim:
            nodes.append(Node(n.name, "call", "aten.clone.default", (x,), (), n.meta))
            continue
        copy = fresh_name(taken, f"{n.name}_copy")
        nodes.append(Node(copy, "call", "aten.clone.default", (x,), (), (meta_like(mx),)))
        nodes.append(Node(n.name, "call", "aten.squeeze.dims", (Ref(copy), tuple(reduced)), (),
                          n.meta))
    return graph.replace(tuple(nodes))


RESHAPES = ("aten.view.default", "aten._unsafe_view.default")


def reductions_before_reshapes(graph: OpGraph) -> OpGraph:
    """``reduce(reshape(a), dims)`` -> ``reshape(reduce(a, dims'))`` where the reshape only
    splits and merges runs of dimensions and each run is reduced whole or kept whole (see
    :func:`_reshape_runs`): the reduction then reads ``a`` in its own layout, so it can join the
    group that computes ``a`` (a group norm's ``(N, G, C/G, HxW)`` output reduced over its
    spatial dimensions, or over all but the batch, no longer makes PyTorch run the view back to
    ``(N, C, H, W)`` and a kernel write it). The result is reshaped to the reduction's shape
    (from the reshape's own sizes, 1 where ``keepdim`` kept a reduced dimension) unless it has
    it; the last node keeps the reduction's name. Left alone: a dtype argument, an empty list
    (every dimension), a run partly reduced, a reshape that something else reads as well (a
    softmax over a flattened view reads it in every step: its maximum must stay in the same
    layout as the rest, or the steps stop fusing)."""
    by_name = {n.name: n for n in graph.nodes}
    taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
    users = graph.users()
    outputs = {a.name for a in graph.outputs if isinstance(a, Ref)}
    nodes: list[Node] = []
    for n in graph.nodes:
        found = _reduction_through_reshape(graph, by_name, n)
        if found is not None and (users[found[0].name] != [n.name] or found[0].name in outputs):
            found = None  # others read the reshape too: it stays, and so does this reduction
        if found is None:
            nodes.append(n)
            continue
        view, a, dims = found
        reduced_meta = meta_reduced(graph.meta(a.name), dims, False)
        if reduced_meta.shape == n.out.shape:
            nodes.append(Node(n.name, "call", n.target, (a, dims, False), (), n.meta))
            continue
        keepdim = bool(n.args[2]) if len(n.args) > 2 else bool(n.kwarg("keepdim", False))
        reduced = _reduced_dims(n, view.out.rank)
        sizes = view.args[1]
        assert isinstance(sizes, tuple)
        shape = tuple(1 if d in reduced else sizes[d] for d in range(view.out.rank)
                      if keepdim or d not in reduced)
        flat = fresh_name(taken, f"{n.name}_of_source")
        nodes.append(Node(flat, "call", n.target, (a, dims, False), (), (reduced_meta,)))
        nodes.append(Node(n.name, "call", view.target, (Ref(flat), shape), (), n.meta))
    return graph.replace(tuple(nodes)).pruned()


def _reduced_dims(n: Node, rank: int) -> set[int]:
    """The dimensions a sum/mean/amax/amin node reduces."""
    dims = n.args[1] if len(n.args) > 1 else n.kwarg("dim")
    assert isinstance(dims, tuple)
    return {int(d) % rank for d in dims}  # type: ignore[arg-type]


def _reduction_through_reshape(
    graph: OpGraph, by_name: dict[str, Node], n: Node
) -> tuple[Node, Ref, tuple[int, ...]] | None:
    """(the reshape, its source, the source's dimensions to reduce) when ``n`` reduces a
    reshape whose runs of dimensions it reduces whole or keeps whole; else None."""
    x = n.args[0] if n.args else None
    dims = n.args[1] if len(n.args) > 1 else n.kwarg("dim")
    if (n.target not in UNIT_REDUCTIONS or not isinstance(x, Ref) or x.name not in by_name
            or n.kwarg("dtype") is not None or not isinstance(dims, tuple) or not dims
            or len(n.meta) != 1):
        return None
    view = by_name[x.name]
    a = view.args[0] if view.args else None
    sizes = view.args[1] if len(view.args) > 1 else None
    if (view.target not in RESHAPES or not isinstance(a, Ref) or not isinstance(sizes, tuple)
            or len(sizes) != view.out.rank):
        return None
    am, vm = _meta(graph, by_name, a.name), view.out
    runs = _reshape_runs(am, vm) if am.rank and vm.rank else None
    if runs is None:
        return None
    reduced = _reduced_dims(n, vm.rank)
    source_dims: list[int] = []
    for a_dims, v_dims in runs:
        hit = reduced & set(v_dims)
        if hit == set(v_dims):
            source_dims += a_dims
        elif hit:
            return None
    kept_sizes = [sizes[d] for d in range(vm.rank) if d not in reduced]
    if not source_dims or kept_sizes.count(-1) > 1:
        return None
    return view, a, tuple(source_dims)


def _reshape_runs(
    am: TensorMeta, vm: TensorMeta
) -> list[tuple[list[int], list[int]]] | None:
    """A reshape from ``am`` to ``vm`` as pairs of runs of dimensions (source run, reshaped
    run) holding the same elements in the same order, the shortest such runs, matched on the
    capture sizes and then proved equal for every size (the products of the two runs' size
    expressions are the same expression); None where a size is 0 or a run's product differs
    symbolically (a reshape that matches at this size only)."""
    import sympy

    if 0 in am.hint or 0 in vm.hint:
        return None
    runs: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < am.rank and j < vm.rank:
        a_run, v_run = [i], [j]
        pa, pv = am.hint[i], vm.hint[j]
        i, j = i + 1, j + 1
        while pa != pv:  # the smaller side takes its next dimension
            if pa < pv and i < am.rank:
                a_run.append(i)
                pa, i = pa * am.hint[i], i + 1
            elif pv < pa and j < vm.rank:
                v_run.append(j)
                pv, j = pv * vm.hint[j], j + 1
            else:
                return None
        runs.append((a_run, v_run))
    if not runs:
        return None
    runs[-1][0].extend(range(i, am.rank))  # trailing extent-1 dimensions join the last run
    runs[-1][1].extend(range(j, vm.rank))
    for a_run, v_run in runs:
        try:
            sa = sympy.Mul(*(sympy.sympify(am.shape[d]) for d in a_run))
            sv = sympy.Mul(*(sympy.sympify(vm.shape[d]) for d in v_run))
        except (sympy.SympifyError, TypeError):
            return None
        if sympy.expand(sa - sv) != 0:
            return None
    return runs


def sink_reshapes(graph: OpGraph) -> OpGraph:
    """``op(view(a), ...)`` -> ``view(op(a, ...))`` for an element-wise ``op`` (see the module
    docstring), in execution order, so a chain of such ops ends with one view after it. The
    rewritten op keeps its name for the view (its readers are unchanged) and computes under
    ``<name>_flat`` in ``a``'s shape. Another operand that is the same reshape of a value of
    ``a``'s shape reads that value; another operand of the view's shape (a residual) is
    reshaped to ``a``'s rows when ``a`` is a matrix (``(-1, last)``: a view where its strides
    allow, else a copy). Left alone: a reshape of a value not contiguous at capture, an op
    whose result is larger than the view (it broadcasts it), any other operand of more
    dimensions than ``a`` or that varies along any dimension but the last, and where the
    reshape changes the last dimension, any other operand but a single value, or an op that
    a reduction reads (which reduces in the reshape's layout)."""
    taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
    by_name = {n.name: n for n in graph.nodes}
    readers = graph.users()
    nodes: list[Node] = []
    for n in graph.nodes:
        found = _sinkable(graph, by_name, n, readers)
        if found is None:
            nodes.append(n)
            continue
        view, a, residuals = found
        am = _meta(graph, by_name, a.name)
        flat = fresh_name(taken, f"{n.name}_flat")
        # each reshape read becomes its source (the first is a; others have a's shape)
        rows: dict[Arg, Arg] = {Ref(v.name): v.args[0] for v in _reshapes_read(by_name, n)}
        for r in residuals:
            reshaped = Node(fresh_name(taken, f"{r}_rows"), "call", view.target,
                            (Ref(r), (-1, _last_size(view))), (),
                            (meta_like(am, _meta(graph, by_name, r).dtype),))
            nodes.append(reshaped)
            by_name[reshaped.name] = reshaped
            rows[Ref(r)] = Ref(reshaped.name)
        args = tuple(rows.get(x, x) for x in n.args)
        moved = Node(flat, n.kind, n.target, args, n.kwargs, (meta_like(am, n.out.dtype),))
        back = Node(n.name, "call", view.target, (Ref(flat), *view.args[1:]), view.kwargs,
                    n.meta)
        nodes += [moved, back]
        by_name[flat], by_name[n.name] = moved, back
    return graph.replace(tuple(nodes)).pruned()


def _reshapes_read(by_name: dict[str, Node], n: Node) -> list[Node]:
    """The reshapes ``n`` reads, in the order of its operands."""
    return [by_name[r] for r in dict.fromkeys(n.refs())
            if r in by_name and by_name[r].target in RESHAPES]


def _last_size(view: Node) -> Arg:
    """The reshape's last size as its arguments give it (a literal or a symbol), None when
    they leave it to be inferred (-1) or give no sizes."""
    sizes = view.args[1] if len(view.args) > 1 else None
    if not isinstance(sizes, tuple) or not sizes or sizes[-1] == -1:
        return None
    return sizes[-1]


def _sinkable(
    graph: OpGraph, by_name: dict[str, Node], n: Node, readers: dict[str, list[str]]
) -> tuple[Node, Ref, list[str]] | None:
    """(the reshape, its source, the operands of the reshape's shape to bring to the source's
    rows) when ``n`` can run before the reshape it reads; else None. ``readers``: the graph's
    readers of each node."""
    if n.kind != "call" or len(n.meta) != 1 or classify(n) != "pointwise":
        return None
    views = _reshapes_read(by_name, n)
    if not views or not isinstance(views[0].args[0], Ref):
        return None
    view, a = views[0], views[0].args[0]
    vm, am = view.out, _meta(graph, by_name, a.name)
    for other in views[1:]:  # reshapes of values of a's shape, to a's view's shape
        src = other.args[0]
        if (not isinstance(src, Ref) or other.out.shape != vm.shape
                or _meta(graph, by_name, src.name).shape != am.shape
                or _meta(graph, by_name, src.name).strides != am.strides):
            return None
    if (n.out.shape != vm.shape or am.rank == 0 or vm.rank == 0
            or am.strides != contiguous_strides(am.hint)):
        return None
    # a reshape that keeps the last dimension keeps rows: an operand along it still lines up
    keeps_rows = am.shape[-1] == vm.shape[-1]
    if not keeps_rows and any(classify(by_name[r]) == "reduction"
                              for r in readers.get(n.name, ()) if r in by_name):
        # a reduction of the reshaped layout reads it (a norm of a flattened view squares
        # it): the op stays with that reduction, in the reshape's layout
        return None
    residuals: list[str] = []
    for x in n.args:
        if isinstance(x, tuple):
            return None  # a list of tensors or sizes: not a plain element-wise operand
        if not isinstance(x, Ref) or x.name in {v.name for v in views}:
            continue
        om = _meta(graph, by_name, x.name)
        if not keeps_rows:
            if om.rank > am.rank or any(s != "1" for s in om.shape):
                return None  # only a single value broadcasts alike before and after
            continue
        if om.shape == vm.shape and am.rank == 2 and vm.rank > 2 and _last_size(view) is not None:
            residuals.append(x.name)
            continue
        if om.rank > am.rank or any(s != "1" for s in om.shape[:-1]):
            return None
        if om.rank and om.shape[-1] not in ("1", vm.shape[-1]):
            return None
    if any(isinstance(v, Ref) for _, v in n.kwargs):
        return None
    return view, a, residuals


def _meta(graph: OpGraph, by_name: dict[str, Node], name: str) -> TensorMeta:
    """The metadata of ``name``: a node made by a rewrite in progress, or the graph's."""
    node = by_name.get(name)
    return node.out if node is not None else graph.meta(name)
