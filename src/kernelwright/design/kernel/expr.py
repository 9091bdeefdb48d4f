"""Triton expression printing: how each element-wise ATen operator reads in Triton, literals,
the dtypes values are computed in, and the ``@triton.jit`` helpers expressions may call.

``POINTWISE[target](operands, node)`` renders a pointwise node as a Triton expression over
already-named operands (``a``, ``b``); every float computation runs in fp32 (loads are converted
on the way in). Which operators are pointwise is :mod:`kernelwright.design.aten`'s decision.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from kernelwright.design.graph import Arg, DType, Node

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


def _max(x: str, y: str) -> str:
    """PyTorch's maximum, clamp and relu return NaN where an operand is NaN (the hardware's max
    returns the other operand): NaN-propagating, at the same cost on sm_80 and later."""
    return f"tl.maximum({x}, {y}, propagate_nan=tl.PropagateNan.ALL)"


def _min(x: str, y: str) -> str:
    """NaN-propagating minimum (see :func:`_max`)."""
    return f"tl.minimum({x}, {y}, propagate_nan=tl.PropagateNan.ALL)"


def _clamp(a: Sequence[str], n: Node) -> str:
    lo = n.args[1] if len(n.args) > 1 else n.kwarg("min")
    hi = n.args[2] if len(n.args) > 2 else n.kwarg("max")
    expr = a[0]
    if lo is not None:
        expr = _max(expr, literal(lo))
    if hi is not None:
        expr = _min(expr, literal(hi))
    return expr


def _clamp_tensor(a: Sequence[str], n: Node) -> str:
    """``clamp(x, min, max)`` with tensor bounds (cosine_similarity clamps its norms by a
    ``scalar_tensor``): either bound may be None."""
    expr = a[0]
    if len(n.args) > 1 and n.args[1] is not None:
        expr = _max(expr, a[1])
    if len(n.args) > 2 and n.args[2] is not None:
        expr = _min(expr, a[2])
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
    return _min(_max(a[0], literal(lo)), literal(hi))


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
    # fmod keeps the dividend's sign (Triton's % on floats and integers alike); remainder, as
    # Python's %, the divisor's
    "aten.fmod.Tensor": _bin("%"),
    "aten.fmod.Scalar": _bin("%"),
    "aten.remainder.Tensor": lambda a, n: f"_remainder({a[0]}, {a[1]})",
    "aten.remainder.Scalar": lambda a, n: f"_remainder({a[0]}, {a[1]})",
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
    "aten.relu.default": lambda a, n: _max(a[0], "0.0"),
    "aten.gelu.default": _gelu,
    "aten.sign.default": lambda a, n: f"tl.where({a[0]} > 0, 1.0, tl.where({a[0]} < 0, -1.0, 0.0))",
    "aten.pow.Tensor_Scalar": _pow,
    "aten.pow.Tensor_Tensor": _pow,
    "aten.clamp.default": _clamp,
    "aten.clamp_min.default": lambda a, n: _max(a[0], a[1]),
    "aten.clamp_max.default": lambda a, n: _min(a[0], a[1]),
    "aten.clamp.Tensor": _clamp_tensor,
    "aten.clamp_min.Tensor": lambda a, n: _max(a[0], a[1]),
    "aten.clamp_max.Tensor": lambda a, n: _min(a[0], a[1]),
    "aten.maximum.default": lambda a, n: _max(a[0], a[1]),
    "aten.minimum.default": lambda a, n: _min(a[0], a[1]),
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
    "aten.hardsigmoid.default": lambda a, n: _min(_max(f"{a[0]} / 6.0 + 0.5", "0.0"), "1.0"),
    "aten.hardswish.default": lambda a, n: (
        f"{a[0]} * {_min(_max(f'{a[0]} + 3.0', '0.0'), '6.0')} / 6.0"
    ),
    "aten.silu.default": lambda a, n: f"{a[0]} * tl.sigmoid({a[0]})",
}

# Helpers emitted (as @triton.jit functions) when an expression uses them.
HELPERS = {
    "_load_col": """@triton.jit
def _load_col(ptrs, mask, other):
    # a [M, 1] operand of a 2-D tile (one value a row: a per-channel parameter) loaded as [M]
    # and expanded: in the tile's layout the [M, 1] shape repeats each row's load once per
    # column a thread holds (sm_90: 16 scalar loads a parameter where 4 rows need 4)
    flat = tl.reshape(ptrs, [ptrs.shape[0]])
    if mask is None:
        return tl.load(flat)[:, None]
    return tl.load(flat, mask=tl.reshape(mask, [mask.shape[0]]), other=other)[:, None]""",
    "_load_row": """@triton.jit
def _load_row(ptrs, mask, other, AS_VECTOR: tl.constexpr):
    # a [1, N] operand of a 2-D tile (one value a column: a per-channel parameter), loaded as [N]
    # and expanded where AS_VECTOR: where Triton lays the tile along axis 0 (positions, for an
    # NCHW store) the [1, N] shape repeats each column's load once per row a thread holds
    # (sm_90, a bf16 conv epilogue of 128 x 64: 32 scalar loads a parameter where 8 columns
    # need 8); along axis 1 the [1, N] load is the vector one
    if AS_VECTOR:
        flat = tl.reshape(ptrs, [ptrs.shape[1]])
        if mask is None:
            return tl.load(flat)[None, :]
        return tl.load(flat, mask=tl.reshape(mask, [mask.shape[1]]), other=other)[None, :]
    if mask is None:
        return tl.load(ptrs)
    return tl.load(ptrs, mask=mask, other=other)""",
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
    "_max_combine": """@triton.jit
def _max_combine(a, b):
    # the combine function of a max reduction: NaN-propagating, as PyTorch's max and amax are
    # (tl.max keeps the other operand)
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)""",
    "_min_combine": """@triton.jit
def _min_combine(a, b):
    # the combine function of a min reduction, NaN-propagating like _max_combine
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)""",
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
    "_remainder": """@triton.jit
def _remainder(a, b):
    # a mod b with the divisor's sign (torch.remainder, Python's %): the truncated remainder
    # (the dividend's sign), moved by b where the two signs differ, as PyTorch computes it
    r = a % b
    return tl.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)""",
    "_pow": """@triton.jit
def _pow(x, y):
    # x ** y for x >= 0 (and integral y for negative x) through exp2/log2
    r = tl.exp2(y * tl.log2(tl.abs(x)))
    odd = (tl.floor(y * 0.5) * 2.0) != y
    return tl.where((x < 0) & odd, -r, tl.where(x == 0, tl.where(y == 0, 1.0, 0.0), r))""",
}
