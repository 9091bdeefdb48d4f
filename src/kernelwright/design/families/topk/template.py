"""Selection kernels: ``torch.topk(x, k, dim=-1)`` for a small k along rows that fit in
registers, with the group's prologue and its epilogue on the k results.

A program owns BLOCK_M rows, each whole in a ``[BLOCK_M, BLOCK_N]`` tile:

    prologue   the row's values as a one-pass row reduction computes them (a softmax's maximum
               and sum in registers): the row is read once
    keys       each value becomes an int32 key ordered like the float, NaN above +inf (torch's
               order; the keys CUDA's radix top-k sorts); for the smallest k the key is inverted
    lanes      the row's keys as BLOCK_N / 4 lanes of 4 adjacent columns (a reshape and two
               splits, free in registers: each thread holds 4 adjacent columns), each lane
               sorted once by a 5-exchange network (largest first, the lower column on a tie)
    rounds     K rounds of: the largest lane head, the first column holding it (the lowest index
               wins a tie), popped from its lane; round j fills position j of a
               ``[BLOCK_M, BLOCK_K]`` tile, so the results come sorted. Each round reduces over
               the lane heads and shifts 4 values, where knocking a column out of the whole row
               compared and selected every element twice
    epilogue   the values decoded from the keys (bit-exact), the indices, and the group's values
               computed from them on the ``[BLOCK_M, BLOCK_K]`` tile (a renormalisation's sum over
               the k results, an index cast); only the group's outputs are written

Values on the k positions (the layout's *narrow* values) are computed in their own context
(index ``ks``, mask ``k_mask``, names suffixed ``_k``); reductions over them run in registers
like the prologue's.

Why two reductions a round and not one: packing key and column into one int64, ``(key << 32) |
(BLOCK_N - col)``, makes one ``tl.max`` give both, but it is slower. A 32-bit integer max or min
over a row that sits in one warp (up to 128 fp32 columns) is a single ``redux.sync``; there is no
64-bit redux, so the packed max becomes a shuffle butterfly (two ``shfl.sync`` per step, one per
word) with a two-instruction compare and two selects per step and per element, in the thread as
well as across lanes: the packed form compiles to more instructions for every row length, and
this kernel is bound by instructions.

Why lanes: a round over the lane heads touches a quarter of the values that a round over the
whole row does, for the same indices and values. The instruction counts and timings behind both
rules are in ``measurements.csv``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernelwright.design.aten import classify, select_info
from kernelwright.design.families.reduction.accumulate import Accumulators
from kernelwright.design.families.reduction.passes import PassPlan
from kernelwright.design.fusion import Group
from kernelwright.design.graph import Node, OpGraph, Ref
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

DEFAULTS = {"ROWS": 16, "TILE": 2048, "WARPS": 4}
LAST = "-2147483648"  # the int32 key below every value's: padding and knocked-out columns
NAN_KEY = "0x7FFFFFFE"  # above +inf's key (0x7F800000); decodes to a NaN


@dataclass(frozen=True, slots=True)
class Axis:
    """One side of the tile, as the one-pass accumulators see it: the row's BLOCK_N columns or
    the BLOCK_K selected positions, reduced along tile axis 1."""

    par: IndexGroup
    red: IndexGroup
    n_red: str
    block_red: str
    red_axis: int = 1
    outer: IndexGroup | None = None

    @property
    def red_index(self) -> str:
        return self.red.index

    def reduced_shape(self) -> str:
        return "[BLOCK_M, 1]"

    def acc_shape(self) -> str:
        return f"[BLOCK_M, {self.block_red}]"

    def context(self, suffix: str = "") -> Context:
        return Context((self.par, self.red), suffix)


def select_node(graph: OpGraph, group: Group) -> Node:
    """The group's top-k node."""
    return next(graph.node(n) for n in group.nodes if classify(graph.node(n)) == "select")


def select_k(graph: OpGraph, group: Group) -> int:
    """The k of the group's top-k (a literal: fusion takes no other)."""
    node = select_node(graph, group)
    src = node.args[0]
    assert isinstance(src, Ref)
    _, k, _, _ = select_info(node, graph.meta(src.name).rank)
    assert k is not None
    return k


class SelectWriter:
    """Renders one selection group: the kernel body and what its wrapper needs. The prologue's
    row reductions are a one-pass reduction's (its accumulators, which collect the helpers)."""

    def __init__(self, graph: OpGraph, group: Group) -> None:
        assert group.layout is not None
        self.graph, self.group, self.layout = graph, group, group.layout
        self.acc = Accumulators(graph, group.layout, PassPlan())
        self.helpers = self.acc.helpers
        self.node = select_node(graph, group)
        self.source = self.acc.src(self.node.name)
        _, k, self.largest, _ = select_info(self.node, graph.meta(self.source).rank)
        if k is None or self.layout.reduce != (len(self.layout.hint) - 1,):
            raise DesignError("the selection template takes a literal k along the innermost dim")
        self.k = k
        self.axis = self.layout.reduce[0]
        self.par = tuple(range(self.axis))
        rows = IndexGroup(self.par, "rows", "row_mask", 0, hoist=True)
        self.row = Axis(rows, IndexGroup((self.axis,), "cols", "col_mask", 1), "n_cols", "BLOCK_N")
        self.top = Axis(rows, IndexGroup((self.axis,), "ks", "k_mask", 1), "K", "BLOCK_K")

    def side(self, name: str) -> tuple[Axis, Context]:
        """Where a value lives: on the k selected positions (narrow values) or along the row."""
        if name in self.layout.narrow:
            return self.top, self.top.context("_k")
        return self.row, self.row.context()

    def kernel(self, args: KernelArgs, kname: str) -> str:
        em = BodyEmitter(self.graph, self.group.nodes, self.layout, args, self.group.inputs)
        head, body = Code(), Code()
        head.indent()
        body.indent()
        head.add(
            f"pid = {program_id(0, args.index_64)}",
            "# the BLOCK_M rows of this program, as a [BLOCK_M, 1] column",
            "rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]",
            "row_mask = rows < n_rows  # the last program may run past the last row",
            "cols = tl.arange(0, BLOCK_N)[None, :]  # [1, BLOCK_N]: the whole row",
            "col_mask = cols < n_cols  # BLOCK_N is a power of two: mask the tail",
            "ks = tl.arange(0, BLOCK_K)[None, :]  # [1, BLOCK_K]: the selected positions",
            "k_mask = ks < K",
        )
        for name in self.group.nodes:
            kind = classify(self.graph.node(name))
            if kind == "reduction":
                axis, ctx = self.side(self.acc.src(name))
                em.done[em.key(name, ctx)] = self.acc.reduce_onepass(em, axis, ctx, name, body)
            elif kind == "select":
                self.select(em, body)
        body.add("# ---- write the results")
        for name in self.group.outputs:
            lines: list[str] = []
            em.store(name, safe_name(name), self.side(name)[1], lines, contiguous=True)
            body.extend(lines)
        self.helpers.update(em.helpers)
        args.scalars[:0] = [("n_rows", "n_rows"), ("n_cols", "n_cols")]
        consts = ["K", "BLOCK_M", "BLOCK_N", "BLOCK_K"]
        lines = signature(kname, args, consts) + head.lines
        return "\n".join(lines + ["    " + ln for ln in em.prelude] + body.lines)

    def select(self, em: BodyEmitter, code: Code) -> None:
        """The K rounds over the source's keys; the results become the getitems' values."""
        v = self.acc.value(em, self.source, self.row.context(), code)
        order = "largest" if self.largest else "smallest"
        code.add(
            f"# ---- top-K ({order} first) of {self.source}: int32 keys ordered like the floats",
            f"sel_key = {v}.to(tl.int32, bitcast=True)",
            "sel_key = tl.where(sel_key < 0, sel_key ^ 0x7FFFFFFF, sel_key)  # negatives: reversed",
            f"sel_key = tl.where({v} != {v}, {NAN_KEY}, sel_key)  # NaN ranks above +inf (torch)",
        )
        if not self.largest:
            code.add("sel_key = ~sel_key  # the smallest first: reverse the whole order")
        code.add(
            f"sel_key = tl.where(col_mask, sel_key, {LAST})  # padding is never selected",
            "# lanes of 4 adjacent columns (4 * lane + 2 * a + b), each a [BLOCK_M, LANES] tensor",
            "sel_a, sel_b = tl.split(tl.reshape(sel_key, [BLOCK_M, BLOCK_N // 4, 2, 2]))",
            "sel_h0, sel_h2 = tl.split(sel_a)",
            "sel_h1, sel_h3 = tl.split(sel_b)",
            "sel_g0 = tl.arange(0, BLOCK_N // 4)[None, :] * 4 + tl.zeros_like(sel_h0)",
            "sel_g1, sel_g2, sel_g3 = sel_g0 + 1, sel_g0 + 2, sel_g0 + 3",
            "# each lane sorted once: largest key first, the lower column on a tie",
            "sel_h0, sel_g0, sel_h1, sel_g1 = _topk_swap(sel_h0, sel_g0, sel_h1, sel_g1)",
            "sel_h2, sel_g2, sel_h3, sel_g3 = _topk_swap(sel_h2, sel_g2, sel_h3, sel_g3)",
            "sel_h0, sel_g0, sel_h2, sel_g2 = _topk_swap(sel_h0, sel_g0, sel_h2, sel_g2)",
            "sel_h1, sel_g1, sel_h3, sel_g3 = _topk_swap(sel_h1, sel_g1, sel_h3, sel_g3)",
            "sel_h1, sel_g1, sel_h2, sel_g2 = _topk_swap(sel_h1, sel_g1, sel_h2, sel_g2)",
            "sel_top = tl.zeros([BLOCK_M, BLOCK_K], tl.int32)",
            "sel_col = tl.zeros([BLOCK_M, BLOCK_K], tl.int32)",
            "# each round is two int32 reductions over the lane heads, one instruction each",
            "# (redux.sync) when a row sits in one warp; an int64 max over (key, column) would",
            "# need a shuffle tree",
            "for sel_j in tl.static_range(K):",
            "    sel_best = tl.max(sel_h0, axis=1, keep_dims=True)",
            "    # the first column holding it: the lowest index wins a tie",
            "    sel_at = tl.min(tl.where(sel_h0 == sel_best, sel_g0, BLOCK_N), axis=1, "
            "keep_dims=True)",
            "    sel_win = sel_g0 == sel_at  # its lane pops its head",
            *(
                f"    sel_{v}{i} = tl.where(sel_win, sel_{v}{i + 1}, sel_{v}{i})"
                for i in range(3)
                for v in "hg"
            ),
            f"    sel_h3 = tl.where(sel_win, {LAST}, sel_h3)  # an emptied lane never wins",
            "    sel_g3 = tl.where(sel_win, BLOCK_N, sel_g3)",
            "    sel_top = tl.where(ks == sel_j, sel_best, sel_top)",
            "    sel_col = tl.where(ks == sel_j, sel_at, sel_col)",
        )
        em.helpers.add("_topk_swap")
        if not self.largest:
            code.add("sel_top = ~sel_top")
        for name in self.group.nodes:
            node = self.graph.node(name)
            if node.kind != "getitem" or self.acc.src(name) != self.node.name:
                continue
            ctx = self.side(name)[1]
            out = em.var(name, ctx)
            if node.args[1] == 0:
                code.add(
                    f"{out} = tl.where(sel_top < 0, sel_top ^ 0x7FFFFFFF, sel_top)"
                    ".to(tl.float32, bitcast=True)  # the values, bit-exact"
                )
            else:
                code.add(f"{out} = sel_col.to(tl.int64)  # the indices")
            em.done[em.key(name, ctx)] = out

    def describe(self) -> str:
        order = "largest" if self.largest else "smallest"
        return (
            f"Fused top-{self.k} ({order} first, sorted) of each row with its prologue and "
            f"epilogue: the row in registers as sorted lanes of 4 columns, {self.k} rounds "
            "over the lane heads."
        )


def render_select(
    graph: OpGraph, group: Group, name: str, variant: str, params: Mapping[str, Any]
) -> RenderedKernel:
    """Render a selection group (``variant`` is ``rounds``, the only one)."""
    w = SelectWriter(graph, group)
    p = {**DEFAULTS, **{k: v for k, v in params.items() if k in DEFAULTS}}
    args = KernelArgs(index_64=True)
    kname = f"{name}_kernel"
    kernel = w.kernel(args, kname)
    code = Code()
    wparams = wrapper_params(graph, group)
    code.add(f"def {name}({', '.join(wparams)}):")
    code.indent()
    code.add(
        f'"""{w.describe()}"""', "# sizes come from the runtime tensors, so any input shape works"
    )
    sources = dim_sources(graph, group, w.layout)
    for d in sorted(sources):
        code.add(f"dim{d} = {sources[d]}")
    rows = " * ".join(f"dim{d}" for d in w.par) or "1"
    code.add(
        f"n_rows = {rows}",
        f"n_cols = dim{w.axis}",
        f"K = {w.k}",
        "if n_cols < K:",
        '    raise RuntimeError("selected index k out of range")  # as torch.topk',
    )
    allocate(graph, group, w.layout, code, safe_name(group.inputs[0]), narrow="K")
    code.add(
        "# the whole row in registers, as lanes of 4 columns",
        "BLOCK_N = max(4, _pow2(n_cols))",
        "BLOCK_K = _pow2(K)",
        "# several short rows per program keep every thread busy",
        f"BLOCK_M = min({p['ROWS']}, max(1, {p['TILE']} // BLOCK_N), "
        "_pow2(n_rows))",
        "grid = (_cdiv(n_rows, BLOCK_M),)",
    )
    consts = {"K": "K", "BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "BLOCK_K": "BLOCK_K"}
    launch(kname, "grid", args, {**consts, "num_warps": p["WARPS"]}, code)
    outs = ", ".join(safe_name(o) for o in group.outputs)
    code.add(f"return {outs}" + ("," if len(group.outputs) == 1 else ""))
    return RenderedKernel(
        (kernel,), code.text(), name, tuple(wparams), tuple(group.outputs), tuple(sorted(w.helpers))
    )
