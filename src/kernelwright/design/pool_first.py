"""``avg_pool(conv_1x1(x))`` -> ``conv_1x1(avg_pool(x))``, where the two commute and pooling
first moves no more bytes: the convolution then reads a fraction of the pixels. The first of
lowering's passes (:mod:`kernelwright.design.lower`, whose docstring gives the rule)."""

from __future__ import annotations

import math

from kernelwright.design.builder import contiguous_strides
from kernelwright.design.graph import Node, OpGraph, Ref, TensorMeta

AVG_POOLS = {"aten.avg_pool2d.default": 2, "aten.avg_pool3d.default": 3}
POOLED_FIRST = "pooled before its 1 x 1 convolution (both linear: they commute)"


def pool_before_pointwise_conv(graph: OpGraph) -> OpGraph:
    """``avg_pool(convolution(x, w, b))`` -> ``convolution(avg_pool(x), w, b)`` where they
    commute and pooling first moves no more bytes (see :func:`_pool_commutes`); the
    convolution keeps the pool's name, so what read the pool reads it."""
    users = graph.users()
    outputs = {a.name for a in graph.outputs if isinstance(a, Ref)}
    taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
    replace: dict[str, tuple[Node, Node]] = {}
    drop: set[str] = set()
    for n in graph.nodes:
        src = n.args[0] if n.args else None
        if n.target not in AVG_POOLS or not isinstance(src, Ref) or not graph.has_node(src.name):
            continue
        conv = graph.node(src.name)
        if users[conv.name] != [n.name] or conv.name in outputs:
            continue
        if not _pool_commutes(graph, conv, n):
            continue
        x = conv.args[0]
        assert isinstance(x, Ref)
        xm, om = graph.meta(x.name), n.out
        name, k = f"{n.name}_of_input", 1
        while name in taken:
            name, k = f"{n.name}_of_input_{k}", k + 1
        taken.add(name)
        shape, hint = (*xm.shape[:2], *om.shape[2:]), (*xm.hint[:2], *om.hint[2:])
        pooled = Node(name, "call", n.target, (x, *n.args[1:]), n.kwargs,
                      (TensorMeta(shape, hint, contiguous_strides(hint), xm.dtype),),
                      origin=POOLED_FIRST)
        mixed = Node(n.name, "call", conv.target, (Ref(name), *conv.args[1:]), conv.kwargs,
                     n.meta, origin="the 1 x 1 convolution, after the average pool it commutes "
                     "with")
        replace[n.name] = (pooled, mixed)
        drop.add(conv.name)
    if not replace:
        return graph
    nodes = [m for n in graph.nodes if n.name not in drop for m in replace.get(n.name, (n,))]
    return graph.replace(tuple(nodes))


def _pool_commutes(graph: OpGraph, conv: Node, pool: Node) -> bool:
    """``conv`` is a 1 x 1 convolution (stride 1, no padding, not transposed, any groups) of
    the pool's rank, ``pool`` an average pool without padding, ceil mode or divisor override
    (each window's weights sum to 1, so a bias passes through), and pooling first moves no
    more bytes: input channels at most output channels times the pool's stride product."""
    nsp = AVG_POOLS[pool.target]
    if conv.target != "aten.convolution.default" or len(conv.args) < 9:
        return False
    x, w = conv.args[0], conv.args[1]
    stride, padding, _, transposed = conv.args[3:7]
    if transposed is not False or not isinstance(x, Ref) or not isinstance(w, Ref):
        return False
    wm, xm = graph.meta(w.name), graph.meta(x.name)
    if wm.rank != nsp + 2 or xm.rank != nsp + 2 or not xm.is_float:
        return False
    if any(h != 1 for h in wm.hint[2:]) or stride != (1,) * nsp or padding != (0,) * nsp:
        return False
    a = pool.args
    kernel = a[1] if len(a) > 1 else None
    pstride = a[2] if len(a) > 2 and a[2] else kernel
    ppad = a[3] if len(a) > 3 else 0
    ceil = pool.kwarg("ceil_mode") if len(a) <= 4 else a[4]
    divisor = pool.kwarg("divisor_override") if len(a) <= 6 else a[6]
    if ceil or divisor is not None or ppad not in (0, (0,), (0,) * nsp):
        return False
    if not isinstance(pstride, tuple) or not all(type(v) is int for v in pstride):
        return False
    strides = [v for v in pstride if type(v) is int]
    steps: int = math.prod(strides * (nsp if len(strides) == 1 else 1))
    return bool(xm.hint[1] <= wm.hint[0] * steps)
