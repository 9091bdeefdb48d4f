"""Element-wise kernels: a chain of pointwise ops with broadcasting, one read and one write.

flat    every operand is contiguous over the whole domain: one flat index, BLOCK elements per
        program, vectorised loads (Triton specialises unit strides)
tiled   some operand broadcasts (a per-channel weight, a per-row mask): the domain splits
        into rows (leading dimensions, index maths once per row) and contiguous columns (the
        longest trailing run every operand can index with one stride), so no element pays
        for a division
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import (
    Code,
    DesignError,
    RenderedKernel,
    allocate,
    dim_sources,
    launch,
    program_id,
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

FLAT_DEFAULTS = {"BLOCK": 1024, "WARPS": 4}
TILED_DEFAULTS = {"BLOCK_N": 1024, "TILE": 2048, "WARPS": 4}


def contiguous_suffix(graph: OpGraph, group: Group) -> int:
    """Index of the first domain dimension of the longest trailing run every operand (and
    output) indexes with one stride; 0 means the flat schedule applies."""
    assert group.layout is not None
    layout = group.layout
    em = BodyEmitter(graph, group.nodes, layout, KernelArgs(), group.inputs)
    n = len(layout.hint)
    # a lookup's table is addressed through its index (no axis map): it bounds no run
    values = [(v, False) for v in group.inputs if v in layout.axes]
    values += [(o, True) for o in group.outputs]
    start = n - 1
    while start > 0:
        dims = tuple(range(start - 1, n))
        ok = True
        for v, contiguous in values:
            meta = graph.meta(v)
            strides = em._domain_strides(v, None if contiguous else meta.strides)
            varying = em.varies(v) & set(dims)
            if varying and not em.mergeable(strides, dims):
                ok = False
                break
        if not ok:
            break
        start -= 1
    return start


def render_pointwise(
    graph: OpGraph, group: Group, name: str, variant: str, params: Mapping[str, Any]
) -> RenderedKernel:
    """Render a pointwise group as ``flat`` or ``tiled``."""
    assert group.layout is not None
    layout = group.layout
    split = contiguous_suffix(graph, group)
    if variant == "flat" and split != 0:
        raise DesignError("an operand broadcasts or is strided: the flat schedule does not apply")
    if variant == "tiled" and split == 0 and len(layout.hint) < 2:
        raise DesignError("a one-dimensional domain has no rows to tile")
    if variant == "tiled" and split == 0:
        split = len(layout.hint) - 1
    args = KernelArgs(index_64=True)
    em = BodyEmitter(graph, group.nodes, layout, args, group.inputs)
    head, body = Code(), Code()
    head.indent()
    body.indent()
    dims = tuple(range(len(layout.hint)))
    kname = f"{name}_kernel"
    if variant == "flat":
        p = {**FLAT_DEFAULTS, **params}
        head.add(
            f"pid = {program_id(0, args.index_64)}",
            "offs = pid * BLOCK + tl.arange(0, BLOCK)  # [BLOCK] flat positions of this program",
            "mask = offs < n_elements  # the last program may run past the end",
        )
        ctx = Context((IndexGroup(dims, "offs", "mask", 0),))
        consts = ["BLOCK"]
        args.scalar("n_elements", "n_elements", math.prod(layout.hint))  # bounds the mask
    else:
        p = {**TILED_DEFAULTS, **params}
        rows = IndexGroup(dims[:split], "rows", "row_mask", 0, hoist=True)
        cols = IndexGroup(dims[split:], "cols", "col_mask", 1)
        head.add(
            f"pid = {program_id(0, args.index_64)}",
            "n_col_blocks = tl.cdiv(n_cols, BLOCK_N)",
            "# a [BLOCK_M, 1] column of rows and a [1, BLOCK_N] run of contiguous columns",
            "rows = (pid // n_col_blocks) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]",
            "cols = (pid % n_col_blocks) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]",
            "row_mask = rows < n_rows",
            "col_mask = cols < n_cols",
        )
        ctx = Context((rows, cols))
        consts = ["BLOCK_M", "BLOCK_N"]
        args.scalar("n_rows", "n_rows")
        args.scalar("n_cols", "n_cols", math.prod(layout.hint[split:]))  # bounds the mask
    for out in group.outputs:
        lines: list[str] = []
        if graph.node(out).target == "aten.cat.default":
            em.store_cat(out, safe_name(out), ctx, lines)
        else:
            em.store(out, safe_name(out), ctx, lines, contiguous=True)
        body.extend(lines)
    lines = signature(kname, args, consts) + head.lines
    lines += ["    " + ln for ln in em.prelude] + body.lines
    kernel = "\n".join(lines)

    code = Code()
    wparams = wrapper_params(graph, group)
    code.add(f"def {name}({', '.join(wparams)}):")
    code.indent()
    ops = ", ".join(
        dict.fromkeys(graph.node(n).op for n in group.nodes if graph.node(n).kind == "call")
    )
    code.add(f'"""Fused element-wise chain ({ops}): one read, one write."""')
    code.add("# sizes come from the runtime tensors, so any input shape works")
    sources = dim_sources(graph, group, layout)
    for d in sorted(sources):
        code.add(f"dim{d} = {sources[d]}")
    allocate(graph, group, layout, code, safe_name(group.inputs[0]))
    prod = lambda ds: " * ".join(f"dim{d}" for d in ds) or "1"  # noqa: E731
    if variant == "flat":
        code.add(
            f"n_elements = {prod(dims)}",
            f"BLOCK = min({p['BLOCK']}, _pow2(max(n_elements, 1)))",
            "grid = (_cdiv(n_elements, BLOCK),)",
        )
        launch(kname, "grid", args, {"BLOCK": "BLOCK", "num_warps": p["WARPS"]}, code)
    else:
        code.add(
            f"n_rows = {prod(dims[:split])}",
            f"n_cols = {prod(dims[split:])}",
            f"BLOCK_N = min({p['BLOCK_N']}, _pow2(n_cols))",
            f"BLOCK_M = max(1, min(_pow2(n_rows), {p['TILE']} // BLOCK_N))",
            "grid = (_cdiv(n_rows, BLOCK_M) * _cdiv(n_cols, BLOCK_N),)",
        )
        launch(
            kname,
            "grid",
            args,
            {"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "num_warps": p["WARPS"]},
            code,
        )
    outs = ", ".join(safe_name(o) for o in group.outputs)
    code.add(f"return {outs}" + ("," if len(group.outputs) == 1 else ""))
    return RenderedKernel(
        (kernel,),
        code.text(),
        name,
        tuple(wparams),
        tuple(group.outputs),
        tuple(sorted(em.helpers)),
    )
