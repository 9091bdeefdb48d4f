"""Scan kernels: a cumulative sum or product with its prologue (a mask, a product) and epilogue.

row      the scanned dimension is innermost: a program owns BLOCK_M rows and walks them in
         blocks of BLOCK_N, carrying each row's running total from block to block
column   contiguous dimensions follow the scanned one (a scan over time of (B, T, D)): a
         program owns BLOCK_P contiguous positions and walks the scanned axis in blocks of
         BLOCK_S, so every load stays contiguous; with BLOCK_P = 128 per warp each thread holds
         whole columns of the block (4 adjacent positions), so the scan is sequential adds in
         registers, without shuffles or barriers
chained  a column walk cut into chunks of BLOCK_S steps, one program each, when the positions
         alone are too few to fill the GPU (a scan over time of a few thousand features):
         each program holds its chunk in registers, publishes the chunk's total, looks back
         over the chunks before it for its prefix (decoupled look-back: a chunk that has
         published its inclusive prefix ends the look-back) and writes the chunk once
reverse  the same walk from the end: a suffix sum without the two flips PyTorch code pays for.
         ``tl.cumsum(..., reverse=True)`` reverses lanes with five shuffles per element, so a
         reverse column walk reads its block's rows in descending order (each row is still one
         contiguous load) and scans forward, and a reverse row sum reads the block as 4-element
         vectors counted from its end: suffix sums inside each vector are three adds, the vectors'
         totals are scanned forward (their order is already the suffix order); a reverse row
         product keeps ``reverse=True`` (its exclusive prefix cannot come from a division)

An exclusive scan (each position gets the scan of the positions before it) reads every step's
predecessor: the scanned values are loaded one step back along the scanned axis (the first
step gets the neutral value), then scanned as usual, which is exact, where an inclusive scan
minus each value would cancel.

The chained scan orders programs by a ticket taken when each starts (not the program id, whose
launch order the hardware does not promise): chunk ``c`` of every column gets a ticket after
chunk ``c - 1``'s, so a program only waits for programs that have started and the look-back
cannot deadlock however few programs are resident. Under the interpreter, which runs programs
one after another, every earlier chunk has finished when a program looks back. Only one thread
runs a scalar atomic, so barriers fence each side (as in the team reductions): every thread's
total is stored before the releasing flag, and the acquiring read of a flag completes before
any thread loads what it announces.

The block loop is software-pipelined (``tl.range(..., num_stages=STAGES)``: the next blocks'
loads are in flight, through shared memory, while this block is scanned), so a program keeps
several blocks of loads outstanding although each block depends on the previous one's carry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kernelwright.design.aten import classify, scan_exclusive, scan_info
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph, Ref
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

ROW_DEFAULTS = {"BLOCK_N": 2048, "ROWS": 1, "WARPS": 8, "STAGES": 3}
COLUMN_DEFAULTS = {"BLOCK_S": 16, "COLS": 128, "WARPS": 1, "STAGES": 4}
CHAINED_DEFAULTS = {"BLOCK_S": 32, "COLS": 256, "WARPS": 2}

PROD_COMBINE = "_prod_combine"


@dataclass(frozen=True, slots=True)
class ScanPlan:
    """The schedule of one scan group.

    Attributes:
        row: the scanned dimension is innermost (else a column walk).
        kind: ``sum`` or ``prod``.
        reverse: a suffix scan.
        chunked: a reverse row sum read as 4-element vectors counted from the block's end.
        acc: the Triton dtype of the running values.
        exclusive: each position's own value left out (the values read one step back).
    """

    row: bool
    kind: str
    reverse: bool
    chunked: bool
    acc: str
    exclusive: bool = False

    @property
    def neutral(self) -> str:
        one, zero = ("1.0", "0.0") if self.acc == "tl.float32" else ("1", "0")
        return one if self.kind == "prod" else zero


def render_scan(
    graph: OpGraph, group: Group, name: str, variant: str, params: Mapping[str, Any]
) -> RenderedKernel:
    """Render a scan group: the schedule follows the layout; ``variant`` ``chained`` cuts a
    column walk into chunks (any other variant is informational)."""
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
    exclusive = scan_exclusive(node)
    if exclusive and reverse:
        raise DesignError("an exclusive scan walks forward")
    (sd,) = layout.reduce
    row = sd == len(layout.hint) - 1
    acc = "tl.float32" if graph.meta(s).is_float else "tl.int64"
    plan = ScanPlan(row, kind, reverse, row and reverse and kind == "sum", acc, exclusive)
    chained = variant == "chained"
    if chained and row:
        raise DesignError("a chained scan cuts a column walk; this scan runs along rows")
    defaults = ROW_DEFAULTS if row else CHAINED_DEFAULTS if chained else COLUMN_DEFAULTS
    p = {**defaults, **params}
    args = KernelArgs(index_64=True)
    em = BodyEmitter(graph, group.nodes, layout, args, group.inputs)
    head, code = Code(), Code()
    head.indent()
    code.indent()
    outer, inner = tuple(range(sd)), tuple(range(sd + 1, len(layout.hint)))
    if row:
        ctx, consts = _row_setup(plan, outer, sd, head, args)
    else:
        if chained:
            _ticket(head, args)
        else:
            head.add(f"pid = {program_id(0, args.index_64)}")
        ctx, consts = _column_setup(outer, inner, sd, head, args)
        args.hint("n_inner", math.prod(layout.hint[d] for d in inner))  # bounds the mask
    # a row walk's mask (and a reverse walk's first column) along tile axis 1 depends on n_scan
    args.scalar("n_scan", "n_scan", layout.hint[sd] if row else None)
    if chained:
        _chunk(plan, em, ctx, src.name, s, code)
    else:
        _walk(plan, em, ctx, src.name, s, code)
    for out in group.outputs:
        lines: list[str] = []
        em.store(out, safe_name(out), ctx, lines, contiguous=True)
        code.extend(lines)
    kname = f"{name}_kernel"
    kernel = "\n".join(
        signature(kname, args, consts if chained else [*consts, "STAGES"])
        + head.lines
        + ["    " + ln for ln in em.prelude]
        + code.lines
    )
    wrapper = _wrapper(graph, group, plan, p, name, kname, args, sd, outer, inner, chained)
    return RenderedKernel(
        (kernel,),
        wrapper,
        name,
        tuple(wrapper_params(graph, group)),
        tuple(group.outputs),
        tuple(sorted(em.helpers)),
    )


def _row_setup(
    plan: ScanPlan, outer: tuple[int, ...], sd: int, head: Code, args: KernelArgs
) -> tuple[Context, list[str]]:
    """BLOCK_M rows per program; a chunked walk indexes [rows, vectors, 4] tiles."""
    lead = "[:, None, None]" if plan.chunked else "[:, None]"
    head.add(
        f"pid = {program_id(0, args.index_64)}",
        f"rows = pid * BLOCK_M + tl.arange(0, BLOCK_M){lead}  # this program's rows",
        "row_mask = rows < n_rows",
    )
    if plan.chunked:
        head.add(
            "vec = tl.arange(0, BLOCK_N // 4)[None, :, None]  # 4-element vectors from the end",
            "lane = tl.arange(0, 4)[None, None, :]",
        )
    args.scalar("n_rows", "n_rows")
    par = IndexGroup(outer, "rows", "row_mask", 0, hoist=True)
    red = IndexGroup((sd,), "cols", "col_mask", 1)
    return Context((par, red)), ["BLOCK_M", "BLOCK_N"]


def _column_setup(
    outer: tuple[int, ...],
    inner: tuple[int, ...],
    sd: int,
    head: Code,
    args: KernelArgs,
) -> tuple[Context, list[str]]:
    """BLOCK_P contiguous positions per program (and one index of the dims before the scan),
    from ``pid``: the program id, or a chained scan's column block."""
    out_g = IndexGroup(outer, "pid_outer", None, None, hoist=True) if outer else None
    par = IndexGroup(inner, "cols", "col_mask", 1, hoist=True)
    red = IndexGroup((sd,), "rs", "r_mask", 0)
    head.add("n_inner_blocks = tl.cdiv(n_inner, BLOCK_P)")
    if out_g is not None:
        head.add("pid_outer = pid // n_inner_blocks  # flat index of the dims before the scan")
    head.add(
        "# the BLOCK_P contiguous positions of this program, as a [1, BLOCK_P] row",
        "cols = (pid % n_inner_blocks) * BLOCK_P + tl.arange(0, BLOCK_P)[None, :]",
        "col_mask = cols < n_inner",
    )
    args.scalar("n_inner", "n_inner")
    return Context(tuple(g for g in (out_g, par, red) if g is not None)), ["BLOCK_P", "BLOCK_S"]


def _ticket(head: Code, args: KernelArgs) -> None:
    """A chained scan's program: its chunk and column block, from a ticket."""
    args.pointer("flags")
    args.pointer("ws")
    args.scalar("n_chains", "n_chains")
    args.scalar("n_chunks", "n_chunks")
    head.add(
        "# a ticket (past the flags), not the program id: chunk c of every column block is",
        "# handed out after chunk c - 1, so a program waits only for programs that have started",
        "ticket = tl.atomic_add(flags_ptr + n_chains * n_chunks, 1)",
        "chunk = ticket // n_chains  # which BLOCK_S steps of the scanned axis",
        "pid = ticket % n_chains  # which column block (and index of the dims before the scan)",
    )


def _chunk(plan: ScanPlan, em: BodyEmitter, ctx: Context, src: str, scan: str, code: Code) -> None:
    """One chunk of a chained scan: its values in registers, its total published, the prefix of
    the chunks before it found by looking back, its inclusive prefix published, the scan."""
    first = "chunk * BLOCK_S + tl.arange(0, BLOCK_S)[:, None]"
    if plan.reverse:
        code.add(f"rs = n_scan - 1 - ({first})  # chunks counted from the end, rows descending")
        code.add("r_mask = rs >= 0")
    else:
        code.add(f"rs = {first}", "r_mask = rs < n_scan")
    _scanned_values(plan, em, ctx, src, code)
    n, acc = plan.neutral, plan.acc
    if plan.kind == "sum":
        total, combine = "tl.sum(v, axis=0, keep_dims=True)", "+"
        local = "tl.cumsum(v, axis=0)"
    else:
        total, combine = f"tl.reduce(v, 0, {PROD_COMBINE}, keep_dims=True)", "*"
        local = "tl.cumprod(v, axis=0)"
        em.helpers.add(PROD_COMBINE)
    em.helpers.add("_sleep_then")
    code.add(
        f"total = {total}  # the chunk's own total, per position",
        "",
        "# ---- publish the total (state 1), then look back over the chunks before this one; a",
        "# chunk in state 2 has published its inclusive prefix, which ends the look-back",
        "slot = pid * n_chunks + chunk",
        "lanes = tl.arange(0, BLOCK_P)[None, :]",
        "tl.store(ws_ptr + slot * BLOCK_P + lanes, total)",
        "tl.debug_barrier()  # every thread's total is stored before the flag announces it",
        'tl.atomic_xchg(flags_ptr + slot, 1, sem="release")',
        f"prefix = tl.full([1, BLOCK_P], {n}, {acc})",
        "back = chunk - 1",
        "while back >= 0:",
        "    flag = flags_ptr + pid * n_chunks + back",
        "    state = tl.load(flag, volatile=True)",
        "    while state == 0:",
        "        state = _sleep_then(state)",
        "        state = tl.load(flag, volatile=True)",
        '    state = tl.atomic_add(flag, 0, sem="acquire")  # its result is used: kept',
        "    tl.debug_barrier()  # no thread reads the workspace before the acquire",
        "    # state 2: the inclusive prefix, in the workspace's second half; 1: the total",
        "    at = ((state // 2) * n_chains * n_chunks + pid * n_chunks + back) * BLOCK_P",
        f'    prefix = prefix {combine} tl.load(ws_ptr + at + lanes, cache_modifier=".cg")',
        "    back = tl.where(state == 2, -1, back - 1)",
        "tl.store(ws_ptr + (n_chains * n_chunks + slot) * BLOCK_P + lanes, "
        f"prefix {combine} total)",
        "tl.debug_barrier()",
        'tl.atomic_xchg(flags_ptr + slot, 2, sem="release")',
        "",
        "# ---- the chunk's scan from registers, after the prefix of the chunks before it",
        f"{safe_name(scan)} = {local} {combine} prefix",
    )
    em.done[em.key(scan, ctx)] = safe_name(scan)


def _walk(plan: ScanPlan, em: BodyEmitter, ctx: Context, src: str, scan: str, code: Code) -> None:
    """The pipelined block loop: indices, the scanned values, the scan and the carry."""
    carry_shape = "[BLOCK_M, 1]" if plan.row else "[1, BLOCK_P]"
    block = "BLOCK_N" if plan.row else "BLOCK_S"
    code.add(
        f"carry = tl.full({carry_shape}, {plan.neutral}, {plan.acc})  # the blocks walked so far",
        f"for start in tl.range(0, n_scan, {block}, num_stages=STAGES):",
    )
    code.indent()
    code.add(*_indices(plan))
    _scanned_values(plan, em, ctx, src, code)
    ax = 1 if plan.row else 0
    # a reverse column walk reads its rows downwards: the forward scan is the suffix scan
    rev = ", reverse=True" if plan.reverse and plan.row else ""
    if plan.chunked:
        _chunked_suffix_sum(safe_name(scan), code)
    elif plan.kind == "sum":
        code.add(
            f"{safe_name(scan)} = tl.cumsum(v, axis={ax}{rev}) + carry",
            f"carry = carry + tl.sum(v, axis={ax}, keep_dims=True)",
        )
    else:
        code.add(
            f"{safe_name(scan)} = tl.cumprod(v, axis={ax}{rev}) * carry",
            f"carry = carry * tl.reduce(v, {ax}, {PROD_COMBINE}, keep_dims=True)",
        )
        em.helpers.add(PROD_COMBINE)
    em.done[em.key(scan, ctx)] = safe_name(scan)


def _scanned_values(plan: ScanPlan, em: BodyEmitter, ctx: Context, src: str, code: Code) -> None:
    """``v``: the block's values to scan (masked lanes: the neutral element); an exclusive
    scan's are read one step back along the scanned axis (``prev``), the first step neutral."""
    if plan.exclusive:
        axis = next(g for g in ctx.groups if not g.hoist and g.axis is not None)
        code.add(
            f"prev = {axis.index} - 1  # an exclusive scan reads each step's predecessor",
            f"prev_mask = {axis.mask} & (prev >= 0)",
        )
        ctx = Context(
            tuple(replace(g, index="prev", mask="prev_mask") if g is axis else g
                  for g in ctx.groups),
            ctx.suffix + "_prev",
        )
    lines: list[str] = []
    v = em.value(src, ctx, lines)
    code.extend(lines)
    vm = em.mask_for(src, ctx) or "True"
    code.add(
        f"v = tl.where({vm}, {v}.to({plan.acc}), {plan.neutral})  # masked lanes: neutral element"
    )


def _indices(plan: ScanPlan) -> list[str]:
    """The block's indices along the scanned axis and their mask."""
    if plan.chunked:
        return [
            "cols = n_scan - start - 4 * (vec + 1) + lane  # vectors counted from the block's end",
            "col_mask = cols >= 0",
        ]
    if plan.row:
        if plan.reverse:
            return [
                "cols = n_scan - BLOCK_N - start + tl.arange(0, BLOCK_N)[None, :]  # from the end",
                "col_mask = (cols >= 0) & (cols < n_scan)",
            ]
        return ["cols = start + tl.arange(0, BLOCK_N)[None, :]", "col_mask = cols < n_scan"]
    if plan.reverse:
        return [
            "rs = n_scan - 1 - start - tl.arange(0, BLOCK_S)[:, None]  # rows in descending order",
            "r_mask = rs >= 0",
        ]
    return ["rs = start + tl.arange(0, BLOCK_S)[:, None]", "r_mask = rs < n_scan"]


def _chunked_suffix_sum(out: str, code: Code) -> None:
    """Suffix sums of a [BLOCK_M, BLOCK_N // 4, 4] block whose vectors run from the end: three
    adds inside each vector (registers), a forward scan of the vectors' totals across lanes.
    ``suffix - total`` is the sum of the vectors after this one: one rounding of a value at most
    four elements larger than it, not a cancellation."""
    code.add(
        "va, vb = tl.split(tl.reshape(v, [BLOCK_M, BLOCK_N // 4, 2, 2]))",
        "e0, e2 = tl.split(va)",
        "e1, e3 = tl.split(vb)",
        "s2 = e2 + e3",
        "s1 = e1 + s2",
        "s0 = e0 + s1  # the vector's total",
        "after = carry + tl.cumsum(s0, axis=1) - s0  # everything after this vector",
        f"{out} = tl.reshape(tl.join(tl.join(s0, s2), tl.join(s1, e3)), "
        "[BLOCK_M, BLOCK_N // 4, 4]) + after[:, :, None]",
        "carry = carry + tl.sum(s0, axis=1, keep_dims=True)",
    )


def _wrapper(
    graph: OpGraph,
    group: Group,
    plan: ScanPlan,
    p: Mapping[str, Any],
    name: str,
    kname: str,
    args: KernelArgs,
    sd: int,
    outer: tuple[int, ...],
    inner: tuple[int, ...],
    chained: bool = False,
) -> str:
    assert group.layout is not None
    w = Code()
    wparams = wrapper_params(graph, group)
    w.add(f"def {name}({', '.join(wparams)}):")
    w.indent()
    what = f"cumulative {'sum' if plan.kind == 'sum' else 'product'}" + (
        " from the end" if plan.reverse else ""
    )
    walk = "row" if plan.row else "column"
    how = "chunks with a look-back" if chained else f"{walk} walk with a carry"
    w.add(f'"""Fused {what} along dim {sd} ({how})."""')
    w.add("# sizes come from the runtime tensors, so any input shape works")
    sources = dim_sources(graph, group, group.layout)
    for d in sorted(sources):
        w.add(f"dim{d} = {sources[d]}")
    allocate(graph, group, group.layout, w, safe_name(group.inputs[0]))
    prod = lambda ds: " * ".join(f"dim{d}" for d in ds) or "1"  # noqa: E731
    w.add(f"n_scan = dim{sd}")
    if plan.row:
        smallest = 4 if plan.chunked else 1  # a chunked block holds whole vectors
        w.add(
            f"n_rows = {prod(outer)}",
            f"BLOCK_N = max({smallest}, min({p['BLOCK_N']}, _pow2(n_scan)))",
            f"BLOCK_M = min({p['ROWS']}, _pow2(n_rows))",
            "grid = (_cdiv(n_rows, BLOCK_M),)",
        )
        consts = {"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "STAGES": p["STAGES"]}
    else:
        w.add(
            f"n_outer = {prod(outer)}",
            f"n_inner = {prod(inner)}",
            f"BLOCK_S = min({p['BLOCK_S']}, _pow2(n_scan))",
            f"BLOCK_P = min({p['COLS']}, _pow2(n_inner))",
        )
        consts = {"BLOCK_P": "BLOCK_P", "BLOCK_S": "BLOCK_S"}
        if chained:
            first = safe_name(group.inputs[0])
            dtype = "torch.float32" if plan.acc == "tl.float32" else "torch.int64"
            w.add(
                "n_chains = _cdiv(n_inner, BLOCK_P) * n_outer  # column blocks",
                "n_chunks = _cdiv(n_scan, BLOCK_S)",
                "# a state per chunk (0: nothing yet, 1: its total, 2: its inclusive prefix) and",
                "# the ticket counter past them; each chunk's total, then its inclusive prefix",
                f"flags = torch.zeros(n_chains * n_chunks + 1, device={first}.device, "
                "dtype=torch.int32)",
                f"ws = torch.empty(2 * n_chains * n_chunks * BLOCK_P, device={first}.device, "
                f"dtype={dtype})",
                "grid = (n_chains * n_chunks,)",
            )
        else:
            w.add("grid = (_cdiv(n_inner, BLOCK_P) * n_outer,)")
            consts["STAGES"] = p["STAGES"]
    consts["num_warps"] = p["WARPS"]
    launch(kname, "grid", args, consts, w)
    outs = ", ".join(safe_name(o) for o in group.outputs)
    w.add(f"return {outs}" + ("," if len(group.outputs) == 1 else ""))
    return w.text()
