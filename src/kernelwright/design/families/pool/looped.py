"""Pooling with the window's outer taps in a loop: few registers, any window size.

``pool-window`` unrolls a program's input rows so that overlapping windows share them; a large
window then holds many rows in flight per thread, its registers cap the SM's occupancy, and past
``MAX_UNROLLED_LOADS`` it cannot be compiled promptly at all. This schedule is the other side of
that trade:

tile     ``ROWS`` output rows (planes x output depth x output height, flattened) by ``BLOCK_W``
         output columns by ``KWP`` (the window's width, next power of two): one tap row of
         every output in the tile is one load, contiguous along W where the dilation is 1
loop     the window's outer taps (depth x height, ``KD * KH``) are a loop, not unrolled: a
         program's registers and its compile time do not grow with the window
combine  each tap row is reduced along its width as soon as it is loaded (a sum in fp32, or a
         max whose NaN is carried explicitly, as PyTorch propagates it), so a thread holds one
         partial result per output

Each input is read once from DRAM where windows do not overlap (stride >= kernel); overlapping
windows read their shared inputs again (from the L1 or L2), which the family's cost counts.
Average pooling divides by exactly the count PyTorch uses (``count_include_pad``,
``divisor_override``, ``ceil_mode``). Sizes come from the runtime tensors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelwright.design.families.pool.template import PoolSpec, fold_unit_windows, pool_spec
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph, Ref
from kernelwright.design.kernel.common import Code, RenderedKernel, signature
from kernelwright.design.kernel.emitter import KernelArgs, safe_name

DEFAULTS = {"BLOCK_W": 128, "ROWS": 2, "WARPS": 4}
_AXES = ("D", "H", "W")


def _axes(spec: PoolSpec) -> dict[str, tuple[int, int, int, int]]:
    """(kernel, stride, padding, dilation) per axis D, H, W; an axis the op does not pool is
    the unit window (its size is 1 in the wrapper's view)."""
    unit = (1, 1, 0, 1)
    per = [unit] * (3 - spec.nsp) + list(
        zip(spec.kernel, spec.stride, spec.padding, spec.dilation, strict=True))
    return dict(zip(_AXES, per, strict=True))


def reread_factor(spec: PoolSpec) -> float:
    """How many times each input is read: once where the windows tile or skip inputs, ``k / s``
    per axis where they overlap (the loop does not share rows between outputs)."""
    factor = 1.0
    for k, s, _p, d in _axes(fold_unit_windows(spec)).values():
        factor *= max(1.0, (d * (k - 1) + 1) / s) if k > 1 else 1.0
    return factor


def render_looped(
    graph: OpGraph, group: Group, name: str, params: Mapping[str, Any]
) -> RenderedKernel:
    """Render a pooling group with the window's outer taps looped (see the module docstring)."""
    node = graph.node(group.nodes[0])
    spec = fold_unit_windows(pool_spec(node))
    src = node.args[0]
    assert isinstance(src, Ref)
    p = {**DEFAULTS, **params}
    axes = _axes(spec)
    x, y = safe_name(src.name), safe_name(group.outputs[0])
    kname = f"{name}_kernel"
    args = KernelArgs()
    args.pointer("x")
    args.pointer("y")
    for s in ("n_rows", "ID", "IH", "IW", "OD", "OH", "OW", "n_wb"):
        args.scalar(s, s)
    kernel = "\n".join(signature(kname, args, ["ROWS", "BLOCK_W", "KWP"])
                       + _body(spec, axes).lines)
    wrapper = _wrapper(spec, axes, p, name, kname, x, y, [s for s, _ in args.scalars])
    return RenderedKernel((kernel,), wrapper, name, (x,), (group.outputs[0],), ("_pool_out_size",))


def _body(spec: PoolSpec, axes: Mapping[str, tuple[int, int, int, int]]) -> Code:
    kd, sd, pd, dd = axes["D"]
    kh, sh, ph, dh = axes["H"]
    kw, sw, pw, dw = axes["W"]
    is_max = spec.kind == "max"
    c = Code()
    c.indent()
    c.add(
        "pid = tl.program_id(0)",
        "wb = pid % n_wb",
        "rb = pid // n_wb",
        "# the tile's output rows: planes x output depth x output height, flattened",
        "r = rb * ROWS + tl.arange(0, ROWS)",
        "r_ok = r < n_rows",
        "oh = r % OH",
        "od = (r // OH) % OD",
        "plane = (r // OH // OD).to(tl.int64) * ID * IH * IW",
        "ow = wb * BLOCK_W + tl.arange(0, BLOCK_W)",
        "kw = tl.arange(0, KWP)",
        f"iw = {_at('ow[:, None]', sw, pw, 'kw[None, :]', dw)}  # BLOCK_W x KWP input columns",
        f"w_ok = (ow[:, None] < OW) & (kw[None, :] < {kw}) & (iw >= 0) & (iw < IW)",
    )
    if is_max:
        c.add("acc = tl.full([ROWS, BLOCK_W], float('-inf'), tl.float32)",
              "nan = tl.zeros([ROWS, BLOCK_W], tl.int32)  # NaNs seen: max ignores them")
    else:
        c.add("acc = tl.zeros([ROWS, BLOCK_W], tl.float32)")
    c.add(f"# the window's outer taps in a loop: registers do not grow with the window",
          f"for t in range({kd * kh}):")
    c.indent()
    c.add(
        f"id_ = {_at('od', sd, pd, f'(t // {kh})', dd)}",
        f"ih = {_at('oh', sh, ph, f'(t % {kh})', dh)}",
        "row_ok = r_ok & (id_ >= 0) & (id_ < ID) & (ih >= 0) & (ih < IH)",
        "row = plane + (id_ * IH + ih).to(tl.int64) * IW",
        "ok = row_ok[:, None, None] & w_ok[None, :, :]",
    )
    other = "float('-inf')" if is_max else "0.0"
    c.add(f"v = tl.load(x_ptr + row[:, None, None] + iw[None, :, :], mask=ok, "
          f"other={other}).to(tl.float32)")
    if is_max:
        c.add("nan += tl.sum((v != v).to(tl.int32), axis=2)",
              "acc = tl.maximum(acc, tl.max(v, axis=2))")
    else:
        c.add("acc += tl.sum(v, axis=2)")
    c.dedent()
    if is_max:
        c.add("acc = tl.where(nan > 0, float('nan'), acc)")
    else:
        c.add(f"acc = acc * {_reciprocal(spec, axes)}")
    c.add(
        "out = y_ptr + (r.to(tl.int64) * OW)[:, None] + ow[None, :]",
        "tl.store(out, acc.to(y_ptr.dtype.element_ty), mask=r_ok[:, None] & (ow[None, :] < OW))",
    )
    return c


def _reciprocal(spec: PoolSpec, axes: Mapping[str, tuple[int, int, int, int]]) -> str:
    """1 / PyTorch's divisor: the override, else a count per axis (taps inside the padded input
    with ``count_include_pad``, else inside the input), multiplied."""
    if spec.divisor_override is not None:
        return repr(1.0 / spec.divisor_override)
    counts = []
    for axis, pos in (("D", "od[:, None]"), ("H", "oh[:, None]"), ("W", "ow[None, :]")):
        k, s, p, _d = axes[axis]
        if k == 1 and p == 0:
            continue
        start = f"({_at(pos, s, p)})"
        end = f"tl.minimum({start} + {k}, I{axis} + {p})"
        counts.append(f"({end} - {start})" if spec.count_include_pad
                      else f"(tl.minimum({end}, I{axis}) - tl.maximum({start}, 0))")
    return f"(1.0 / ({' * '.join(counts) or '1'}))"


def _wrapper(
    spec: PoolSpec,
    axes: Mapping[str, tuple[int, int, int, int]],
    p: Mapping[str, Any],
    name: str,
    kname: str,
    x: str,
    y: str,
    scalars: list[str],
) -> str:
    w = Code()
    w.add(f"def {name}({x}):")
    w.indent()
    w.add(f'"""{spec.kind.capitalize()} pooling over the last {spec.nsp} dimension(s): the '
          'window\'s outer taps looped, each tap row one load."""')
    w.add(f"{x} = {x}.contiguous()  # planes are addressed as dense (..., spatial) blocks")
    w.add(f"lead = {x}.shape[:-{spec.nsp}]", "n_planes = 1", "for s in lead:", "    n_planes *= s")
    pooled = _AXES[3 - spec.nsp:]
    for d in _AXES:
        if d not in pooled:
            w.add(f"I{d} = O{d} = 1")
            continue
        k, s_, p_, dl = axes[d]
        w.add(f"I{d} = {x}.shape[{_AXES.index(d) - 3}]")
        w.add(f"O{d} = _pool_out_size(I{d}, {k}, {s_}, {p_}, {dl}, {spec.ceil_mode})")
    out_shape = ", ".join(f"O{d}" for d in pooled)
    w.add(
        f"{y} = torch.empty((*lead, {out_shape}), device={x}.device, dtype={x}.dtype)",
        "n_rows = n_planes * OD * OH",
        f"BLOCK_W = max(2, min({p['BLOCK_W']}, _pow2(OW)))",
        f"ROWS = max(1, min({p['ROWS']}, _pow2(n_rows)))",
        "n_wb = _cdiv(OW, BLOCK_W)",
        f"{kname}[(_cdiv(n_rows, ROWS) * n_wb,)](",
    )
    w.indent()
    w.add(f"{x}, {y}, {', '.join(scalars)},")
    w.add(f"ROWS=ROWS, BLOCK_W=BLOCK_W, KWP={_pow2(axes['W'][0])}, num_warps={p['WARPS']},")
    w.dedent()
    w.add(")")
    w.add(f"return {y},")
    return w.text()


def _at(out: str, stride: int, pad: int, tap: str = "", dil: int = 1) -> str:
    """The input index ``out * stride - pad + tap * dil``, without its unit factors and zero
    terms."""
    expr = out if stride == 1 else f"{out} * {stride}"
    if pad:
        expr += f" - {pad}"
    if tap:
        expr += f" + {tap}" if dil == 1 else f" + {tap} * {dil}"
    return expr


def _pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()
