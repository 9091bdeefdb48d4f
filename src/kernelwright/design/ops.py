"""The operator table: what kind each ATen operator is, and how it reads in Triton.

    kind         operators                                       where it goes
    pointwise    add, mul, exp, where, gelu, comparisons...      fused into any kernel
    reduction    sum, mean, amax, amin, argmax, argmin, prod     reduction kernels
    scan         cumsum, cumprod, kw.scan (reverse)              scan kernels
    gather       gather along the reduced dimension              point evaluation in a row kernel
    lookup       table[i] (index.Tensor, one integer index;      an indexed load in an element-wise
                 embedding)                                      kernel (an embedding's or a
                                                                 position table's rows)
    cat          concatenation of same-shaped pieces             pieces written into slices of one
                                                                 output by one element-wise kernel
    view         unsqueeze, squeeze, expand, view, permute...    absorbed as an axis map, or run by
                                                                 PyTorch (free) between kernels
    pool         max_pool2d_with_indices, avg_pool1d/2d/3d       the pooling template
    select       topk (sorted, along one dimension)              the selection template
    const        scalar_tensor, full of one element              inlined as a literal
    framework    everything else (mm, conv, sort...)             left to PyTorch, labelled

``pointwise_expr`` renders a pointwise node as a Triton expression over already-named operands
(``a``, ``b``); every float computation runs in fp32 (loads are converted on the way in).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from kernelwright.design.graph import Arg, DType, Node, OpGraph, Ref

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
SELECTS = frozenset({"aten.topk.default"})
# table[index] along the first dimension; an embedding's forward is the same lookup (its
# padding_idx and scale_grad_by_freq act on the gradient only)
LOOKUPS = frozenset({"aten.index.Tensor", "aten.embedding.default"})
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

_INF = float("inf")


def literal(value: Arg) -> str:
    """A Python scalar as Triton source."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if value == _INF:
            return 'float("inf")'
        if value == -_INF:
            return '-float("inf")'
        return repr(value)
    raise ValueError(f"not a scalar literal: {value!r}")


TRITON_DTYPES = {
    "float32": "tl.float32",
    "float16": "tl.float16",
    "bfloat16": "tl.bfloat16",
    "float64": "tl.float64",
    "int64": "tl.int64",
    "int32": "tl.int32",
    "int16": "tl.int16",
    "int8": "tl.int8",
    "uint8": "tl.uint8",
    "bool": "tl.int1",
}


def compute_dtype(dtype: str) -> str:
    """The Triton dtype a value of torch ``dtype`` is computed in (floats: fp32)."""
    if dtype in ("float32", "float16", "bfloat16"):
        return "tl.float32"
    return TRITON_DTYPES.get(dtype, "tl.float32")


Fmt = Callable[[Sequence[str], Node], str]


def _bin(op: str) -> Fmt:
    return lambda a, n: f"{a[0]} {op} {a[1]}"


def _alpha(op: str) -> Fmt:
    def fmt(a: Sequence[str], n: Node) -> str:
        alpha = n.kwarg("alpha", 1)
        if alpha in (1, 1.0):
            return f"{a[0]} {op} {a[1]}"
        return f"{a[0]} {op} {a[1]} * {literal(alpha)}"

    return fmt


def _call(fn: str) -> Fmt:
    return lambda a, n: f"{fn}({a[0]})"


def _gelu(a: Sequence[str], n: Node) -> str:
    if n.kwarg("approximate", "none") == "tanh":
        x = a[0]
        inner = f"0.7978845608028654 * ({x} + 0.044715 * {x} * {x} * {x})"
        return f"0.5 * {x} * (1.0 + _tanh({inner}))"
    return f"0.5 * {a[0]} * (1.0 + tl.math.erf({a[0]} * 0.7071067811865476))"


def _pow(a: Sequence[str], n: Node) -> str:
    exponent = n.args[1]
    if isinstance(exponent, int | float) and not isinstance(exponent, bool):
        if exponent == 2:
            return f"{a[0]} * {a[0]}"
        if exponent == 3:
            return f"{a[0]} * {a[0]} * {a[0]}"
        if exponent == 1:
            return a[0]
        if exponent == 0.5:
            return f"tl.sqrt({a[0]})"
        if exponent == -0.5:
            return f"tl.math.rsqrt({a[0]})"
        if exponent == -1:
            return f"1.0 / {a[0]}"
        return f"_pow({a[0]}, {literal(float(exponent))})"
    return f"_pow({a[0]}, {a[1]})"


def _clamp(a: Sequence[str], n: Node) -> str:
    lo = n.args[1] if len(n.args) > 1 else n.kwarg("min")
    hi = n.args[2] if len(n.args) > 2 else n.kwarg("max")
    expr = a[0]
    if lo is not None:
        expr = f"tl.maximum({expr}, {literal(lo)})"
    if hi is not None:
        expr = f"tl.minimum({expr}, {literal(hi)})"
    return expr


def _clamp_tensor(a: Sequence[str], n: Node) -> str:
    """``clamp(x, min, max)`` with tensor bounds (cosine_similarity clamps its norms by a
    ``scalar_tensor``): either bound may be None."""
    expr = a[0]
    if len(n.args) > 1 and n.args[1] is not None:
        expr = f"tl.maximum({expr}, {a[1]})"
    if len(n.args) > 2 and n.args[2] is not None:
        expr = f"tl.minimum({expr}, {a[2]})"
    return expr


def _to_copy(a: Sequence[str], n: Node) -> str:
    dtype = n.kwarg("dtype")
    if isinstance(dtype, DType):
        if dtype.name == "bool":
            return f"({a[0]} != 0)"
        return f"{a[0]}.to({compute_dtype(dtype.name)})"
    return a[0]


def _leaky(a: Sequence[str], n: Node) -> str:
    slope = n.args[1] if len(n.args) > 1 else 0.01
    return f"tl.where({a[0]} > 0, {a[0]}, {a[0]} * {literal(slope)})"


def _hardtanh(a: Sequence[str], n: Node) -> str:
    lo = n.args[1] if len(n.args) > 1 else -1.0
    hi = n.args[2] if len(n.args) > 2 else 1.0
    return f"tl.minimum(tl.maximum({a[0]}, {literal(lo)}), {literal(hi)})"


def _elu(a: Sequence[str], n: Node) -> str:
    alpha = n.args[1] if len(n.args) > 1 else 1.0
    scale = n.args[2] if len(n.args) > 2 else 1.0
    in_scale = n.args[3] if len(n.args) > 3 else 1.0
    neg = f"{literal(alpha)} * (tl.exp({a[0]} * {literal(in_scale)}) - 1.0)"
    return f"{literal(scale)} * tl.where({a[0]} > 0, {a[0]}, {neg})"


def _softplus(a: Sequence[str], n: Node) -> str:
    beta = n.args[1] if len(n.args) > 1 else 1.0
    thr = n.args[2] if len(n.args) > 2 else 20.0
    bx = f"({a[0]} * {literal(beta)})"
    return f"tl.where({bx} > {literal(thr)}, {a[0]}, _log1p(tl.exp({bx})) / {literal(beta)})"


POINTWISE: dict[str, Fmt] = {
    "aten.add.Tensor": _alpha("+"),
    "aten.add.Scalar": _alpha("+"),
    "aten.sub.Tensor": _alpha("-"),
    "aten.sub.Scalar": _alpha("-"),
    "aten.rsub.Scalar": lambda a, n: f"{a[1]} - {a[0]}",
    "aten.rsub.Tensor": lambda a, n: f"{a[1]} - {a[0]}",
    "aten.mul.Tensor": _bin("*"),
    "aten.mul.Scalar": _bin("*"),
    "aten.div.Tensor": lambda a, n: f"{a[0]} / {a[1]}",
    "aten.div.Scalar": lambda a, n: f"{a[0]} / {a[1]}",
    "aten.neg.default": lambda a, n: f"-{a[0]}",
    "aten.abs.default": _call("tl.abs"),
    "aten.exp.default": _call("tl.exp"),
    "aten.exp2.default": _call("tl.exp2"),
    "aten.log.default": _call("tl.log"),
    "aten.log2.default": _call("tl.log2"),
    "aten.log1p.default": _call("_log1p"),
    "aten.expm1.default": _call("_expm1"),
    "aten.sqrt.default": _call("tl.sqrt"),
    "aten.rsqrt.default": _call("tl.math.rsqrt"),
    "aten.reciprocal.default": lambda a, n: f"1.0 / {a[0]}",
    "aten.sigmoid.default": _call("tl.sigmoid"),
    "aten.tanh.default": _call("_tanh"),
    "aten.erf.default": _call("tl.math.erf"),
    "aten.sin.default": _call("tl.sin"),
    "aten.cos.default": _call("tl.cos"),
    "aten.floor.default": _call("tl.floor"),
    "aten.ceil.default": _call("tl.ceil"),
    "aten.relu.default": lambda a, n: f"tl.maximum({a[0]}, 0.0)",
    "aten.gelu.default": _gelu,
    "aten.sign.default": lambda a, n: f"tl.where({a[0]} > 0, 1.0, tl.where({a[0]} < 0, -1.0, 0.0))",
    "aten.pow.Tensor_Scalar": _pow,
    "aten.pow.Tensor_Tensor": _pow,
    "aten.clamp.default": _clamp,
    "aten.clamp_min.default": lambda a, n: f"tl.maximum({a[0]}, {a[1]})",
    "aten.clamp_max.default": lambda a, n: f"tl.minimum({a[0]}, {a[1]})",
    "aten.clamp.Tensor": _clamp_tensor,
    "aten.clamp_min.Tensor": lambda a, n: f"tl.maximum({a[0]}, {a[1]})",
    "aten.clamp_max.Tensor": lambda a, n: f"tl.minimum({a[0]}, {a[1]})",
    "aten.maximum.default": lambda a, n: f"tl.maximum({a[0]}, {a[1]})",
    "aten.minimum.default": lambda a, n: f"tl.minimum({a[0]}, {a[1]})",
    "aten.where.self": lambda a, n: f"tl.where({a[0]}, {a[1]}, {a[2]})",
    "aten.masked_fill.Scalar": lambda a, n: f"tl.where({a[1]}, {a[2]}, {a[0]})",
    "aten.eq.Tensor": _bin("=="),
    "aten.eq.Scalar": _bin("=="),
    "aten.ne.Tensor": _bin("!="),
    "aten.ne.Scalar": _bin("!="),
    "aten.lt.Tensor": _bin("<"),
    "aten.lt.Scalar": _bin("<"),
    "aten.le.Tensor": _bin("<="),
    "aten.le.Scalar": _bin("<="),
    "aten.gt.Tensor": _bin(">"),
    "aten.gt.Scalar": _bin(">"),
    "aten.ge.Tensor": _bin(">="),
    "aten.ge.Scalar": _bin(">="),
    "aten.logical_and.default": _bin("&"),
    "aten.logical_or.default": _bin("|"),
    "aten.logical_xor.default": _bin("^"),
    "aten.logical_not.default": lambda a, n: f"({a[0]} == 0)",
    "aten.bitwise_not.default": lambda a, n: f"({a[0]} == 0)",
    "aten.bitwise_and.Tensor": _bin("&"),
    "aten.bitwise_or.Tensor": _bin("|"),
    "aten.isnan.default": lambda a, n: f"({a[0]} != {a[0]})",
    "aten.isinf.default": lambda a, n: f'(tl.abs({a[0]}) == float("inf"))',
    "aten._to_copy.default": _to_copy,
    "aten.clone.default": lambda a, n: a[0],
    "aten.alias.default": lambda a, n: a[0],
    "aten.lift_fresh_copy.default": lambda a, n: a[0],
    "aten.leaky_relu.default": _leaky,
    "aten.hardtanh.default": _hardtanh,
    "aten.elu.default": _elu,
    "aten.softplus.default": _softplus,
    "aten.hardsigmoid.default": lambda a, n: (
        f"tl.minimum(tl.maximum({a[0]} / 6.0 + 0.5, 0.0), 1.0)"
    ),
    "aten.hardswish.default": lambda a, n: (
        f"{a[0]} * tl.minimum(tl.maximum({a[0]} + 3.0, 0.0), 6.0) / 6.0"
    ),
    "aten.silu.default": lambda a, n: f"{a[0]} * tl.sigmoid({a[0]})",
}

# Ops whose result is boolean (so a store into a bool tensor needs no conversion).
BOOL_RESULT = frozenset(
    t
    for t in POINTWISE
    if any(
        t.startswith(f"aten.{op}.")
        for op in (
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "logical_and",
            "logical_or",
            "logical_xor",
            "logical_not",
            "isnan",
            "isinf",
        )
    )
)

# Helpers emitted (as @triton.jit functions) when an expression uses them.
HELPERS = {
    "_sleep_then": """@triton.jit
def _sleep_then(seen):
    # a pause between two polls of a count (about 100 ns), so that waiting programs do not
    # issue a load per warp back to back. On the H200 (before the team's statistics became
    # scalars) it changed the team kernel's time by under 3%: the wait was not the cost
    return tl.inline_asm_elementwise(
        "nanosleep.u32 100;\\n\\tmov.b32 $0, $1;", "=r,r", [seen], dtype=tl.int32,
        is_pure=False, pack=1,
    )""",
    "_topk_swap": """@triton.jit
def _topk_swap(key_a, col_a, key_b, col_b):
    # one compare-exchange of a top-k lane's sorting network: (b) goes first when its key is
    # larger, or equal with a lower column (the lowest index wins a tie)
    swap = (key_b > key_a) | ((key_b == key_a) & (col_b < col_a))
    return (
        tl.where(swap, key_b, key_a), tl.where(swap, col_b, col_a),
        tl.where(swap, key_a, key_b), tl.where(swap, col_a, col_b),
    )""",
    "_prod_combine": """@triton.jit
def _prod_combine(a, b):
    # the combine function of a product reduction or scan
    return a * b""",
    "_welford_combine": """@triton.jit
def _welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    # Chan's merge of two (mean, M2, count) statistics; empty ones (n = 0) add nothing
    n = n_a + n_b
    w_b = tl.where(n == 0.0, 0.0, n_b / tl.maximum(n, 1.0))
    delta = mean_b - mean_a
    return mean_a + delta * w_b, m2_a + m2_b + delta * delta * n_a * w_b, n""",
    "_tanh": """@triton.jit
def _tanh(x):
    # tanh from exp, stable for large |x| (the interpreter has no libdevice)
    t = tl.exp(-2.0 * tl.abs(x))
    y = (1.0 - t) / (1.0 + t)
    return tl.where(x < 0, -y, y)""",
    "_tanh_softplus": """@triton.jit
def _tanh_softplus(x):
    # tanh(log(1 + e^x)) = n(n + 2) / (n(n + 2) + 2) with n = e^x: one exp and one division
    # instead of exp, log and tanh's exp (mish's inner factor); past x = 20 it is 1 in fp32
    n = tl.exp(tl.minimum(x, 20.0))
    p = n * (n + 2.0)
    return tl.where(x > 20.0, 1.0, p / (p + 2.0))""",
    "_log1p": """@triton.jit
def _log1p(x):
    # log(1 + x) accurate for tiny x: correct the rounding of 1 + x
    u = 1.0 + x
    return tl.where(u == 1.0, x, tl.log(u) * (x / (u - 1.0)))""",
    "_expm1": """@triton.jit
def _expm1(x):
    # exp(x) - 1 accurate for tiny x
    u = tl.exp(x)
    return tl.where(u == 1.0, x, tl.where(u - 1.0 == -1.0, -1.0, (u - 1.0) * x / tl.log(u)))""",
    "_pow": """@triton.jit
def _pow(x, y):
    # x ** y for x >= 0 (and integral y for negative x) through exp2/log2
    r = tl.exp2(y * tl.log2(tl.abs(x)))
    odd = (tl.floor(y * 0.5) * 2.0) != y
    return tl.where((x < 0) & odd, -r, tl.where(x == 0, tl.where(y == 0, 1.0, 0.0), r))""",
}


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
    if t in POINTWISE:
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
    if t in CONSTS and node.meta and node.out.rank == 0:
        return "const"
    if t == "aten.gather.default":
        return "gather"
    if t in LOOKUPS and lookup_index(node) is not None:
        return "lookup"
    if t == "aten.cat.default":
        return "cat"
    return "framework"


def lookup_index(node: Node) -> Ref | None:
    """The index of ``table[index]`` (``aten.index.Tensor`` with one index tensor, on the first
    dimension, or ``aten.embedding``); None for other indexing (several indices, a slice before
    the index)."""
    if node.target == "aten.embedding.default":
        index = node.args[1] if len(node.args) > 1 else None
        return index if isinstance(index, Ref) else None
    indices = node.args[1] if len(node.args) > 1 else None
    if isinstance(indices, tuple) and len(indices) == 1 and isinstance(indices[0], Ref):
        return indices[0]
    return None


# Index tensors a lookup loads through (bool and uint8 index tensors are masks in PyTorch)
LOOKUP_INDEX_DTYPES = frozenset({"int64", "int32", "int16", "int8"})


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


def select_info(node: Node, rank: int) -> tuple[int, int | None, bool, bool]:
    """(dimension, k (None when not a literal), largest, sorted) of a topk node."""
    k = node.args[1]
    dim = node.args[2] if len(node.args) > 2 else node.kwarg("dim", -1)
    largest = node.args[3] if len(node.args) > 3 else node.kwarg("largest", True)
    ordered = node.args[4] if len(node.args) > 4 else node.kwarg("sorted", True)
    literal_k = k if isinstance(k, int) and not isinstance(k, bool) else None
    return int(dim) % rank, literal_k, bool(largest), bool(ordered)  # type: ignore[arg-type]
