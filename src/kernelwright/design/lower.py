"""Lowering: rewrite composite core-ATen operators into the primitives the templates fuse.

    _softmax(x, d)             amax -> sub -> exp -> sum -> div            (keepdim reductions)
    _log_softmax(x, d)         amax -> sub -> exp -> sum -> log -> sub
    native_layer_norm          mean -> sub -> mul -> mean -> add eps -> rsqrt -> mul (-> w, b)
    native_group_norm          view (N, G, C/G, HxW) -> the layer-norm chain -> view back
    batch norm (inference)     per-channel (x - mean) * rsqrt(var + eps) * w + b
    instance norm idiom        view(1, N*C, ...) -> batch_norm(no_stats, repeat(w)) -> view
                               becomes the layer-norm chain over the spatial dims of x itself
    linalg_vector_norm         sum(x*x) -> sqrt, sum(|x|), amax(|x|), (sum |x|^p)^(1/p)
    max.dim / min.dim          amax + argmax / amin + argmin
    var / std (correction)     mean -> sub -> square -> sum -> div (n - correction) (-> sqrt)
    mean/sum over all dims     the .dim forms over every dimension
    sum/mean/amax/amin over    a copy of the input (viewed without those dimensions when they
      extent-1 dimensions      are not kept): one value per output is its own sum, mean, max
                               and min, so what follows fuses with what came before
                               (reshapes.py)
    flip(cumsum(flip(x)))      kw.scan(x, d, "sum", reverse=True) (and cumprod)
    exclusive scans            kw.scan(x, d, "sum", exclusive=True) (and cumprod) from
                               cat([zeros, cumsum(x[:n-1])]) or cumsum(pad(x, (1, 0))[:n]):
                               the kernel reads each step's predecessor, so neither the shifted
                               copy nor the concatenation is written (scan_idioms.py)
    copy(dst, src)             src, when of dst's shape and dtype (dst.copy_(src) in a forward)
    addmm(bias, x, w)          mm(x, w) (* alpha) + bias (* beta): the bias is an element-wise
                               epilogue the GEMM kernel fuses with what follows
    convolution(x, w, bias)    convolution(x, w, None) + bias viewed (C, 1, ..., 1), for 2-D and
                               3-D convolutions (the ``conv`` kind): the bias joins the epilogue
    conv1d(x, w, bias)         the 2-D convolution of x and w unsqueezed to a height of 1 (stride,
                               padding and dilation 1, 0 and 1 along it), squeezed back, + bias:
                               PyTorch runs its own 1-D convolutions so; the 2-D templates then
                               serve them (views of the operands are free)
    sdpa(q, k, v), head dim    bmm(q, k^T) * scale (a causal one: -inf above the diagonal, by
      past 256 (fp32)          position ranges) -> the softmax chain -> bmm(p, v), over
                               (B * H) x M x D views: no flash template holds such an output
                               row block, and at such widths the two products outweigh writing
                               and reading the scores (see _wide_attention)
    mm/bmm with N or M = 1     a matrix-vector product: sum(A * x^T, K) (a row or column
                               reduction: memory-bound, so it streams the matrix once through
                               the reduction templates instead of wasting tensor-core tiles)
    reduce(view(a), dims)      view(reduce(a, dims')) where the reshape splits and merges
                               runs of dimensions that the reduction reduces whole or keeps
                               whole: it reads a in its own layout and can join a's group (a
                               group norm's output averaged over all but the batch is summed
                               inside the norm's kernel and never written; reshapes.py)
    mean(x * a + c, D)         mean(x, D) * a + c where a and c are constant along D (a norm's
                               statistics, scale and shift), for chains of add, sub, mul, div
                               and neg (a sum through mul, div and neg alone): a norm then
                               averaged over space reduces the norm's input, and the normalised
                               tensor is never written (see affine_reductions.py)
    mean/var of x over G       from per-slice statistics over C (a proper subset of G) where a
                               mean of x over C is taken anyway: x read once, per slice, and the
                               norm's statistics combined from (N, C) values (channel_statistics.py)
    op(view(a), ...)           view(op(a, ...)) for an element-wise op on a reshape of a
                               contiguous a that keeps its last dimension, when the op's other
                               tensors broadcast along that dimension alone (a bias): a Linear
                               on a (batch, seq, features) input is mm on rows then a view back,
                               and its activation then joins the product's epilogue; for any
                               reshape of a contiguous a when the op's other operands are
                               single values (a group norm's (N, G, C/G, HxW) output viewed
                               back to (N, C, H, W), then SiLU: the activation joins the norm's
                               kernel; reshapes.py)
    table[index] read twice    one copy of the lookup (and the views after it) per reader, so
                               each reader's kernel loads the rows itself (lookup_copies.py);
    arange read twice          likewise, one copy a reader: each kernel computes the range
    avg_pool(conv_1x1(x))      conv_1x1(avg_pool(x)): a 1 x 1 convolution (stride 1, no padding)
                               mixes channels pixel by pixel and an average pool (no padding,
                               floor mode, no divisor override) averages pixels channel by
                               channel; both are linear and the pool's weights sum to 1, so they
                               commute, bias included, and pooling first gives the convolution
                               a fraction of the pixels (a DenseNet transition's BN, ReLU, 1 x 1
                               convolution, 2 x 2 pool). Where the convolution reads as many
                               input channels as its outputs times the pool's stride or fewer,
                               so no more bytes move (pool_first.py)

Every primitive is itself an ATen operator (except ``kw.scan``), so a lowered graph still runs
in PyTorch: whatever fusion cannot cover stays executable as framework calls.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from kernelwright.design.affine_reductions import reductions_through_affine
from kernelwright.design.aten import conv_args
from kernelwright.design.builder import (
    Builder,
    broadcast_meta,
    contiguous_strides,
    meta_like,
    meta_reduced,
    meta_shape,
    meta_swapped,
)
from kernelwright.design.channel_statistics import statistics_from_finer_means
from kernelwright.design.graph import Arg, Node, OpGraph, Ref, TensorMeta
from kernelwright.design.lookup_copies import clone_lookups
from kernelwright.design.pool_first import pool_before_pointwise_conv
from kernelwright.design.reshapes import (
    reductions_before_reshapes,
    sink_reshapes,
    unit_reductions,
)
from kernelwright.design.scan_idioms import exclusive_scans, reverse_scans

Rule = Callable[[Builder, Node, dict[str, list[Node]]], dict[int, Arg] | None]


def lower(graph: OpGraph) -> OpGraph:
    """Apply every lowering rule once, in execution order; see the module docstring."""
    graph = exclusive_scans(reverse_scans(pool_before_pointwise_conv(graph)))
    b = Builder(graph)
    getitems: dict[str, list[Node]] = {}
    for n in graph.nodes:
        if n.kind == "getitem" and isinstance(n.args[0], Ref):
            getitems.setdefault(n.args[0].name, []).append(n)
    lowered: dict[str, dict[int, Arg]] = {}
    for n in graph.nodes:
        if n.kind == "getitem" and isinstance(n.args[0], Ref) and n.args[0].name in lowered:
            outs = lowered[n.args[0].name]
            idx = int(n.args[1])  # type: ignore[arg-type]
            if idx in outs:
                b.alias[n.name] = outs[idx]
                continue
            raise AssertionError(f"lowered {n.args[0].name} lacks output {idx}")
        rule = RULES.get(n.target)
        if rule is not None:
            remapped = Node(
                n.name,
                n.kind,
                n.target,
                tuple(b.remap(a) for a in n.args),
                tuple((k, b.remap(v)) for k, v in n.kwargs),
                n.meta,
            )
            made = rule(b, remapped, getitems)
            if made is not None:
                if n.kind == "call" and len(n.meta) == 1 and 0 in made:
                    b.alias[n.name] = made[0]
                lowered[n.name] = made
                continue
        b.keep(n)
    outputs = tuple(b.remap(a) for a in graph.outputs)
    lowered_graph = statistics_from_finer_means(reductions_through_affine(
        reductions_before_reshapes(
            unit_reductions(graph.replace(tuple(b.nodes), outputs).pruned()))))
    if b.held:  # sizes a rule wrote a value of into the graph (a default attention scale)
        lowered_graph = lowered_graph.with_held(tuple(sorted({*lowered_graph.held, *b.held})))
    return clone_lookups(sink_reshapes(lowered_graph))


def _used_outputs(node: Node, getitems: dict[str, list[Node]]) -> set[int]:
    return {int(g.args[1]) for g in getitems.get(node.name, [])}  # type: ignore[arg-type]


# -- rules ---------------------------------------------------------------------------------


def _copy(b: Builder, n: Node, _: dict[str, list[Node]]) -> dict[int, Arg] | None:
    """``copy(dst, src)`` (a forward's ``dst.copy_(src)``, functional) of a source of the same
    shape and dtype is the source: the destination's values are never read, nor its device
    (a CPU attribute the forward writes a GPU input into)."""
    dst, src = n.args[0], n.args[1]
    if not isinstance(dst, Ref) or not isinstance(src, Ref) or len(n.meta) != 1:
        return None
    sm = b.meta(src)
    if sm.shape != n.out.shape or sm.dtype != n.out.dtype:
        return None
    return {0: src}


def _softmax(b: Builder, n: Node, _: dict[str, list[Node]]) -> dict[int, Arg] | None:
    found = _shifted_exp_sum(b, n)
    if found is None:
        return None
    _shifted, e, s = found
    return {0: b.binary(n.name, "div", e, s)}


def _log_softmax(b: Builder, n: Node, _: dict[str, list[Node]]) -> dict[int, Arg] | None:
    found = _shifted_exp_sum(b, n)
    if found is None:
        return None
    shifted, _e, s = found
    log_s = b.unary(f"{n.name}_log_sum", "log", s)
    return {0: b.binary(n.name, "sub", shifted, log_s)}


def _shifted_exp_sum(b: Builder, n: Node) -> tuple[Ref, Ref, Ref] | None:
    """``x - max(x)``, its exp and their sum along ``dim`` (the softmax family's common part);
    None for integer inputs."""
    x, dim = n.args[0], int(n.args[1])  # type: ignore[arg-type]
    if not b.meta(x).is_float:
        return None
    m = b.reduce(f"{n.name}_max", "amax", x, [dim])
    shifted = b.binary(f"{n.name}_shifted", "sub", x, m)
    e = b.unary(f"{n.name}_exp", "exp", shifted)
    return shifted, e, b.reduce(f"{n.name}_sum", "sum", e, [dim])


def _normalise(
    b: Builder, base: str, x: Arg, dims: Sequence[int], eps: float
) -> tuple[Ref, Ref, Ref]:
    """mean, rstd and (x - mean) * rstd over ``dims`` (keepdim), two-pass variance."""
    mean = b.reduce(f"{base}_mean", "mean", x, dims)
    centred = b.binary(f"{base}_centred", "sub", x, mean)
    sq = b.binary(f"{base}_sq", "mul", centred, centred)
    var = b.reduce(f"{base}_var", "mean", sq, dims)
    var_eps = b.binary(f"{base}_var_eps", "add", var, eps)
    rstd = b.unary(f"{base}_rstd", "rsqrt", var_eps)
    return mean, rstd, b.binary(f"{base}_normed", "mul", centred, rstd)


def _layer_norm(b: Builder, n: Node, gi: dict[str, list[Node]]) -> dict[int, Arg] | None:
    x, normalized, w, bias, eps = n.args[:5]
    mx = b.meta(x)
    k = len(normalized) if isinstance(normalized, tuple) else 1
    dims = list(range(mx.rank - k, mx.rank))
    mean, rstd, y = _normalise(b, n.name, x, dims, float(eps))  # type: ignore[arg-type]
    if w is not None:
        y = b.binary(f"{n.name}_scaled", "mul", y, w)
    if bias is not None:
        y = b.binary(f"{n.name}_shifted", "add", y, bias)
    return {0: y, 1: mean, 2: rstd}


def _group_norm(b: Builder, n: Node, gi: dict[str, list[Node]]) -> dict[int, Arg] | None:
    if _used_outputs(n, gi) - {0}:
        return None
    x, w, bias, size_n, channels, hxw, groups, eps = n.args[:8]
    if not isinstance(channels, int) or not isinstance(groups, int) or channels % groups:
        return None
    mx = b.meta(x)
    cg = channels // groups
    hw_hint = 1
    for h in mx.hint[2:]:
        hw_hint *= h
    hw_shape = "*".join(f"({s})" for s in mx.shape[2:]) or "1"
    xv = b.view(
        f"{n.name}_grouped",
        x,
        (size_n, groups, cg, hxw),
        (mx.shape[0], str(groups), str(cg), hw_shape),
        (mx.hint[0], groups, cg, hw_hint),
    )
    _, _, y = _normalise(b, n.name, xv, [2, 3], float(eps))  # type: ignore[arg-type]
    if w is not None:
        wv = b.view(
            f"{n.name}_weight", w, (groups, cg, 1), (str(groups), str(cg), "1"), (groups, cg, 1)
        )
        y = b.binary(f"{n.name}_scaled", "mul", y, wv)
    if bias is not None:
        bv = b.view(
            f"{n.name}_bias", bias, (groups, cg, 1), (str(groups), str(cg), "1"), (groups, cg, 1)
        )
        y = b.binary(f"{n.name}_shifted", "add", y, bv)
    xr = x if isinstance(x, Ref) else None
    assert xr is not None
    sizes = tuple(
        b.sym_size(xr, d) if not mx.shape[d].isdigit() else int(mx.shape[d]) for d in range(mx.rank)
    )
    return {0: b.view(f"{n.name}_out", y, sizes, mx.shape, mx.hint)}


def _channel_view(b: Builder, base: str, p: Arg, rank: int) -> Arg:
    """A per-channel (C,) vector viewed as (C, 1, ..., 1): broadcasts over dim 1 of the input."""
    if p is None:
        return None
    mp = b.meta(p)
    ones = rank - 2
    return b.view(
        base,
        p,
        (mp.hint[0],) + (1,) * ones,
        (mp.shape[0],) + ("1",) * ones,
        (mp.hint[0],) + (1,) * ones,
    )


def _batch_norm_inference(b: Builder, n: Node, gi: dict[str, list[Node]]) -> dict[int, Arg] | None:
    if _used_outputs(n, gi) - {0}:
        return None
    x, w, bias, mean, var, _momentum, eps = n.args[:7]
    rank = b.meta(x).rank
    if rank < 2 or mean is None or var is None:
        return None
    mv = _channel_view(b, f"{n.name}_mean", mean, rank)
    vv = _channel_view(b, f"{n.name}_var", var, rank)
    centred = b.binary(f"{n.name}_centred", "sub", x, mv)
    var_eps = b.binary(f"{n.name}_var_eps", "add", vv, float(eps))  # type: ignore[arg-type]
    rstd = b.unary(f"{n.name}_rstd", "rsqrt", var_eps)
    y = b.binary(f"{n.name}_normed", "mul", centred, rstd)
    if w is not None:
        y = b.binary(f"{n.name}_scaled", "mul", y, _channel_view(b, f"{n.name}_weight", w, rank))
    if bias is not None:
        y = b.binary(f"{n.name}_shifted", "add", y, _channel_view(b, f"{n.name}_bias", bias, rank))
    return {0: y}


def _instance_norm(b: Builder, n: Node, gi: dict[str, list[Node]]) -> dict[int, Arg] | None:
    """``view(x, [1, N*C, *S]) -> batch_norm(no_stats, repeat(w, [N]), ...)`` on x itself."""
    if _used_outputs(n, gi) - {0}:
        return None
    v, w, bias, training, _momentum, eps = n.args[:6]
    if not training or not isinstance(v, Ref) or not b.graph.has_node(v.name):
        return None
    view = _find_node(b, v.name)
    if view is None or view.target not in ("aten.view.default", "aten._unsafe_view.default"):
        return None
    x = view.args[0]
    if not isinstance(x, Ref):
        return None
    mx, mv = b.meta(x), b.meta(v)
    if mv.hint[0] != 1 or mx.rank != mv.rank or mx.rank < 3:
        return None
    if mv.hint[1] != mx.hint[0] * mx.hint[1] or mv.hint[2:] != mx.hint[2:]:
        return None
    params: list[Arg] = []
    for p in (w, bias):
        if p is None:
            params.append(None)
            continue
        rep = _find_node(b, p.name) if isinstance(p, Ref) else None
        if rep is None or rep.target != "aten.repeat.default" or len(rep.args[1]) != 1:  # type: ignore[arg-type]
            return None
        params.append(_channel_view(b, f"{n.name}_{len(params)}", rep.args[0], mx.rank))
    _, _, y = _normalise(b, n.name, x, list(range(2, mx.rank)), float(eps))  # type: ignore[arg-type]
    if params[0] is not None:
        y = b.binary(f"{n.name}_scaled", "mul", y, params[0])
    if params[1] is not None:
        y = b.binary(f"{n.name}_shifted", "add", y, params[1])
    return {0: b.view(f"{n.name}_flat", y, view.args[1], mv.shape, mv.hint)}  # type: ignore[arg-type]


def _find_node(b: Builder, name: str) -> Node | None:
    for node in reversed(b.nodes):
        if node.name == name:
            return node
    return b.graph.node(name) if b.graph.has_node(name) else None


def _vector_norm(b: Builder, n: Node, _: dict[str, list[Node]]) -> dict[int, Arg] | None:
    x = n.args[0]
    p = n.args[1] if len(n.args) > 1 else 2.0
    dims = n.args[2] if len(n.args) > 2 else None
    keepdim = bool(n.args[3]) if len(n.args) > 3 else False
    mx = b.meta(x)
    if not mx.is_float or n.kwarg("dtype") is not None:
        return None
    dl = [int(d) for d in dims] if isinstance(dims, tuple) and dims else list(range(mx.rank))  # type: ignore[arg-type]
    if p == 2 or p == 2.0:
        sq = b.binary(f"{n.name}_sq", "mul", x, x)
        s = b.reduce(f"{n.name}_sum", "sum", sq, dl, keepdim)
        return {0: b.unary(n.name, "sqrt", s)}
    a = b.unary(f"{n.name}_abs", "abs", x)
    if p == 1 or p == 1.0:
        return {0: b.reduce(n.name, "sum", a, dl, keepdim)}
    if p == float("inf"):
        return {0: b.reduce(n.name, "amax", a, dl, keepdim)}
    if isinstance(p, int | float) and p > 0:
        powd = b.emit(f"{n.name}_pow", "aten.pow.Tensor_Scalar", (a, float(p)), meta_like(mx))
        s = b.reduce(f"{n.name}_sum", "sum", powd, dl, keepdim)
        return {
            0: b.emit(n.name, "aten.pow.Tensor_Scalar", (s, 1.0 / float(p)), meta_like(b.meta(s)))
        }
    return None


def _max_min_dim(op: str) -> Rule:
    def rule(b: Builder, n: Node, gi: dict[str, list[Node]]) -> dict[int, Arg] | None:
        x, dim = n.args[0], int(n.args[1])  # type: ignore[arg-type]
        keepdim = bool(n.args[2]) if len(n.args) > 2 else False
        mx = b.meta(x)
        outs: dict[int, Arg] = {
            0: b.reduce(f"{n.name}_values", "amax" if op == "max" else "amin", x, [dim], keepdim)
        }
        if 1 in _used_outputs(n, gi):
            target = "aten.argmax.default" if op == "max" else "aten.argmin.default"
            outs[1] = b.emit(
                f"{n.name}_indices",
                target,
                (x, dim, keepdim),
                meta_reduced(mx, [dim], keepdim, "int64"),
            )
        return outs

    return rule


def _var_std(std: bool) -> Rule:
    def rule(b: Builder, n: Node, _: dict[str, list[Node]]) -> dict[int, Arg] | None:
        x = n.args[0]
        mx = b.meta(x)
        dims = n.args[1] if len(n.args) > 1 and n.args[1] is not None else tuple(range(mx.rank))
        correction = n.kwarg("correction", 1)
        keepdim = bool(n.kwarg("keepdim", False))
        if not isinstance(dims, tuple) or not mx.is_float:
            return None
        dl = [int(d) for d in dims]  # type: ignore[arg-type]
        mean = b.reduce(f"{n.name}_mean", "mean", x, dl)
        centred = b.binary(f"{n.name}_centred", "sub", x, mean)
        sq = b.binary(f"{n.name}_sq", "mul", centred, centred)
        s = b.reduce(f"{n.name}_sum", "sum", sq, dl, keepdim)
        count = 1
        for d in dl:
            count *= mx.hint[d]
        if any(not mx.shape[d].isdigit() for d in dl):
            return None  # the divisor must be a runtime size; leave it to the framework
        var = b.binary(
            f"{n.name}_var" if std else n.name,
            "div",
            s,
            float(max(count - float(correction or 0), 0)),
        )  # type: ignore[arg-type]
        return {0: b.unary(n.name, "sqrt", var) if std else var}

    return rule


def _addmm(b: Builder, n: Node, _: dict[str, list[Node]]) -> dict[int, Arg] | None:
    """``beta * bias + alpha * (x @ w)`` as ``mm`` then element-wise ops (PyTorch's order of
    the two terms does not matter: the sum is commutative in floating point too)."""
    bias, x, w = n.args[:3]
    alpha, beta = n.kwarg("alpha", 1), n.kwarg("beta", 1)
    if not isinstance(x, Ref) or not isinstance(w, Ref):
        return None
    mm = Node(f"{n.name}_mm", "call", "aten.mm.default", (x, w), (), (meta_like(n.out),))
    product: Arg = _product(b, mm)
    if alpha != 1:
        product = b.binary(f"{n.name}_alpha", "mul", product, alpha)
    if beta == 0:
        return {0: product}
    term = b.binary(f"{n.name}_beta", "mul", bias, beta) if beta != 1 else bias
    return {0: b.binary(n.name, "add", product, term)}


def _convolution(b: Builder, n: Node, gi: dict[str, list[Node]]) -> dict[int, Arg] | None:
    """A 1-D convolution as a 2-D one (:func:`_conv_1d`); a 2-D or 3-D one's bias after it
    (:func:`_conv_bias`)."""
    return _conv_1d(b, n) or _conv_bias(b, n, gi)


def _conv_1d(b: Builder, n: Node) -> dict[int, Arg] | None:
    """``convolution(x, w, bias)`` of N x C x L input as the 2-D convolution of x and w
    unsqueezed to N x C x 1 x L and O x I x 1 x K (unit stride and dilation, no padding along
    the new height: the output's height is 1 for a transposed convolution too), squeezed back to
    N x O x L_out; the bias is added after it, as :func:`_conv_bias` does."""
    if len(n.args) < 9:
        return None
    x, w, bias, stride, padding, dilation, transposed, output_padding, groups = n.args[:9]
    one = [t[0] for t in (stride, padding, dilation, output_padding)
           if isinstance(t, tuple) and len(t) == 1 and type(t[0]) is int]
    if len(one) != 4:
        return None
    s, p, d, op = one
    if not isinstance(x, Ref) or not isinstance(w, Ref) or type(transposed) is not bool:
        return None
    if b.meta(x).rank != 3 or b.meta(w).rank != 3 or type(groups) is not int:
        return None  # an unbatched input (C x L): left as it is
    x2 = b.emit(f"{n.name}_rows", "aten.unsqueeze.default", (x, 2), _unsqueezed(b.meta(x)))
    w2 = b.emit(f"{n.name}_taps", "aten.unsqueeze.default", (w, 2), _unsqueezed(b.meta(w)))
    args = (x2, w2, None, (1, s), (0, p), (1, d), transposed, (0, op), groups)
    conv = b.emit(f"{n.name}_2d", n.target, args, _unsqueezed(n.out), n.kwargs)
    out = b.emit(f"{n.name}_1d", "aten.squeeze.dim", (conv, 2), meta_like(n.out))
    if not isinstance(bias, Ref):
        return {0: out}
    view = _channel_view(b, f"{n.name}_bias", bias, 3)
    return {0: b.binary(n.name, "add", out, view)}


def _unsqueezed(m: TensorMeta) -> TensorMeta:
    """``m`` (N x C x L) with a dimension of size 1 inserted at 2, as ``unsqueeze(2)`` strides
    it."""
    stride = m.strides[2] * m.hint[2]
    return TensorMeta(
        (*m.shape[:2], "1", m.shape[2]), (*m.hint[:2], 1, m.hint[2]),
        (*m.strides[:2], stride, m.strides[2]), m.dtype,
    )


def _conv_bias(b: Builder, n: Node, _: dict[str, list[Node]]) -> dict[int, Arg] | None:
    """A 2-D or 3-D convolution's bias as an element-wise add after it: the implicit-GEMM
    templates apply it with the rest of the epilogue on the accumulator."""
    bias = n.args[2]
    if conv_args(n) is None or not isinstance(bias, Ref):
        return None
    args = (*n.args[:2], None, *n.args[3:])
    conv = b.emit(f"{n.name}_nobias", n.target, args, meta_like(n.out), n.kwargs)
    view = _channel_view(b, f"{n.name}_bias", bias, n.out.rank)
    return {0: b.binary(n.name, "add", conv, view)}


# The widest head dim a flash template holds (``attention-flash-wide``): its block of output rows
# stays in registers. Past it, attention is written out as PyTorch's math path computes it. Each
# score then costs 2 (D + Dv) >= 1024 FLOPs of the two products against 16 bytes of traffic
# (written and read as a score, then as a probability), so the products dominate; the scores'
# bytes are capped so that writing them out never takes a large part of the device's memory.
WIDEST_FLASH_HEAD_DIM = 256
MAX_SCORE_BYTES = 1 << 32


def _wide_attention(b: Builder, n: Node, _: dict[str, list[Node]]) -> dict[int, Arg] | None:
    """``scaled_dot_product_attention(q, k, v)`` of fp32 (B, H, M, D) operands whose head dim
    passes :data:`WIDEST_FLASH_HEAD_DIM`, with no mask, dropout or grouped heads (causal or not):
    ``bmm(q, k^T) * scale``, the softmax chain over keys, ``bmm(p, v)``, on (B * H)-batched
    views (reshapes where an operand's strides do not allow a view)."""
    q, k, v = n.args[:3]
    rest = dict(zip(("attn_mask", "dropout_p", "is_causal"), n.args[3:6], strict=False))
    causal = rest.get("is_causal", n.kwarg("is_causal", False))
    plain = (
        rest.get("attn_mask", n.kwarg("attn_mask")) is None
        and not rest.get("dropout_p", n.kwarg("dropout_p", 0.0))
        and type(causal) is bool
        and not n.kwarg("enable_gqa", False)
    )
    if not plain or not isinstance(q, Ref) or not isinstance(k, Ref) or not isinstance(v, Ref):
        return None
    qm, km, vm = b.meta(q), b.meta(k), b.meta(v)
    if any(m.rank != 4 or m.dtype != "float32" for m in (qm, km, vm)):
        return None
    if not qm.hint[:2] == km.hint[:2] == vm.hint[:2] or max(qm.hint[3], vm.hint[3]) <= (
        WIDEST_FLASH_HEAD_DIM
    ):
        return None
    if math.prod(qm.hint[:3]) * km.hint[2] * 4 > MAX_SCORE_BYTES:
        return None
    scale = n.kwarg("scale")
    if scale is None:
        # SDPA's default scale is 1/sqrt(head dim), a literal here: the head dim must be fixed,
        # or a user-input size the ModelNew then holds (refusing other head dims)
        if not qm.shape[3].isdigit():
            source = [(s.input, s.dim) for s in b.graph.symbols if s.name == qm.shape[3]]
            if not source:
                return None  # a size computed from others
            b.held.append(source[0])
        scale = 1.0 / math.sqrt(qm.hint[3])
    if not isinstance(scale, int | float):
        return None
    batch, heads, rows, depth = (b.sym_size(q, d) for d in range(4))
    keys, width = b.sym_size(k, 2), b.sym_size(v, 3)
    q3 = _heads_flat(b, f"{n.name}_q", q, (rows, depth))
    k3 = _heads_flat(b, f"{n.name}_k", k, (keys, b.sym_size(k, 3)))
    v3 = _heads_flat(b, f"{n.name}_v", v, (keys, width))
    kt = b.emit(f"{n.name}_kt", "aten.permute.default", (k3, (0, 2, 1)), meta_swapped(b.meta(k3)))
    bh, m_, n_ = b.meta(q3).shape[0], qm.shape[2], km.shape[2]
    score_meta = meta_shape((bh, m_, n_), (b.meta(q3).hint[0], qm.hint[2], km.hint[2]),
                            "float32")
    scores = b.emit(f"{n.name}_scores", "aten.bmm.default", (q3, kt), score_meta)
    scaled = b.binary(f"{n.name}_scaled", "mul", scores, scale)
    if causal:
        scaled = _causal(b, n.name, scaled, rows, keys)
    m = b.reduce(f"{n.name}_max", "amax", scaled, [2])
    e = b.unary(f"{n.name}_exp", "exp", b.binary(f"{n.name}_shifted", "sub", scaled, m))
    p = b.binary(f"{n.name}_p", "div", e, b.reduce(f"{n.name}_sum", "sum", e, [2]))
    out_meta = meta_shape((bh, m_, vm.shape[3]), (score_meta.hint[0], qm.hint[2], vm.hint[3]),
                          "float32")
    out = b.emit(f"{n.name}_out", "aten.bmm.default", (p, v3), out_meta)
    back = b.emit(n.name, "aten.view.default", (out, (batch, heads, rows, width)),
                  meta_like(n.out))
    return {0: back}


def _causal(b: Builder, base: str, scores: Ref, rows: Ref, keys: Ref) -> Ref:
    """``scores`` where key j <= query i (SDPA's ``is_causal``: the top-left triangle), -inf
    elsewhere: two position ranges and a comparison, so the product's tiles above the diagonal
    are skipped (``gemm/masked_tiles.py``); every row keeps its first key, so none is empty."""
    sm = b.meta(scores)
    q_pos = b.emit(f"{base}_query_pos", "aten.arange.start_step", (0, rows),
                   meta_shape((sm.shape[1],), (sm.hint[1],), "int64"))
    column = b.emit(f"{base}_query_col", "aten.unsqueeze.default", (q_pos, -1),
                    meta_shape((sm.shape[1], "1"), (sm.hint[1], 1), "int64"))
    k_pos = b.emit(f"{base}_key_pos", "aten.arange.start_step", (0, keys),
                   meta_shape((sm.shape[2],), (sm.hint[2],), "int64"))
    allowed = b.emit(f"{base}_allowed", "aten.le.Tensor", (k_pos, column),
                     meta_shape(sm.shape[1:], sm.hint[1:], "bool"))
    never = b.emit(f"{base}_masked_out", "aten.scalar_tensor.default", (float("-inf"),),
                   TensorMeta((), (), (), "float32"))
    return b.emit(f"{base}_causal", "aten.where.self", (allowed, scores, never), meta_like(sm))


def _heads_flat(b: Builder, base: str, t: Ref, inner: tuple[Ref, Ref]) -> Ref:
    """(B, H, X, Y) as (B * H, X, Y): a view where the strides allow one (else a copy)."""
    m = b.meta(t)
    shape = (f"({m.shape[0]})*({m.shape[1]})", m.shape[2], m.shape[3])
    meta = meta_shape(shape, (m.hint[0] * m.hint[1], m.hint[2], m.hint[3]), m.dtype)
    return b.emit(base, "aten.reshape.default", (t, (-1, *inner)), meta)


def _product(b: Builder, mm: Node) -> Ref:
    """The matrix product ``mm`` (not yet in the graph): a reduction for a matrix-vector
    product, else the node itself under a fresh name."""
    made = _matvec(b, mm, {})
    if made is not None:
        found = made[0]
        assert isinstance(found, Ref)
        return found
    return b.emit(mm.name, mm.target, mm.args, mm.out)


def _matvec(b: Builder, n: Node, _: dict[str, list[Node]]) -> dict[int, Arg] | None:
    """``A @ x`` with x one column (N = 1) as ``sum(A * x^T, -1)``, and ``x @ B`` with x one
    row (M = 1) as ``sum(x^T * B, -2)``: the product becomes the mul and sum the reduction
    templates fuse into one sweep (the element-wise product is never stored)."""
    lhs, rhs = n.args[0], n.args[1]
    if not isinstance(lhs, Ref) or not isinstance(rhs, Ref):
        return None
    lm, rm = b.meta(lhs), b.meta(rhs)
    rank = lm.rank
    swap = tuple(range(rank - 2)) + (rank - 1, rank - 2)  # the last two dims exchanged
    if rm.shape[-1] == "1":
        column = b.emit(f"{n.name}_vec", "aten.permute.default", (rhs, swap), meta_swapped(rm))
        terms = b.binary(f"{n.name}_terms", "mul", lhs, column)
        return {0: b.reduce(n.name, "sum", terms, [rank - 1])}
    if lm.shape[-2] == "1":
        row = b.emit(f"{n.name}_vec", "aten.permute.default", (lhs, swap), meta_swapped(lm))
        terms = b.binary(f"{n.name}_terms", "mul", row, rhs)
        return {0: b.reduce(n.name, "sum", terms, [rank - 2])}
    return None


def _reduce_all(op: str) -> Rule:
    def rule(b: Builder, n: Node, _: dict[str, list[Node]]) -> dict[int, Arg] | None:
        x = n.args[0]
        mx = b.meta(x)
        if n.kwarg("dtype") is not None or mx.rank == 0:
            return None
        return {0: b.reduce(n.name, op, x, list(range(mx.rank)), False)}

    return rule


RULES: dict[str, Rule] = {
    "aten._softmax.default": _softmax,
    "aten._log_softmax.default": _log_softmax,
    "aten.native_layer_norm.default": _layer_norm,
    "aten.native_group_norm.default": _group_norm,
    "aten._native_batch_norm_legit_no_training.default": _batch_norm_inference,
    "aten._native_batch_norm_legit.no_stats": _instance_norm,
    "aten.linalg_vector_norm.default": _vector_norm,
    "aten.max.dim": _max_min_dim("max"),
    "aten.min.dim": _max_min_dim("min"),
    "aten.var.correction": _var_std(False),
    "aten.std.correction": _var_std(True),
    "aten.mean.default": _reduce_all("mean"),
    "aten.sum.default": _reduce_all("sum"),
    "aten.addmm.default": _addmm,
    "aten.convolution.default": _convolution,
    "aten.mm.default": _matvec,
    "aten.scaled_dot_product_attention.default": _wide_attention,
    "aten.bmm.default": _matvec,
    "aten.copy.default": _copy,
}


__all__ = ["Builder", "broadcast_meta", "contiguous_strides", "lower", "meta_like", "meta_reduced"]
