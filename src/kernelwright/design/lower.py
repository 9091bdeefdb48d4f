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
    flip(cumsum(flip(x)))      kw.scan(x, d, "sum", reverse=True) (and cumprod)
    exclusive scans            kw.scan(x, d, "sum", exclusive=True) (and cumprod) from
                               cat([zeros, cumsum(x[:n-1])]) or cumsum(pad(x, (1, 0))[:n]):
                               the kernel reads each step's predecessor, so neither the shifted
                               copy nor the concatenation is written
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
                               inside the norm's kernel and never written)
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
                               kernel)
    table[index] read twice    one copy of the lookup (and the views after it) per reader, so
                               each reader's kernel loads the rows itself (see _clone_lookups);
    arange read twice          likewise, one copy a reader: each kernel computes the range
    avg_pool(conv_1x1(x))      conv_1x1(avg_pool(x)): a 1 x 1 convolution (stride 1, no padding)
                               mixes channels pixel by pixel and an average pool (no padding,
                               floor mode, no divisor override) averages pixels channel by
                               channel; both are linear and the pool's weights sum to 1, so they
                               commute, bias included, and pooling first gives the convolution
                               a fraction of the pixels (a DenseNet transition's BN, ReLU, 1 x 1
                               convolution, 2 x 2 pool). Where the convolution reads as many
                               input channels as its outputs times the pool's stride or fewer,
                               so no more bytes move (see _pool_before_pointwise_conv)

Every primitive is itself an ATen operator (except ``kw.scan``), so a lowered graph still runs
in PyTorch: whatever fusion cannot cover stays executable as framework calls.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

from kernelwright.design.affine_reductions import reductions_through_affine
from kernelwright.design.aten import classify, conv_args, lookup_fusible
from kernelwright.design.builder import (
    Builder,
    broadcast_meta,
    contiguous_strides,
    fresh_name,
    meta_like,
    meta_reduced,
    meta_shape,
    meta_swapped,
)
from kernelwright.design.channel_statistics import statistics_from_finer_means
from kernelwright.design.graph import Arg, Node, OpGraph, Ref, TensorMeta

Rule = Callable[[Builder, Node, dict[str, list[Node]]], dict[int, Arg] | None]


def lower(graph: OpGraph) -> OpGraph:
    """Apply every lowering rule once, in execution order; see the module docstring."""
    graph = _exclusive_scans(_reverse_scans(_pool_before_pointwise_conv(graph)))
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
        _reductions_before_reshapes(
            _unit_reductions(graph.replace(tuple(b.nodes), outputs).pruned()))))
    if b.held:  # sizes a rule wrote a value of into the graph (a default attention scale)
        lowered_graph = lowered_graph.with_held(tuple(sorted({*lowered_graph.held, *b.held})))
    return _clone_lookups(_sink_reshapes(lowered_graph))


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


UNIT_REDUCTIONS = ("aten.sum.dim_IntList", "aten.mean.dim", "aten.amax.default",
                   "aten.amin.default")


def _unit_reductions(graph: OpGraph) -> OpGraph:
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


def _reductions_before_reshapes(graph: OpGraph) -> OpGraph:
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


def _sink_reshapes(graph: OpGraph) -> OpGraph:
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


AVG_POOLS = {"aten.avg_pool2d.default": 2, "aten.avg_pool3d.default": 3}
POOLED_FIRST = "pooled before its 1 x 1 convolution (both linear: they commute)"


def _pool_before_pointwise_conv(graph: OpGraph) -> OpGraph:
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


def _reverse_scans(graph: OpGraph) -> OpGraph:
    """``flip(cumsum(flip(x, [d]), d), [d])`` -> ``kw.scan(x, d, "sum", True)`` (and cumprod)."""
    users = graph.users()
    replace: dict[str, Node] = {}
    drop: set[str] = set()
    for n in graph.nodes:
        if n.target != "aten.flip.default" or not isinstance(n.args[0], Ref):
            continue
        scan = graph.node(n.args[0].name) if graph.has_node(n.args[0].name) else None
        if scan is None or scan.target not in ("aten.cumsum.default", "aten.cumprod.default"):
            continue
        if scan.kwarg("dtype") is not None or not isinstance(scan.args[0], Ref):
            continue
        inner = graph.node(scan.args[0].name) if graph.has_node(scan.args[0].name) else None
        if inner is None or inner.target != "aten.flip.default":
            continue
        rank = scan.out.rank
        d = int(scan.args[1]) % rank  # type: ignore[arg-type]
        dims_outer = tuple(int(x) % rank for x in n.args[1])  # type: ignore[union-attr,arg-type]
        dims_inner = tuple(int(x) % rank for x in inner.args[1])  # type: ignore[union-attr,arg-type]
        if dims_outer != (d,) or dims_inner != (d,):
            continue
        if len(users[scan.name]) != 1 or len(users[inner.name]) != 1:
            continue
        kind = "sum" if scan.target == "aten.cumsum.default" else "prod"
        replace[n.name] = Node(
            n.name, "call", "kw.scan", (inner.args[0], d, kind, True), (), n.meta
        )
        drop.update({scan.name, inner.name})
    if not replace:
        return graph
    nodes = tuple(replace.get(n.name, n) for n in graph.nodes if n.name not in drop)
    return graph.replace(nodes)


SCAN_KINDS = {"aten.cumsum.default": "sum", "aten.cumprod.default": "prod"}
NEUTRAL = {"sum": 0, "prod": 1}
# constant tensors: (target, position of the fill value; None: the value is in the name)
FILLS = {
    "aten.full_like.default": 1,
    "aten.full.default": 1,
    "aten.zeros_like.default": None,
    "aten.ones_like.default": None,
    "aten.new_zeros.default": None,
    "aten.new_ones.default": None,
}
FILL_VALUES = {"aten.zeros_like.default": 0, "aten.ones_like.default": 1,
               "aten.new_zeros.default": 0, "aten.new_ones.default": 1}


def _exclusive_scans(graph: OpGraph) -> OpGraph:
    """An exclusive scan (each position gets the scan of the positions before it) written as a
    scan of a shifted tensor becomes ``kw.scan(x, d, kind, False, True)``:

        cat([fill, cumsum(x[..., :n-1], d)], d)        fill: the neutral value, extent 1 along d
        cumsum(pad(x, (1, 0) along d, neutral)[..., :n], d)

    (and cumprod with 1). Every intermediate must have no other reader."""
    users = graph.users()
    outputs = set(graph.output_names())
    replace: dict[str, Node] = {}
    drop: set[str] = set()

    def only_for(name: str) -> bool:  # read once, and not a forward output
        return len(users.get(name, [])) == 1 and name not in outputs

    for n in graph.nodes:
        found = _exclusive_of_cat(graph, n, only_for) or _exclusive_of_pad(graph, n, only_for)
        if found is None:
            continue
        x, d, kind, dead = found
        replace[n.name] = Node(n.name, "call", "kw.scan", (x, d, kind, False, True), (), n.meta)
        drop.update(dead)
    if not replace:
        return graph
    nodes = tuple(replace.get(n.name, n) for n in graph.nodes if n.name not in drop)
    return graph.replace(nodes).pruned()


def _scan_of(graph: OpGraph, a: Arg) -> tuple[Node, str] | None:
    """The plain cumsum/cumprod node ``a`` names, and its kind."""
    node = graph.node(a.name) if isinstance(a, Ref) and graph.has_node(a.name) else None
    if node is None or node.target not in SCAN_KINDS or node.kwarg("dtype") is not None:
        return None
    return node, SCAN_KINDS[node.target]


def _exclusive_of_cat(
    graph: OpGraph, n: Node, only_for: Callable[[str], bool]
) -> tuple[Ref, int, str, set[str]] | None:
    """``cat([fill, scan(x[:n-1])], d)``: (x, d, kind, nodes it replaces)."""
    if n.target != "aten.cat.default" or not n.meta:
        return None
    pieces = n.args[0]
    if not isinstance(pieces, tuple) or len(pieces) != 2:
        return None
    fill_ref, scan_ref = pieces
    scanned = _scan_of(graph, scan_ref)
    if scanned is None or not isinstance(fill_ref, Ref) or not graph.has_node(fill_ref.name):
        return None
    scan, kind = scanned
    rank = n.out.rank
    d = int(n.args[1]) % rank if len(n.args) > 1 else 0  # type: ignore[arg-type]
    src = scan.args[0]
    head = graph.node(src.name) if isinstance(src, Ref) and graph.has_node(src.name) else None
    if head is None or int(scan.args[1]) % rank != d or not only_for(scan.name):  # type: ignore[arg-type]
        return None
    x = _prefix_source(graph, head, d, only_for)
    if x is None or graph.meta(x.name).shape != n.out.shape:
        return None  # the pieces fill exactly x's shape, so the scan read x[:n-1]
    fill = graph.node(fill_ref.name)
    ones_at_d = tuple("1" if i == d else s for i, s in enumerate(n.out.shape))
    if fill.out.shape != ones_at_d or _fill_value(fill) != NEUTRAL[kind]:
        return None
    return x, d, kind, {scan.name, head.name}


def _exclusive_of_pad(
    graph: OpGraph, n: Node, only_for: Callable[[str], bool]
) -> tuple[Ref, int, str, set[str]] | None:
    """``scan(pad(x, 1 before along d, neutral)[:n])``: (x, d, kind, nodes it replaces)."""
    scanned = _scan_of(graph, Ref(n.name))
    if scanned is None or not n.meta:
        return None
    _, kind = scanned
    rank = n.out.rank
    d = int(n.args[1]) % rank  # type: ignore[arg-type]
    src = n.args[0]
    if not isinstance(src, Ref) or not graph.has_node(src.name):
        return None
    chain: set[str] = set()
    node = graph.node(src.name)
    while node.target == "aten.slice.Tensor" and _takes_prefix(node) and only_for(node.name):
        chain.add(node.name)
        inner = node.args[0]
        if not isinstance(inner, Ref) or not graph.has_node(inner.name):
            return None
        node = graph.node(inner.name)
    if not chain or node.target != "aten.constant_pad_nd.default" or not only_for(node.name):
        return None
    x, pads = node.args[0], node.args[1]
    value = node.args[2] if len(node.args) > 2 else node.kwarg("value", 0)
    want = [0] * (2 * rank)
    want[2 * (rank - 1 - d)] = 1  # pads list the last dimension first, (before, after) each
    if not isinstance(x, Ref) or value != NEUTRAL[kind] or not isinstance(pads, tuple):
        return None
    if list(pads) + [0] * (2 * rank - len(pads)) != want:
        return None
    if graph.meta(src.name).shape != graph.meta(x.name).shape:
        return None  # prefixes of the padded tensor as long as x: x moved one step along d
    return x, d, kind, chain | {node.name}


def _prefix_source(
    graph: OpGraph, head: Node, d: int, only_for: Callable[[str], bool]
) -> Ref | None:
    """The tensor ``head`` takes a prefix of along ``d`` (``x[..., :k]``), when it does."""
    if head.target != "aten.slice.Tensor" or not _takes_prefix(head) or not only_for(head.name):
        return None
    x = head.args[0]
    rank = head.out.rank
    if not isinstance(x, Ref) or int(head.args[1]) % rank != d:  # type: ignore[arg-type]
        return None
    return x


def _takes_prefix(node: Node) -> bool:
    """``aten.slice.Tensor(x, dim, 0, end[, 1])``: a prefix along ``dim``."""
    start = node.args[2] if len(node.args) > 2 else node.kwarg("start", 0)
    step = node.args[4] if len(node.args) > 4 else node.kwarg("step", 1)
    return start in (0, None) and step == 1


def _fill_value(node: Node) -> object:
    """The constant a fill node writes (None when ``node`` is no fill)."""
    if node.target not in FILLS:
        return None
    at = FILLS[node.target]
    if at is None:
        return FILL_VALUES[node.target]
    return node.args[at] if len(node.args) > at else node.kwarg("fill_value")


def _clone_lookups(graph: OpGraph) -> OpGraph:
    """Give every reader of a table lookup (``table[index]``, possibly through views) after the
    first its own copy of the lookup and of the views between them, placed just before it.

    A lookup is an indexed load inside an element-wise kernel; a reader in another kernel than
    the first would otherwise read the gathered rows written out by the first (a rotary
    embedding's query and key kernels read one cos and one sin lookup). The emitter loads
    identical lookups once per kernel, so copies read in one kernel cost nothing. An index
    range (``arange``) is computed by the kernel that reads it: its readers get copies too."""
    chain: set[str] = set()  # fusible lookups, index ranges and views of them
    for n in graph.nodes:
        kind = classify(n)
        lookup = (kind == "lookup" and lookup_fusible(graph, n)) or kind == "index"
        view_of_one = kind == "view" and isinstance(n.args[0], Ref) and n.args[0].name in chain
        if lookup or view_of_one:
            chain.add(n.name)
    if not chain:
        return graph
    by_name = {n.name: n for n in graph.nodes}
    taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
    claimed: set[str] = set()
    nodes: list[Node] = []
    for n in graph.nodes:
        needed = set() if n.name in chain else _chain_ancestors(by_name, chain, n)
        if not needed & claimed:
            claimed |= needed  # the first reader keeps the originals
            nodes.append(n)
            continue
        rename: dict[str, str] = {}
        for c in sorted(needed, key=list(by_name).index):  # execution order
            fresh = f"{c}_for_{n.name}"
            while fresh in taken:
                fresh += "_"
            taken.add(fresh)
            rename[c] = fresh
            nodes.append(_renamed(by_name[c], rename, fresh))
        nodes.append(_renamed(n, rename, n.name))
    return graph.replace(tuple(nodes)).pruned()


def _chain_ancestors(by_name: dict[str, Node], chain: set[str], n: Node) -> set[str]:
    """The lookup-chain nodes (lookups and views of them) that ``n`` reads, with theirs."""
    found: set[str] = set()
    stack = [r for r in n.refs() if r in chain]
    while stack:
        c = stack.pop()
        if c not in found:
            found.add(c)
            stack.extend(r for r in by_name[c].refs() if r in chain)
    return found


def _renamed(n: Node, rename: dict[str, str], name: str) -> Node:
    """``n`` called ``name``, reading ``rename[r]`` in place of each renamed ``r``."""

    def arg(a: Arg) -> Arg:
        if isinstance(a, Ref):
            return Ref(rename.get(a.name, a.name))
        if isinstance(a, tuple):
            return tuple(arg(x) for x in a)
        return a

    kwargs = tuple((k, arg(v)) for k, v in n.kwargs)
    return dataclasses.replace(n, name=name, args=tuple(arg(a) for a in n.args), kwargs=kwargs)


__all__ = ["Builder", "broadcast_meta", "contiguous_strides", "lower", "meta_like", "meta_reduced"]
