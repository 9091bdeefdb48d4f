"""Pooling with the window's W taps as a tile axis (skill ``pool-tap-tile``).

The window template (``template.py``) gives each thread V adjacent outputs whose inputs are
whole 16-byte vectors. For a W stride other than 1, 2 or 4 a thread's chunk spans several
vectors, so the lanes of a warp load ``V * stride`` elements apart and every load instruction
touches a line per lane (11 x 11 windows at stride 11: 44 elements apart, 11 loads a row).

Here a program's tile is ``[ROWS, BLOCK_W, KP]``: ROWS output rows (planes and the outer pooled
axes, flattened), BLOCK_W outputs along W and the W window's taps (KP: their count rounded up to
a power of two). Output ``ow``'s tap ``kw`` reads input ``ow * stride - pad + kw * dilation``;
where windows tile the row (stride = the window's extent) a warp's lanes read one contiguous
run, each element once. The taps of the outer pooled axes are a loop over input rows (unrolled
while short); every tap combines into the tile elementwise, and the KP axis is reduced in
registers at the end. Padding and the lanes past the window read as -inf for max pooling (which
propagates NaN, as PyTorch does) and as 0 for average pooling, which divides by exactly the
count PyTorch uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelwright.design.families.pool.template import (
    PoolSpec,
    Window,
    divisor_count,
    pooled_group,
    wrapper_head,
)
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import Code, RenderedKernel, signature
from kernelwright.design.kernel.emitter import KernelArgs

DEFAULTS = {"BLOCK_W": 64, "ROWS": 2, "WARPS": 4}
# Outer taps (the D and H window's) unrolled at most: past this the taps are a loop, so a large
# window still compiles promptly
MAX_UNROLLED_TAPS = 32
AXES = ("D", "H")  # the outer pooled axes of a 3-D pooling, outermost first


def tap_pad(spec: PoolSpec) -> int:
    """KP: the W window's taps rounded up to a power of two (a tile axis)."""
    return 1 << (spec.kernel[-1] - 1).bit_length()


def _at(out: str, w: Window, tap: str = "") -> str:
    """Kernel expression: the input index of ``out``'s window start (and of its tap ``tap``)."""
    expr = f"{out} * {w.s}" if w.s != 1 else out
    if w.p:
        expr += f" - {w.p}"
    if tap:
        expr += f" + {tap}" if w.dil == 1 else f" + {tap} * {w.dil}"
    return expr


def _outer(spec: PoolSpec) -> list[tuple[str, Window]]:
    """The outer pooled axes' names and windows, outermost first."""
    names = AXES[len(AXES) - (spec.nsp - 1) :] if spec.nsp > 1 else ()
    dims = zip(spec.kernel, spec.stride, spec.padding, spec.dilation, strict=True)
    windows = [Window(k, s, p, d) for k, s, p, d in dims]
    return list(zip(names, windows[:-1], strict=True))


def _kernel(spec: PoolSpec, kname: str, args: KernelArgs) -> str:
    c = Code()
    c.indent()
    outer = _outer(spec)
    w = Window(spec.kernel[-1], spec.stride[-1], spec.padding[-1], spec.dilation[-1])
    is_max = spec.kind == "max"
    fill = '-float("inf")' if is_max else "0.0"
    c.add(
        "pid = tl.program_id(0)",
        "wb = pid % n_wb",
        "r = (pid // n_wb) * ROWS + tl.arange(0, ROWS)[:, None]  # [ROWS, 1] output rows",
        "r_ok = r < n_rows",
        "rest = r",
    )
    for name, _ in reversed(outer):  # the innermost outer axis varies fastest along the rows
        c.add(f"o{name.lower()} = rest % O{name}", f"rest = rest // O{name}")
    c.add(
        "x_rows = x_ptr + rest.to(tl.int64) * x_sp  # [ROWS, 1] each row's plane",
        "ow = wb * BLOCK_W + tl.arange(0, BLOCK_W)[None, :]  # [1, BLOCK_W] outputs along W",
        "kw = tl.arange(0, KP)[None, None, :]  # [1, 1, KP] the W window's taps",
        f"iw = {_at('ow[:, :, None]', w, 'kw')}",
        f"w_ok = (kw < {w.k}) & (iw >= 0) & (iw < IW) & (ow[:, :, None] < OW)",
        f"acc = tl.full([ROWS, BLOCK_W, KP], {fill}, tl.float32)",
    )
    taps = 1
    for _, win in outer:
        taps *= win.k
    loop = "tl.static_range" if taps <= MAX_UNROLLED_TAPS else "range"
    c.add(f"for t in {loop}({taps}):  # the outer axes' taps: one input row each")
    c.indent()
    ok, offset, inner = ["r_ok"], "", taps
    for name, win in outer:
        inner //= win.k
        tap = f"(t // {inner})" if inner > 1 else "t"
        if inner * win.k < taps:
            tap = f"({tap} % {win.k})"
        idx = f"i{name.lower()}"
        c.add(f"{idx} = {_at(f'o{name.lower()}', win, tap)}")
        ok.append(f"({idx} >= 0) & ({idx} < I{name})")
        offset = f"{idx}.to(tl.int64)" if not offset else f"({offset}) * I{name} + {idx}"
    row = f"x_rows + ({offset}) * IW" if offset else "x_rows"
    c.add(
        f"ok = {' & '.join(ok)}",
        f"v = tl.load(({row})[:, :, None] + iw, mask=ok[:, :, None] & w_ok, "
        f"other={fill}).to(tl.float32)",
    )
    c.add(
        "acc = tl.maximum(acc, v, propagate_nan=tl.PropagateNan.ALL)" if is_max else "acc += v"
    )
    c.dedent()
    if is_max:
        c.add(
            "out = tl.max(acc, axis=2)",
            "# tl.max skips NaN; PyTorch's pooling propagates it",
            "nan = tl.sum((acc != acc).to(tl.int32), axis=2) > 0",
            'out = tl.where(nan, float("nan"), out)',
        )
    else:
        c.add(f"out = tl.sum(acc, axis=2) * {_scale(spec, outer, w)}")
    c.add(
        "tl.store(y_ptr + r.to(tl.int64) * OW + ow, out.to(y_ptr.dtype.element_ty), "
        "mask=r_ok & (ow < OW))"
    )
    return "\n".join(signature(kname, args, ["ROWS", "BLOCK_W", "KP"]) + c.lines)


def _scale(spec: PoolSpec, outer: list[tuple[str, Window]], w: Window) -> str:
    """The reciprocal of each output's divisor: a product of one count per axis."""
    if spec.divisor_override is not None:
        return repr(1.0 / spec.divisor_override)
    include = spec.count_include_pad
    counts = [divisor_count(_at("ow", w), w, "IW", include)]
    for name, win in outer:
        counts.append(divisor_count(_at(f"o{name.lower()}", win), win, f"I{name}", include))
    return f"(1.0 / ({' * '.join(counts)}))"


def render_pool_tap_tile(
    graph: OpGraph, group: Group, name: str, params: Mapping[str, Any]
) -> RenderedKernel:
    """Render a pooling group (its pooling node and the pooled-values getitem) as a tap tile."""
    spec, x, y = pooled_group(graph, group)
    p = {**DEFAULTS, **params}
    kname = f"{name}_kernel"
    outer = _outer(spec)
    args = KernelArgs()
    args.pointer("x")
    args.pointer("y")
    scalars = ["IW", "OW"]
    for axis, _ in outer:
        scalars += [f"I{axis}", f"O{axis}"]
    scalars += ["x_sp", "n_rows", "n_wb"]
    for s in scalars:
        args.scalar(s, s)
    kernel = _kernel(spec, kname, args)
    wrapper = _wrapper(spec, outer, p, name, kname, x, y, scalars)
    return RenderedKernel((kernel,), wrapper, name, (x,), (group.outputs[0],), ("_pool_out_size",))


def _wrapper(
    spec: PoolSpec,
    outer: list[tuple[str, Window]],
    p: Mapping[str, Any],
    name: str,
    kname: str,
    x: str,
    y: str,
    scalars: list[str],
) -> str:
    w = wrapper_head(spec, name, x, y, "the W window's taps a tile axis, each input row read in "
                     "contiguous runs")
    dims = [a for a, _ in outer] + ["W"]
    plane = " * ".join(f"I{d}" for d in dims)
    rows = " * ".join(["n_planes"] + [f"O{d}" for d in dims[:-1]])
    w.add(
        f"x_sp = {plane}  # an input plane's elements",
        f"n_rows = {rows}  # output rows: planes times the outer axes' outputs",
        f"BLOCK_W = min({p['BLOCK_W']}, _pow2(OW))",
        f"ROWS = min({p['ROWS']}, _pow2(n_rows))",
        "n_wb = _cdiv(OW, BLOCK_W)",
        "_launch(",
    )
    w.indent()
    w.add(f"{kname}, (n_wb * _cdiv(n_rows, ROWS),),")
    w.add(f"{x}, {y}, {', '.join(scalars)},")
    w.add(f"ROWS=ROWS, BLOCK_W=BLOCK_W, KP={tap_pad(spec)}, num_warps={p['WARPS']},")
    w.dedent()
    w.add(")")
    w.add(f"return {y},")
    return w.text()
