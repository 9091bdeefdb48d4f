"""Scan kernels: a cumulative sum or product with its prologue (a mask, a product) and epilogue.

row      the scanned dimension is innermost: a program owns BLOCK_M rows and walks them in
         blocks of BLOCK_N, carrying each row's running total from block to block
column   contiguous dimensions follow the scanned one (a scan over time of (B, T, D)): a
         program owns BLOCK_P contiguous positions and walks the scanned axis in blocks of
         BLOCK_S, so every load stays contiguous
reverse  the same walk from the end (``tl.cumsum(..., reverse=True)``): a suffix sum
         without the two flips PyTorch code pays for
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph, Ref
from kernelwright.design.kernel.common import (
    Code,
    DesignError,
    RenderedKernel,
    allocate,
    dim_sources,
    launch,
    signature,
    wrapper_params,
)
from kernelwright.design.kernel.emitter import (
    BodyEmitter,
    Context,
    IndexGroup,
    KernelArgs,
    safe_name,
)
from kernelwright.design.ops import classify, scan_info

ROW_DEFAULTS = {"BLOCK_N": 1024, "ROWS": 1, "WARPS": 4}
COLUMN_DEFAULTS = {"BLOCK_S": 32, "COLS": 64, "WARPS": 4}

PROD_COMBINE = "_prod_combine"


def render_scan(
    graph: OpGraph, group: Group, name: str, variant: str, params: Mapping[str, Any]
) -> RenderedKernel:
    """Render a scan group (the schedule follows the layout; ``variant`` is informational)."""
    assert group.layout is not None
    layout = group.layout
    scans = [n for n in group.nodes if classify(graph.node(n)) == "scan"]
    if len(scans) != 1:
        raise DesignError("a scan group holds exactly one scan")
    s = scans[0]
    node = graph.node(s)
    src = node.args[0]
    assert isinstance(src, Ref)
    _, kind, reverse = scan_info(node, graph.meta(src.name).rank)
    (sd,) = layout.reduce
    n = len(layout.hint)
    row = sd == n - 1
    outer = tuple(range(sd))
    inner = tuple(range(sd + 1, n))
    args = KernelArgs()
    em = BodyEmitter(graph, group.nodes, layout, args, group.inputs)
    head, code = Code(), Code()
    head.indent()
    code.indent()
    if row:
        p = {**ROW_DEFAULTS, **params}
        par = IndexGroup(outer, "rows", "row_mask", 0, hoist=True)
        red = IndexGroup((sd,), "cols", "col_mask", 1)
        ax, block, shape = 1, "BLOCK_N", "[BLOCK_M, 1]"
        head.add(
            "pid = tl.program_id(0)",
            "rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]  # [BLOCK_M, 1] rows",
            "row_mask = rows < n_rows",
        )
        ctx = Context((par, red))
        consts = ["BLOCK_M", "BLOCK_N"]
        args.scalar("n_rows", "n_rows")
        idx, mask = "cols", "col_mask"
    else:
        p = {**COLUMN_DEFAULTS, **params}
        out_g = IndexGroup(outer, "pid_outer", None, None, hoist=True) if outer else None
        par = IndexGroup(inner, "cols", "col_mask", 1, hoist=True)
        red = IndexGroup((sd,), "rs", "r_mask", 0)
        ax, block, shape = 0, "BLOCK_S", "[1, BLOCK_P]"
        head.add(
            "pid = tl.program_id(0)",
            "n_inner_blocks = tl.cdiv(n_inner, BLOCK_P)",
        )
        if out_g is not None:
            head.add("pid_outer = pid // n_inner_blocks  # flat index of the dims before the scan")
        head.add(
            "# the BLOCK_P contiguous positions of this program, as a [1, BLOCK_P] row",
            "cols = (pid % n_inner_blocks) * BLOCK_P + tl.arange(0, BLOCK_P)[None, :]",
            "col_mask = cols < n_inner",
        )
        ctx = Context(tuple(g for g in (out_g, par, red) if g is not None))
        consts = ["BLOCK_P", "BLOCK_S"]
        args.scalar("n_inner", "n_inner")
        idx, mask = "rs", "r_mask"
    args.scalar("n_scan", "n_scan")
    acc_dtype = "tl.float32" if graph.meta(s).is_float else "tl.int64"
    one = "1.0" if acc_dtype == "tl.float32" else "1"
    zero = "0.0" if acc_dtype == "tl.float32" else "0"
    neutral = one if kind == "prod" else zero
    code.add(
        f"carry = tl.full({shape}, {neutral}, {acc_dtype})  # total of the blocks walked so far"
    )
    code.add(f"for start in range(0, n_scan, {block}):")
    code.indent()
    arange = f"tl.arange(0, {block})" + ("[None, :]" if row else "[:, None]")
    if reverse:
        code.add(f"{idx} = n_scan - {block} - start + {arange}  # walk from the end: a suffix scan")
        code.add(f"{mask} = ({idx} >= 0) & ({idx} < n_scan)")
    else:
        code.add(f"{idx} = start + {arange}")
        code.add(f"{mask} = {idx} < n_scan")
    lines: list[str] = []
    v = em.value(src.name, ctx, lines)
    code.extend(lines)
    vm = em.mask_for(src.name, ctx) or "True"
    cast = f".to({acc_dtype})"
    code.add(f"v = tl.where({vm}, {v}{cast}, {neutral})  # masked lanes hold the neutral element")
    rev = ", reverse=True" if reverse else ""
    if kind == "sum":
        code.add(
            f"{safe_name(s)} = tl.cumsum(v, axis={ax}{rev}) + carry",
            f"carry = carry + tl.sum(v, axis={ax}, keep_dims=True)",
        )
    else:
        code.add(
            f"{safe_name(s)} = tl.cumprod(v, axis={ax}{rev}) * carry",
            f"carry = carry * tl.reduce(v, {ax}, {PROD_COMBINE}, keep_dims=True)",
        )
        em.helpers.add(PROD_COMBINE)
    em.done[em.key(s, ctx)] = safe_name(s)
    for out in group.outputs:
        lines = []
        em.store(out, safe_name(out), ctx, lines, contiguous=True)
        code.extend(lines)
    kname = f"{name}_kernel"
    kernel = "\n".join(
        signature(kname, args, consts)
        + head.lines
        + ["    " + ln for ln in em.prelude]
        + code.lines
    )

    w = Code()
    wparams = wrapper_params(graph, group)
    w.add(f"def {name}({', '.join(wparams)}):")
    w.indent()
    what = f"cumulative {'sum' if kind == 'sum' else 'product'}" + (
        " from the end" if reverse else ""
    )
    w.add(f'"""Fused {what} along dim {sd} ({"row" if row else "column"} walk with a carry)."""')
    w.add("# sizes come from the runtime tensors, so any input shape works")
    sources = dim_sources(graph, group, layout)
    for d in sorted(sources):
        w.add(f"dim{d} = {sources[d]}")
    allocate(graph, group, layout, w, safe_name(group.inputs[0]))
    prod = lambda ds: " * ".join(f"dim{d}" for d in ds) or "1"  # noqa: E731
    w.add(f"n_scan = dim{sd}")
    if row:
        w.add(
            f"n_rows = {prod(outer)}",
            f"BLOCK_N = min({p['BLOCK_N']}, triton.next_power_of_2(n_scan))",
            f"BLOCK_M = min({p['ROWS']}, triton.next_power_of_2(n_rows))",
            "grid = (triton.cdiv(n_rows, BLOCK_M),)",
        )
        launch(
            kname,
            "grid",
            args,
            {"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "num_warps": p["WARPS"]},
            w,
        )
    else:
        w.add(
            f"n_outer = {prod(outer)}",
            f"n_inner = {prod(inner)}",
            f"BLOCK_S = min({p['BLOCK_S']}, triton.next_power_of_2(n_scan))",
            f"BLOCK_P = min({p['COLS']}, triton.next_power_of_2(n_inner))",
            "grid = (triton.cdiv(n_inner, BLOCK_P) * n_outer,)",
        )
        launch(
            kname,
            "grid",
            args,
            {"BLOCK_P": "BLOCK_P", "BLOCK_S": "BLOCK_S", "num_warps": p["WARPS"]},
            w,
        )
    outs = ", ".join(safe_name(o) for o in group.outputs)
    w.add(f"return {outs}" + ("," if len(group.outputs) == 1 else ""))
    return RenderedKernel(
        (kernel,), w.text(), name, tuple(wparams), tuple(group.outputs), tuple(sorted(em.helpers))
    )
