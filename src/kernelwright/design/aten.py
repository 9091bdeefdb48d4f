"""ATen classification: what kind each core ATen operator is, and what its arguments mean.

    kind         operators                                       where it goes
    pointwise    add, mul, exp, where, gelu, comparisons...      fused into any kernel
    reduction    sum, mean, amax, amin, argmax, argmin, prod     reduction kernels
    scan         cumsum, cumprod, kw.scan (reverse, exclusive)   scan kernels
    gather       gather along the reduced dimension              point evaluation in a row kernel
    lookup       table[i] (index.Tensor, one integer index;      an indexed load in an element-wise
                 embedding; index_select along dim 0)            kernel (an embedding's or a
                                                                 position table's rows)
    cat          concatenation of same-shaped pieces             pieces written into slices of one
                                                                 output by one element-wise kernel
    view         unsqueeze, squeeze, expand, view, permute...    absorbed as an axis map, or run by
                                                                 PyTorch (free) between kernels
    pool         max_pool2d_with_indices, avg_pool1d/2d/3d       the pooling template
    select       topk (sorted, along one dimension)              the selection template
    matmul       mm, bmm (addmm is lowered to mm + add)          the GEMM templates, with the
                                                                 element-wise ops after it
    conv         convolution: 2-D or 3-D, transposed or not      the convolution templates, with
                 (any groups; its bias is lowered to an add)     the element-wise ops after it
    attention    scaled_dot_product_attention (kept whole by     the flash-attention template
                 capture)
    const        scalar_tensor, full of one element              inlined as a literal
    index        arange of integers (literal start and step)     computed from the index of the
                                                                 kernel that reads it (no load)
    framework    everything else (other convs, sort...)          left to PyTorch, labelled

This module only reads the graph; how a pointwise operator reads in Triton is
:mod:`kernelwright.design.kernel.expr`'s job (it has one printer per :data:`POINTWISE_OPS` entry).
"""

from __future__ import annotations

from kernelwright.design.graph import Arg, Node, OpGraph, Ref

REDUCTIONS = {
    "aten.sum.dim_IntList": "sum",
    "aten.mean.dim": "mean",
    "aten.amax.default": "max",
    "aten.amin.default": "min",
    "aten.argmax.default": "argmax",
    "aten.argmin.default": "argmin",
    "aten.prod.dim_int": "prod",
}
SCANS = {"aten.cumsum.default": "sum", "aten.cumprod.default": "prod", "kw.scan": None}
POOLS = frozenset(
    {
        "aten.max_pool2d_with_indices.default",
        "aten.max_pool3d_with_indices.default",
        "aten.avg_pool2d.default",
        "aten.avg_pool3d.default",
        "aten.avg_pool1d.default",
    }
)
VIEWS = frozenset(
    {
        "aten.unsqueeze.default",
        "aten.squeeze.dims",
        "aten.squeeze.dim",
        "aten.squeeze.default",
        "aten.expand.default",
        "aten.view.default",
        "aten._unsafe_view.default",
        "aten.reshape.default",
        "aten.permute.default",
        "aten.alias.default",
    }
)
CONSTS = frozenset({"aten.scalar_tensor.default", "aten.full.default"})
# Integer ranges: element i of arange(start, end, step) is start + i * step, which a kernel
# computes from its own index along the dimension the range lies on (torch.triu's and tril's
# row and column indices, masks by position)
INDEX_RANGES = frozenset(
    {"aten.arange.default", "aten.arange.start", "aten.arange.start_step"}
)
SELECTS = frozenset({"aten.topk.default"})
# Matrix products: (M, K) @ (K, N) and batched (B, M, K) @ (B, K, N), operands of any strides
MATMULS = frozenset({"aten.mm.default", "aten.bmm.default"})
# Convolutions; 2-D and 3-D ones (transposed or not) are the ``conv`` kind (conv_args)
CONVS = frozenset({"aten.convolution.default"})
# softmax(Q K^T * scale [+ mask]) V over [batch, heads, seq, dim] operands; capture keeps it one
# node (``capture.KEPT_WHOLE``), and recognise_attention builds it from its written-out form
SDPA = "aten.scaled_dot_product_attention.default"
ATTENTIONS = frozenset({SDPA})
# table[index] along the first dimension; an embedding's forward is the same lookup (its
# padding_idx and scale_grad_by_freq act on the gradient only)
LOOKUPS = frozenset({"aten.index.Tensor", "aten.embedding.default", "aten.index_select.default"})
# Views PyTorch runs between kernels (free: they only make new strides); never inside a kernel.
FORWARD_VIEWS = frozenset(
    {
        "aten.split_with_sizes.default",
        "aten.split.Tensor",
        "aten.slice.Tensor",
        "aten.select.int",
        "aten.narrow.default",
        "aten.unbind.int",
        "aten.t.default",
        "aten.transpose.int",
        "aten.chunk.default",
        "aten.unfold.default",
        "aten.diagonal.default",
        "aten.as_strided.default",
    }
)

# Element-wise operators (each has a printer in kernel/expr.py's POINTWISE).
POINTWISE_OPS = frozenset(
    {
        "aten.add.Tensor",
        "aten.add.Scalar",
        "aten.sub.Tensor",
        "aten.sub.Scalar",
        "aten.rsub.Scalar",
        "aten.rsub.Tensor",
        "aten.mul.Tensor",
        "aten.mul.Scalar",
        "aten.div.Tensor",
        "aten.div.Scalar",
        "aten.remainder.Tensor",
        "aten.remainder.Scalar",
        "aten.fmod.Tensor",
        "aten.fmod.Scalar",
        "aten.neg.default",
        "aten.abs.default",
        "aten.exp.default",
        "aten.exp2.default",
        "aten.log.default",
        "aten.log2.default",
        "aten.log1p.default",
        "aten.expm1.default",
        "aten.sqrt.default",
        "aten.rsqrt.default",
        "aten.reciprocal.default",
        "aten.sigmoid.default",
        "aten.tanh.default",
        "aten.erf.default",
        "aten.sin.default",
        "aten.cos.default",
        "aten.floor.default",
        "aten.ceil.default",
        "aten.relu.default",
        "aten.gelu.default",
        "aten.sign.default",
        "aten.pow.Tensor_Scalar",
        "aten.pow.Tensor_Tensor",
        "aten.clamp.default",
        "aten.clamp_min.default",
        "aten.clamp_max.default",
        "aten.clamp.Tensor",
        "aten.clamp_min.Tensor",
        "aten.clamp_max.Tensor",
        "aten.maximum.default",
        "aten.minimum.default",
        "aten.where.self",
        "aten.masked_fill.Scalar",
        "aten.eq.Tensor",
        "aten.eq.Scalar",
        "aten.ne.Tensor",
        "aten.ne.Scalar",
        "aten.lt.Tensor",
        "aten.lt.Scalar",
        "aten.le.Tensor",
        "aten.le.Scalar",
        "aten.gt.Tensor",
        "aten.gt.Scalar",
        "aten.ge.Tensor",
        "aten.ge.Scalar",
        "aten.logical_and.default",
        "aten.logical_or.default",
        "aten.logical_xor.default",
        "aten.logical_not.default",
        "aten.bitwise_not.default",
        "aten.bitwise_and.Tensor",
        "aten.bitwise_or.Tensor",
        "aten.isnan.default",
        "aten.isinf.default",
        "aten._to_copy.default",
        "aten.clone.default",
        "aten.alias.default",
        "aten.lift_fresh_copy.default",
        "aten.leaky_relu.default",
        "aten.hardtanh.default",
        "aten.elu.default",
        "aten.softplus.default",
        "aten.hardsigmoid.default",
        "aten.hardswish.default",
        "aten.silu.default",
    }
)


def tanh_of_softplus(node: Node, graph: OpGraph) -> Arg | None:
    """``x`` when ``node`` is ``tanh(softplus(x))`` with beta 1 and a threshold of at least 10
    (mish), as one node or decomposed (``where(x > t, x, log1p(exp(x)))``); else None.

    Past the threshold the exact value is tanh(x), which rounds to 1.0 in fp32 from x = 9.01 on,
    so ``_tanh_softplus`` (which is 1.0 there too) agrees on both branches.
    """
    if node.target != "aten.tanh.default" or not isinstance(node.args[0], Ref):
        return None
    inner = _producer(graph, node.args[0])
    if inner is None:
        return None
    if inner.target == "aten.softplus.default":
        beta = inner.args[1] if len(inner.args) > 1 else 1.0
        thr = inner.args[2] if len(inner.args) > 2 else 20.0
        ok = beta == 1 and isinstance(thr, int | float) and thr >= 10
        return inner.args[0] if ok else None
    if inner.target != "aten.where.self" or len(inner.args) != 3:
        return None
    cond, x, other = (_producer(graph, inner.args[0]), inner.args[1], inner.args[2])
    log1p = _producer(graph, _unit(graph, other))
    exp = _producer(graph, log1p.args[0]) if log1p is not None else None
    if not (isinstance(x, Ref) and cond is not None and log1p is not None and exp is not None):
        return None
    thr = cond.args[1] if len(cond.args) > 1 else None
    if (
        cond.target != "aten.gt.Scalar"
        or _unit(graph, cond.args[0]) != x
        or not isinstance(thr, int | float)
        or thr < 10
        or log1p.target != "aten.log1p.default"
        or exp.target != "aten.exp.default"
        or _unit(graph, exp.args[0]) != x
    ):
        return None
    return x


def _producer(graph: OpGraph, a: Arg) -> Node | None:
    return graph.node(a.name) if isinstance(a, Ref) and graph.has_node(a.name) else None


def _unit(graph: OpGraph, a: Arg) -> Arg:
    """``a`` with a multiplication or division by 1 removed (softplus's beta = 1)."""
    p = _producer(graph, a)
    unit = ("aten.mul.Tensor", "aten.mul.Scalar", "aten.div.Tensor", "aten.div.Scalar")
    if p is not None and p.target in unit and len(p.args) == 2 and p.args[1] == 1:
        return p.args[0]
    return a


def classify(node: Node) -> str:
    """The kind of a node (see the module docstring)."""
    t = node.target
    if node.kind == "sym":
        return "sym"
    if node.kind == "getitem":
        return "getitem"
    if t in POINTWISE_OPS:
        return "pointwise"
    if t in REDUCTIONS:
        return "reduction"
    if t in SCANS:
        return "scan"
    if t in VIEWS:
        return "view"
    if t in FORWARD_VIEWS:
        return "fview"
    if t in POOLS:
        return "pool"
    if t in SELECTS:
        return "select"
    if t in MATMULS:
        return "matmul"
    if t in CONVS and conv_args(node) is not None:
        return "conv"
    if t in ATTENTIONS:
        return "attention"
    if t in CONSTS and node.meta and node.out.rank == 0:
        return "const"
    if t in INDEX_RANGES and index_range(node) is not None:
        return "index"
    if t == "aten.gather.default":
        return "gather"
    if t in LOOKUPS and lookup_index(node) is not None:
        return "lookup"
    if t == "aten.cat.default":
        return "cat"
    return "framework"


def conv_args(
    node: Node,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    """(stride, padding, dilation), one entry a spatial dimension, of ``convolution(x, w, bias,
    stride, padding, dilation, transposed, output_padding, groups)`` when it is a 2-D or 3-D
    convolution, transposed or not (:func:`conv_output_padding`), with literal integer
    parameters (groups included: :func:`conv_groups`); else None."""
    if node.target not in CONVS or len(node.args) < 9:
        return None
    stride, padding, dilation, transposed, output_padding, groups = node.args[3:9]
    pairs = (stride, padding, dilation, output_padding)
    if type(transposed) is not bool or type(groups) is not int or groups < 1:
        return None
    nsp = len(stride) if isinstance(stride, tuple) else 0
    if nsp not in (2, 3) or not all(
        isinstance(p, tuple) and len(p) == nsp and all(type(v) is int for v in p) for p in pairs
    ):
        return None
    return stride, padding, dilation  # type: ignore[return-value]


def conv_output_padding(node: Node) -> tuple[int, ...] | None:
    """A transposed ``conv`` node's output padding (rows and columns added at the bottom and
    right of its output); None for a convolution that is not transposed."""
    if node.args[6] is not True:
        return None
    return node.args[7]  # type: ignore[return-value]


def conv_groups(node: Node) -> int:
    """The groups of a ``conv`` node (:func:`conv_args` holds): each output channel reads
    C_in / groups input channels (C_in of them for 1, one for a depthwise convolution)."""
    return int(node.args[8])  # type: ignore[arg-type]


def lookup_index(node: Node) -> Ref | None:
    """The index of ``table[index]`` (``aten.index.Tensor`` with one index tensor, on the first
    dimension, ``aten.embedding``, or ``index_select`` along the first dimension); None for
    other indexing (several indices, a slice before the index, another dimension)."""
    if node.target == "aten.embedding.default":
        index = node.args[1] if len(node.args) > 1 else None
        return index if isinstance(index, Ref) else None
    if node.target == "aten.index_select.default":
        dim, index = (node.args[1], node.args[2]) if len(node.args) > 2 else (None, None)
        return index if dim == 0 and isinstance(index, Ref) else None
    indices = node.args[1] if len(node.args) > 1 else None
    if isinstance(indices, tuple) and len(indices) == 1 and isinstance(indices[0], Ref):
        return indices[0]
    return None


# Index tensors a lookup loads through (bool and uint8 index tensors are masks in PyTorch)
LOOKUP_INDEX_DTYPES = frozenset({"int64", "int32", "int16", "int8"})


def index_range(node: Node) -> tuple[int, int] | None:
    """(start, step) of an ``arange`` with literal integer start and step and an integer dtype
    (``arange(end)``, ``arange(start, end)``, ``arange(start, end, step)``); else None. The end
    only sets the length, which is the length of the dimension the range lies on."""
    if node.target not in INDEX_RANGES or not node.meta or node.out.rank != 1:
        return None
    if node.out.dtype not in ("int64", "int32"):
        return None  # a float range rounds its elements; a narrow one wraps
    start: object = 0
    step: object = 1
    if node.target != "aten.arange.default":
        start = node.args[0] if node.args else None
    if node.target == "aten.arange.start_step":
        step = node.args[2] if len(node.args) > 2 else node.kwarg("step", 1)
    if type(start) is not int or type(step) is not int or step == 0:
        return None
    return start, step


def lookup_fusible(graph: OpGraph, node: Node) -> bool:
    """``table[index]`` can be an indexed load: one integer index tensor, and a table the kernel
    reads through its pointer (not a scalar)."""
    index = lookup_index(node)
    table = node.args[0]
    if index is None or not isinstance(table, Ref):
        return False
    return graph.meta(index.name).dtype in LOOKUP_INDEX_DTYPES and graph.meta(table.name).rank >= 1


def reduction_dims(node: Node, rank: int) -> tuple[int, ...]:
    """The dimensions a reduction node reduces (all of them for an empty list)."""
    if node.target in ("aten.argmax.default", "aten.argmin.default"):
        dim = node.args[1] if len(node.args) > 1 else node.kwarg("dim")
        if dim is None:
            return tuple(range(rank))
        return (int(dim) % rank,)  # type: ignore[arg-type]
    if node.target == "aten.prod.dim_int":
        return (int(node.args[1]) % rank,)  # type: ignore[arg-type]
    dims = node.args[1] if len(node.args) > 1 else ()
    if dims is None or dims == ():
        return tuple(range(rank))
    if isinstance(dims, int):
        return (dims % rank,)
    return tuple(sorted(int(d) % rank for d in dims))  # type: ignore[union-attr,arg-type]


def reduction_keepdim(node: Node) -> bool:
    """Whether the reduced dimensions stay as size 1."""
    if node.target in ("aten.argmax.default", "aten.argmin.default", "aten.prod.dim_int"):
        return bool(node.args[2]) if len(node.args) > 2 else bool(node.kwarg("keepdim", False))
    return bool(node.args[2]) if len(node.args) > 2 else bool(node.kwarg("keepdim", False))


def scan_info(node: Node, rank: int) -> tuple[int, str, bool]:
    """(dimension, ``sum``/``prod``, reverse) of a scan node."""
    if node.target == "kw.scan":
        return int(node.args[1]) % rank, str(node.args[2]), bool(node.args[3])  # type: ignore[arg-type]
    return int(node.args[1]) % rank, SCANS[node.target] or "sum", False  # type: ignore[arg-type]


def scan_exclusive(node: Node) -> bool:
    """Whether a scan leaves each position's own value out (``kw.scan``'s fifth argument)."""
    return node.target == "kw.scan" and len(node.args) > 4 and bool(node.args[4])


def select_info(node: Node, rank: int) -> tuple[int, int | None, bool, bool]:
    """(dimension, k (None when not a literal), largest, sorted) of a topk node."""
    k = node.args[1]
    dim = node.args[2] if len(node.args) > 2 else node.kwarg("dim", -1)
    largest = node.args[3] if len(node.args) > 3 else node.kwarg("largest", True)
    ordered = node.args[4] if len(node.args) > 4 else node.kwarg("sorted", True)
    literal_k = k if isinstance(k, int) and not isinstance(k, bool) else None
    return int(dim) % rank, literal_k, bool(largest), bool(ordered)  # type: ignore[arg-type]
