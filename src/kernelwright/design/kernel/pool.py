"""Pooling kernels: max and average pooling over 1, 2 or 3 spatial dimensions.

A program owns a [BLOCK_H, BLOCK_W] tile of one output plane (for 3-D pooling: of one output
depth slice). The window's taps are unrolled at compile time (``tl.static_range``: the kernel
size, stride, padding and dilation are the module's constants); each tap is one masked,
contiguous-ish load of the tile's inputs, so neighbouring windows share loaded lines through the
cache. Padding reads as -inf for max pooling; average pooling counts exactly the taps PyTorch
counts (``count_include_pad``, ``divisor_override``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernelwright.design.fusion import Group
from kernelwright.design.graph import Node, OpGraph, Ref
from kernelwright.design.kernel.common import Code, DesignError, RenderedKernel, signature
from kernelwright.design.kernel.emitter import KernelArgs, safe_name

DEFAULTS = {"BLOCK_H": 4, "BLOCK_W": 64, "WARPS": 4}


@dataclass(frozen=True, slots=True)
class PoolSpec:
    """What the pooling op computes (per spatial dimension: kernel, stride, padding, dilation)."""

    kind: str  # "max" | "avg"
    nsp: int
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    ceil_mode: bool
    count_include_pad: bool = True
    divisor_override: int | None = None


def _ints(v: Any, n: int, default: int | None = None) -> tuple[int, ...]:
    if v is None or v == ():
        if default is None:
            raise DesignError("missing pooling argument")
        return (default,) * n
    if isinstance(v, int):
        return (v,) * n
    vals = tuple(int(x) for x in v)  # type: ignore[union-attr]
    return vals * n if len(vals) == 1 else vals


def pool_spec(node: Node) -> PoolSpec:
    """Read a pooling node's arguments."""
    t, a = node.target, node.args
    if t in ("aten.max_pool2d_with_indices.default", "aten.max_pool3d_with_indices.default"):
        n = 2 if "2d" in t else 3
        k = _ints(a[1], n)
        s = _ints(a[2] if len(a) > 2 else None, n, 0) if len(a) > 2 and a[2] else k
        return PoolSpec(
            "max",
            n,
            k,
            s,
            _ints(a[3] if len(a) > 3 else 0, n, 0),
            _ints(a[4] if len(a) > 4 else 1, n, 1),
            bool(a[5]) if len(a) > 5 else False,
        )
    if t in ("aten.avg_pool1d.default", "aten.avg_pool2d.default", "aten.avg_pool3d.default"):
        n = {"1d": 1, "2d": 2, "3d": 3}[t.split("_pool")[1][:2]]
        k = _ints(a[1], n)
        s = _ints(a[2], n) if len(a) > 2 and a[2] else k
        return PoolSpec(
            "avg",
            n,
            k,
            s,
            _ints(a[3] if len(a) > 3 else 0, n, 0),
            (1,) * n,
            bool(a[4]) if len(a) > 4 else False,
            bool(a[5]) if len(a) > 5 else True,
            int(a[6]) if len(a) > 6 and a[6] is not None else None,  # type: ignore[arg-type]
        )
    raise DesignError(f"no pooling template for {t}")


def render_pool(
    graph: OpGraph, group: Group, name: str, variant: str, params: Mapping[str, Any]
) -> RenderedKernel:
    """Render a pooling group (its single pooling node and the pooled-values getitem)."""
    node = graph.node(group.nodes[0])
    spec = pool_spec(node)
    src = node.args[0]
    assert isinstance(src, Ref)
    out_name = group.outputs[0]
    p = {**DEFAULTS, **params}
    kname = f"{name}_kernel"
    args = KernelArgs()
    x, y = safe_name(src.name), safe_name(out_name)
    args.pointer(x)
    args.pointer(y)
    dims3 = ["D", "H", "W"][3 - spec.nsp :]
    for d in dims3:
        args.scalar(f"I{d}", f"I{d}")
    for d in dims3:
        args.scalar(f"O{d}", f"O{d}")
    # pad the spec to three dimensions (absent leading ones: size 1, kernel 1)
    pad = 3 - spec.nsp
    K = (1,) * pad + spec.kernel
    S = (1,) * pad + spec.stride
    P = (0,) * pad + spec.padding
    D = (1,) * pad + spec.dilation
    has = {"D": spec.nsp >= 3, "H": spec.nsp >= 2, "W": True}
    code = Code()
    code.indent()
    code.add(
        "pid = tl.program_id(0)",
        "n_wb = tl.cdiv(OW, BLOCK_W)",
        "wb = pid % n_wb",
        "t = pid // n_wb",
    )
    if has["H"]:
        code.add("n_hb = tl.cdiv(OH, BLOCK_H)", "hb = t % n_hb", "t = t // n_hb")
        code.add("oh = hb * BLOCK_H + tl.arange(0, BLOCK_H)[:, None]  # [BLOCK_H, 1] output rows")
    else:
        code.add("oh = tl.arange(0, BLOCK_H)[:, None]  # one output row (1-D pooling)")
    if has["D"]:
        code.add("od = t % OD", "plane = t // OD  # flat (batch, channel) index")
    else:
        code.add("plane = t  # flat (batch, channel) index")
    code.add(
        "ow = wb * BLOCK_W + tl.arange(0, BLOCK_W)[None, :]  # [1, BLOCK_W] output columns",
        "out_mask = (ow < OW)" + (" & (oh < OH)" if has["H"] else " & (oh < 1)"),
    )
    plane_in = " * ".join(f"I{d}" for d in dims3)
    code.add(f"x_plane = {x}_ptr + plane.to(tl.int64) * ({plane_in})")
    fill = '-float("inf")' if spec.kind == "max" else "0.0"
    code.add(f"acc = tl.full([BLOCK_H, BLOCK_W], {fill}, tl.float32)")
    # window starts
    if has["D"]:
        code.add(f"d0 = od * {S[0]} - {P[0]}")
    if has["H"]:
        code.add(f"h0 = oh * {S[1]} - {P[1]}")
    code.add(f"w0 = ow * {S[2]} - {P[2]}")
    loops = []
    if has["D"]:
        loops.append(("kd", K[0], D[0], "d0", "id_", "ID"))
    if has["H"]:
        loops.append(("kh", K[1], D[1], "h0", "ih", "IH"))
    loops.append(("kw", K[2], D[2], "w0", "iw", "IW"))
    code.add("# every tap of the window, unrolled; out-of-range taps are masked (padding)")
    conds: list[str] = []
    offs: list[str] = []
    for var, k, dil, start, idx, size in loops:
        code.add(f"for {var} in tl.static_range({k}):")
        code.indent()
        code.add(f"{idx} = {start} + {var} * {dil}")
        conds.append(f"({idx} >= 0) & ({idx} < {size})")
        stride = {"ID": "IH * IW", "IH": "IW", "IW": "1"}[size]
        offs.append(f"{idx} * {stride}" if stride != "1" else idx)
    code.add(f"m = out_mask & {' & '.join(conds)}")
    code.add(f"v = tl.load(x_plane + {' + '.join(offs)}, mask=m, other={fill}).to(tl.float32)")
    code.add("acc = tl.maximum(acc, v)" if spec.kind == "max" else "acc = acc + v")
    for _ in loops:
        code.dedent()
    if spec.kind == "avg":
        code.add("# the divisor PyTorch uses: taps inside the (padded) input")
        terms = []
        for _var, k, _dil, start, _idx, size in loops:
            st, pd = {"d0": (S[0], P[0]), "h0": (S[1], P[1]), "w0": (S[2], P[2])}[start]
            lo = f"{start}"
            hi_pad = f"tl.minimum({start} + {k}, {size} + {pd})"
            if spec.divisor_override is not None:
                continue
            if spec.count_include_pad:
                terms.append(f"({hi_pad} - {lo})")
            else:
                terms.append(f"(tl.minimum({hi_pad}, {size}) - tl.maximum({lo}, 0))")
        divisor = (
            str(float(spec.divisor_override))
            if spec.divisor_override is not None
            else " * ".join(terms)
        )
        code.add(f"acc = acc / ({divisor})")
    code.add(
        "out_plane = "
        + f"{y}_ptr + plane.to(tl.int64) * ({' * '.join(f'O{d}' for d in dims3)})"
        + (" + od * OH * OW" if has["D"] else ""),
    )
    code.add(f"tl.store(out_plane + oh * OW + ow, acc.to({y}_ptr.dtype.element_ty), mask=out_mask)")
    kernel = "\n".join(signature(kname, args, ["BLOCK_H", "BLOCK_W"]) + code.lines)

    w = Code()
    w.add(f"def {name}({x}):")
    w.indent()
    w.add(
        f'"""{spec.kind.capitalize()} pooling over the last {spec.nsp} dimension(s): '
        'one program per output tile."""'
    )
    w.add(f"{x} = {x}.contiguous()  # planes are addressed as dense (..., spatial) blocks")
    w.add("# sizes come from the runtime tensors, so any input shape works")
    lead = f"{x}.shape[:-{spec.nsp}]"
    w.add(f"lead = {lead}")
    for i, d in enumerate(dims3):
        axis = -spec.nsp + i
        k, s_, p_, dl = spec.kernel[i], spec.stride[i], spec.padding[i], spec.dilation[i]
        w.add(f"I{d} = {x}.shape[{axis}]")
        w.add(f"O{d} = _pool_out_size(I{d}, {k}, {s_}, {p_}, {dl}, {spec.ceil_mode})")
    w.add("n_planes = 1", "for s in lead:", "    n_planes *= s")
    out_shape = ", ".join(f"O{d}" for d in dims3)
    w.add(f"{y} = torch.empty((*lead, {out_shape}), device={x}.device, dtype={x}.dtype)")
    if not has["H"]:
        w.add("OH = 1")
    if not has["D"]:
        w.add("OD = 1")
    w.add(
        f"BLOCK_W = min({p['BLOCK_W']}, triton.next_power_of_2(OW))",
        f"BLOCK_H = min({p['BLOCK_H']}, triton.next_power_of_2(OH))" if has["H"] else "BLOCK_H = 1",
        "grid = (triton.cdiv(OW, BLOCK_W) * triton.cdiv(OH, BLOCK_H) * OD * n_planes,)",
    )
    items = [x, y] + [f"I{d}" for d in dims3] + [f"O{d}" for d in dims3]
    w.add(
        f"{kname}[grid]({', '.join(items)}, BLOCK_H=BLOCK_H, BLOCK_W=BLOCK_W, "
        f"num_warps={p['WARPS']})"
    )
    w.add(f"return {y},")
    return RenderedKernel((kernel,), w.text(), name, (x,), (out_name,), ("_pool_out_size",))


POOL_OUT_SIZE = '''def _pool_out_size(size, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's pooling output size (the last window must start inside the padded input)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out'''
