"""Reduction kernels: a reduction (or several over the same dimensions) with its prologue and
epilogue -- norms, softmax-like rows, argmax, losses.

Schedules (the skills choose among them):

    row      the reduced dimensions are innermost: a program owns BLOCK_M rows, the row runs
             along tile axis 1 (contiguous, vectorised loads)
    column   the reduced dimensions are followed by contiguous ones (softmax over channels,
             column sums): a program owns BLOCK_P contiguous positions, the reduction runs
             along tile axis 0 and every load stays contiguous
    one pass the whole reduced extent fits in one block: loaded once, reduced in registers,
             written once
    looped   blocks of the reduced extent are swept once per pass (see ``passes``), with
             per-lane accumulators; online softmax and Welford fold dependent reductions
    split    (reduction-only groups) SPLIT programs each reduce a slice of a long reduction
             into a workspace; a second kernel combines the partials and runs the epilogue
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernelwright.design.axes import Layout
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph, Ref
from kernelwright.design.kernel.common import (
    Code,
    DesignError,
)
from kernelwright.design.kernel.emitter import (
    BodyEmitter,
    Context,
    IndexGroup,
    KernelArgs,
    safe_name,
)
from kernelwright.design.kernel.passes import PassPlan, plan_passes
from kernelwright.design.kernel.split import SplitStages, assemble
from kernelwright.design.ops import classify


@dataclass(frozen=True, slots=True)
class Frame:
    """The tile of one kernel: which index groups run along which axis."""

    red_axis: int
    par: IndexGroup
    outer: IndexGroup | None
    red: IndexGroup
    block_par: str
    block_red: str
    n_par: str
    n_red: str

    @property
    def red_index(self) -> str:
        return self.red.index

    def reduced_shape(self) -> str:
        return f"[{self.block_par}, 1]" if self.red_axis == 1 else f"[1, {self.block_par}]"

    def acc_shape(self) -> str:
        return (
            f"[{self.block_par}, {self.block_red}]"
            if self.red_axis == 1
            else f"[{self.block_red}, {self.block_par}]"
        )

    def context(self, red: IndexGroup | None = None, suffix: str = "") -> Context:
        groups = [g for g in (self.outer, self.par, red or self.red) if g is not None]
        return Context(tuple(groups), suffix)


def splittable(graph: OpGraph, group: Group, plan: PassPlan) -> bool:
    """A split (two-stage) reduction applies: one pass, no full outputs, no gathers."""
    if plan.stores or plan.n_passes > 1 or plan.online or plan.welford:
        return False
    return all(classify(graph.node(n)) != "gather" for n in group.nodes)


def schedule_of(layout: Layout) -> str:
    """``row`` when the reduced dimensions are innermost (or all), else ``column``."""
    red = set(layout.reduce)
    last = len(layout.hint) - 1
    if last in red:
        return "row"
    return "column"


def check_reduction(layout: Layout) -> None:
    """Raise DesignError unless the reduced dimensions form one contiguous run."""
    red = sorted(layout.reduce)
    if red != list(range(red[0], red[-1] + 1)):
        raise DesignError(f"reduced dimensions {red} are not contiguous")


class ReductionWriter(SplitStages):
    """Renders one reduction group under a structure (``schedule``, ``variant``) and params."""

    def __init__(
        self,
        graph: OpGraph,
        group: Group,
        name: str,
        variant: str,
        params: Mapping[str, Any],
        *,
        online: bool = True,
        welford: bool = True,
    ) -> None:
        assert group.layout is not None
        self.graph, self.group, self.layout, self.name = graph, group, group.layout, name
        self.variant, self.params = variant, dict(params)
        check_reduction(self.layout)
        self.schedule = schedule_of(self.layout)
        self.red = tuple(sorted(self.layout.reduce))
        self.par = tuple(d for d in range(len(self.layout.hint)) if d not in self.red)
        self.outer = tuple(d for d in self.par if d < self.red[0])
        self.inner = tuple(d for d in self.par if d > self.red[-1])
        self.plan = plan_passes(
            graph,
            list(group.nodes),
            list(group.inputs),
            list(group.outputs),
            self.layout,
            online=online,
            welford=welford,
        )
        self.helpers: set[str] = set()
        if variant == "split" and not splittable(graph, group, self.plan):
            raise DesignError(
                "split reductions need every reduction in one pass and no full outputs"
            )

    # -- frames --------------------------------------------------------------------------------

    def frame(self) -> Frame:
        if self.schedule == "row":
            par = IndexGroup(self.par, "rows", "row_mask", 0, hoist=True)
            red = IndexGroup(self.red, "cols", "col_mask", 1)
            return Frame(1, par, None, red, "BLOCK_M", "BLOCK_N", "n_rows", "n_cols")
        outer = IndexGroup(self.outer, "pid_outer", None, None, hoist=True) if self.outer else None
        par = IndexGroup(self.inner, "cols", "col_mask", 1, hoist=True)
        red = IndexGroup(self.red, "rs", "r_mask", 0)
        return Frame(0, par, outer, red, "BLOCK_P", "BLOCK_R", "n_inner", "n_red")

    def prologue(self, f: Frame, code: Code) -> None:
        code.add("pid = tl.program_id(0)")
        if f.red_axis == 1:
            if self.par:
                code.add(
                    "# the BLOCK_M rows of this program, as a [BLOCK_M, 1] column",
                    "rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]",
                    "row_mask = rows < n_rows  # the last program may run past the last row",
                )
            else:
                code.add(
                    "# a single row: every dimension is reduced",
                    "rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]",
                    "row_mask = rows < n_rows",
                )
            return
        code.add("n_inner_blocks = tl.cdiv(n_inner, BLOCK_P)")
        if f.outer is not None:
            code.add(
                "pid_outer = pid // n_inner_blocks  # flat index of the dims before the reduced"
            )
        code.add(
            "# the BLOCK_P contiguous positions of this program, as a [1, BLOCK_P] row",
            "cols = (pid % n_inner_blocks) * BLOCK_P + tl.arange(0, BLOCK_P)[None, :]",
            "col_mask = cols < n_inner  # the last block may run past the end",
        )

    def red_block(self, f: Frame, code: Code, start: str | None) -> None:
        """Define the reduced index and its mask for one block (``start`` None: all of it)."""
        base = f"{start} + " if start else ""
        if f.red_axis == 1:
            code.add(f"cols = {base}tl.arange(0, BLOCK_N)[None, :]  # [1, BLOCK_N] along the row")
            code.add("col_mask = cols < n_cols  # BLOCK_N is a power of two: mask the tail")
        else:
            code.add(
                f"rs = {base}tl.arange(0, BLOCK_R)[:, None]  # [BLOCK_R, 1] along the reduced axis"
            )
            code.add("r_mask = rs < n_red  # BLOCK_R is a power of two: mask the tail")

    # -- one-pass kernel -----------------------------------------------------------------------

    def onepass_kernel(self, args: KernelArgs, kname: str) -> str:
        f = self.frame()
        em = self.emitter(args)
        head, body = Code(), Code()
        head.indent()
        body.indent()
        self.prologue(f, head)
        self.red_block(f, head, None)
        ctx = f.context()
        for name in self.group.nodes:
            kind = classify(self.graph.node(name))
            if kind == "reduction":
                em.done[em.key(name, ctx)] = self.reduce_onepass(em, f, ctx, name, body)
            elif kind == "gather":
                em.done[em.key(name, ctx)] = self.gather(em, f, ctx, name, body)
        body.add("# ---- write the results")
        for name in self.group.outputs:
            lines: list[str] = []
            em.store(name, safe_name(name), ctx, lines, contiguous=True)
            body.extend(lines)
        return self.finish_kernel(kname, args, f, em, head, body)

    def gather(self, em: BodyEmitter, f: Frame, ctx: Context, name: str, code: Code) -> str:
        """``gather(V, dim, I)`` along the reduced axis: evaluate V at column I of each row."""
        node = self.graph.node(name)
        v, idx = node.args[0], node.args[2]
        assert isinstance(v, Ref) and isinstance(idx, Ref)
        if len(self.red) != 1:
            raise DesignError("gather needs a single reduced dimension")
        index = self._val(em, idx.name, ctx, code)
        at = IndexGroup(self.red, f"{safe_name(name)}_idx", f"{safe_name(name)}_ok", None)
        code.add(
            f"{at.index} = {index}  # the column each row reads (a gather along the reduced axis)",
            f"{at.mask} = ({at.index} >= 0) & ({at.index} < {f.n_red})",
        )
        sub = f.context(at, suffix=f"_at_{safe_name(name)}")
        val = self._val(em, v.name, sub, code)
        out = em.var(name, ctx)
        code.add(f"{out} = {val}")
        return out

    # -- looped kernel -------------------------------------------------------------------------

    def looped_kernel(self, args: KernelArgs, kname: str, split: bool = False) -> str:
        f = self.frame()
        em = self.emitter(args)
        plan = self.plan
        head, code = Code(), Code()
        head.indent()
        code.indent()
        self.prologue(f, head)
        if split:
            head.add(
                "pid_split = tl.program_id(1)  # which slice of the reduced extent",
                "lo = pid_split * CHUNK",
                "hi = lo + CHUNK",
            )
        ctx = f.context()
        self.row_level(em, ctx, code, avail=0)
        for p in range(plan.n_passes):
            reds = [r for r in plan.reductions if plan.pass_of[r] == p]
            stores = [o for o, sp in plan.stores.items() if sp == p]
            if not reds and not stores:
                continue
            label = self.pass_label(reds, stores)
            code.add("", f"# ---- pass {p + 1}: {label}")
            em.new_scope()
            for r in reds:
                self.acc_init(f, r, code)
            bounds = "lo, hi" if split else f"0, {f.n_red}"
            code.add(f"for start in range({bounds}, {f.block_red}):")
            code.indent()
            self.red_block(f, code, "start")
            if split:
                mask_name = "col_mask" if f.red_axis == 1 else "r_mask"
                code.add(
                    f"{mask_name} = {mask_name} & ({f.red_index} < hi)  # stay inside this slice"
                )
            for r in reds:
                self.acc_update(em, f, ctx, r, code)
            for o in stores:
                lines: list[str] = []
                em.store(o, safe_name(o), ctx, lines, contiguous=True)
                code.extend(lines)
            code.dedent()
            for r in reds:
                em.done[em.key(r, ctx)] = self.acc_finish(em, f, ctx, r, code, split)
            if not split:
                self.row_level(em, ctx, code, avail=p + 1)
        if split:
            code.add("# ---- this slice's partial results")
            for r in plan.reductions:
                self.store_partial(em, f, ctx, r, code)
        else:
            rest = [o for o in self.group.outputs if o not in plan.stores]
            if rest:
                code.add("# ---- per-row results")
            for name in rest:
                lines = []
                em.store(name, safe_name(name), ctx, lines, contiguous=True)
                code.extend(lines)
        return self.finish_kernel(kname, args, f, em, head, code, split=split)

    def pass_label(self, reds: list[str], stores: list[str]) -> str:
        parts = []
        for r in reds:
            if r in self.plan.online.values() or r in self.plan.welford.values():
                continue
            if r in self.plan.online:
                parts.append(f"{self.plan.online[r]} and {r} (online softmax)")
            elif r in self.plan.welford:
                parts.append(f"{self.plan.welford[r]} and {r} (Welford)")
            else:
                parts.append(f"{r} ({self.op(r)})")
        if stores:
            parts.append("write " + ", ".join(stores))
        return "; ".join(parts)

    def row_level(self, em: BodyEmitter, ctx: Context, code: Code, avail: int) -> None:
        """Compute the per-row values that become known after ``avail`` passes."""
        f = self.frame()
        for name in self.group.nodes:
            if name in self.plan.need or self.plan.avail.get(name) != avail:
                continue
            kind = classify(self.graph.node(name))
            if kind == "reduction":
                continue
            if kind == "gather":
                em.done[em.key(name, ctx)] = self.gather(em, f, ctx, name, code)
                continue
            self._val(em, name, ctx, code)

    # -- assembly ------------------------------------------------------------------------------

    def emitter(self, args: KernelArgs) -> BodyEmitter:
        return BodyEmitter(self.graph, self.group.nodes, self.layout, args, self.group.inputs)

    def finish_kernel(
        self,
        kname: str,
        args: KernelArgs,
        f: Frame,
        em: BodyEmitter,
        head: Code,
        body: Code,
        split: bool = False,
    ) -> str:
        self.helpers.update(em.helpers)
        sizes = [(f.n_par, f.n_par), (f.n_red, f.n_red)]
        if split:
            sizes += [("CHUNK", "chunk"), ("n_par", "n_par")]
            for r in self.plan.reductions:
                args.pointer(f"ws_{safe_name(r)}")
                if self.op(r) in ("argmax", "argmin"):
                    args.pointer(f"ws_{safe_name(r)}_val")
        args.scalars[:0] = [s for s in sizes if all(s[0] != x for x, _ in args.scalars)]
        return assemble(kname, args, [f.block_par, f.block_red], head, em, body)
