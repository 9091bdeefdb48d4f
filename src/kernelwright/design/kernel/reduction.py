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
             per-lane accumulators; online softmax and Welford fold dependent reductions;
             sweeps alternate direction (each re-reads first what the previous one read last, from
             L2) and a write sweep whose inputs vary only along the outer reduced dims nests a
             scalar loop over them (``Nest``)
    split    (reduction-only groups) SPLIT programs each reduce a slice of a long reduction
             into a workspace; a second kernel combines the partials and runs the epilogue
    relay    (normalisations of long rows) a team of programs shares a row's statistics; each
             program then writes its slice of the previous team's row, read a moment ago, from
             L2 (see ``relay``)
    team     (normalisations of long rows) a team of resident programs holds a row in
             registers, one slice each, shares its statistics through L2 and writes each slice
             from registers: one read, one write (see ``team``)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernelwright.design.aten import classify
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
from kernelwright.design.kernel.relay import relay_applies
from kernelwright.design.kernel.split import SplitStages, assemble
from kernelwright.design.kernel.team import TeamStages


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

    def nested_context(self, hi: IndexGroup, lo: IndexGroup) -> Context:
        """The reduced dims as an outer scalar loop (``hi``) around a vector block (``lo``)."""
        groups = [g for g in (self.outer, self.par, hi, lo) if g is not None]
        return Context(tuple(groups))


@dataclass(frozen=True, slots=True)
class Nest:
    """A sweep split into a scalar loop over the outer reduced dims and blocks of the inner
    ones, so that a value varying only along the outer ones (a group norm's per-channel
    weight) is loaded once per outer step instead of indexed by ``//`` per element."""

    hi: tuple[int, ...]
    lo: tuple[int, ...]


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


class ReductionWriter(SplitStages, TeamStages):
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
        self.nested: Nest | None = None  # set when a sweep of the looped kernel is nested
        if variant == "split" and not splittable(graph, group, self.plan):
            raise DesignError(
                "split reductions need every reduction in one pass and no full outputs"
            )
        if variant in ("relay", "team"):
            if self.schedule != "row":
                raise DesignError(f"the {variant} splits rows (reduced dimensions innermost)")
            why = relay_applies(graph, group, self.plan)
            if why:
                raise DesignError(why)

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

    def red_block(
        self, f: Frame, code: Code, start: str | None, block: str = "", bound: str = ""
    ) -> None:
        """Define the reduced index and its mask for one block (``start`` None: all of it;
        ``block``/``bound``: another block size and extent, for a nested sweep's inner loop)."""
        base = f"{start} + " if start else ""
        block, bound = block or f.block_red, bound or f.n_red
        if f.red_axis == 1:
            code.add(f"cols = {base}tl.arange(0, {block})[None, :]  # [1, {block}] along the row")
            code.add(f"col_mask = cols < {bound}  # {block} is a power of two: mask the tail")
        else:
            code.add(
                f"rs = {base}tl.arange(0, {block})[:, None]  # [{block}, 1] along the reduced axis"
            )
            code.add(f"r_mask = rs < {bound}  # {block} is a power of two: mask the tail")

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
        self.nested = None
        self.row_level(em, ctx, code, avail=0)
        forward = False  # the direction of the previous sweep (the first runs forwards)
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
            reverse = forward and not split and all(self.order_free(r) for r in reds)
            forward = not reverse
            nest = None if reds else self.nest_for(stores)
            if nest is not None and self.nested not in (None, nest):
                nest = None  # one BLOCK_LO per kernel: a second, different nesting stays flat
            if nest is not None:
                self.nested = nest
                depth = self.open_nested(f, em, code, nest, stores, reverse)
                body_ctx = self.nested_ctx(f, nest)
            else:
                depth, body_ctx = self.open_flat(f, code, reverse, split), ctx
            for r in reds:
                self.acc_update(em, f, body_ctx, r, code)
            for o in stores:
                lines: list[str] = []
                em.store(o, safe_name(o), body_ctx, lines, contiguous=True)
                code.extend(lines)
            for _ in range(depth):
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
        blocks = ["BLOCK_LO"] if self.nested else []
        return self.finish_kernel(kname, args, f, em, head, code, split=split, blocks=blocks)

    def order_free(self, r: str) -> bool:
        """A reduction whose result does not depend on the order of the blocks (argmax keeps
        each lane's first extreme and Welford counts blocks from the start: both need forward
        sweeps)."""
        return r not in self.plan.welford and self.op(r) not in ("argmax", "argmin")

    def open_flat(self, f: Frame, code: Code, reverse: bool, split: bool) -> int:
        """Open a sweep over the reduced extent in blocks; returns the loops opened.

        A sweep that re-reads the extent runs backwards: it first reads what the previous
        sweep read last, which is still in L2 when a program's extent is larger than its share
        of L2 (a group norm's 512 KB per group), so part of the second read skips HBM."""
        if split:
            code.add(f"for start in range(lo, hi, {f.block_red}):")
            code.indent()
            self.red_block(f, code, "start")
            mask = f.red.mask
            code.add(f"{mask} = {mask} & ({f.red_index} < hi)  # stay inside this slice")
            return 1
        if not reverse:
            code.add(f"for start in range(0, {f.n_red}, {f.block_red}):")
            code.indent()
            self.red_block(f, code, "start")
            return 1
        code.add(
            "# backwards: re-read first what the previous sweep read last (still in L2)",
            f"last = ({f.n_red} - 1) // {f.block_red} * {f.block_red}",
            f"for back in range(0, {f.n_red}, {f.block_red}):",
        )
        code.indent()
        code.add("start = last - back")
        self.red_block(f, code, "start")
        return 1

    def nest_for(self, stores: list[str]) -> Nest | None:
        """The nesting a write sweep needs: the reduced dims up to the last one along which some
        input varies without varying along the innermost reduced dim (None: a flat sweep)."""
        red = list(self.red)
        cuts = []
        for name in self.inputs_of(stores):
            along = self.layout.varies(name) & set(red)
            if along and red[-1] not in along:
                cuts.append(1 + max(red.index(d) for d in along))
        if not cuts:
            return None
        cut = max(cuts)
        return Nest(tuple(red[:cut]), tuple(red[cut:]))

    def inputs_of(self, names: list[str]) -> list[str]:
        """The group inputs that the full-size values ``names`` read inside a sweep (per-row
        values, reductions and gathers are known before the sweep starts)."""
        found: list[str] = []
        seen: set[str] = set()
        stack = list(names)
        members = set(self.group.nodes)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in self.group.inputs:
                found.append(name)
            elif name in members and self.layout.is_full(name):
                node = self.graph.node(name)
                if classify(node) not in ("reduction", "gather"):
                    stack.extend(node.refs())
        return found

    def nested_ctx(self, f: Frame, nest: Nest) -> Context:
        hi = IndexGroup(nest.hi, "red_hi", None, None)
        lo = IndexGroup(nest.lo, f.red.index, f.red.mask, f.red_axis)
        return f.nested_context(hi, lo)

    def open_nested(
        self, f: Frame, em: BodyEmitter, code: Code, nest: Nest, stores: list[str], reverse: bool
    ) -> int:
        """Open a scalar loop over the outer reduced dims and, inside it, blocks of
        ``BLOCK_LO`` over the inner ones; the inputs that vary only along the outer dims are
        loaded between the two loops. Returns the loops opened."""
        n_hi = " * ".join(em.dim_size(d, aligned=False) for d in nest.hi)
        n_lo = " * ".join(em.dim_size(d) for d in nest.lo)
        code.add("# the outer reduced dims one step at a time: per-step inputs load once per step")
        if reverse:
            code.add(
                "# backwards: re-read first what the previous sweep read last (still in L2)",
                f"last = ({n_lo} - 1) // BLOCK_LO * BLOCK_LO",
                f"for back_hi in range(0, {n_hi}):",
            )
            code.indent()
            code.add(f"red_hi = {n_hi} - 1 - back_hi")
        else:
            code.add(f"for red_hi in range(0, {n_hi}):")
            code.indent()
        ctx = self.nested_ctx(f, nest)
        for name in self.inputs_of(stores):
            if not self.layout.varies(name) & set(nest.lo):
                lines: list[str] = []
                em.value(name, ctx, lines)
                code.extend(lines)
        if reverse:
            code.add(f"for back in range(0, {n_lo}, BLOCK_LO):")
            code.indent()
            code.add("start = last - back")
        else:
            code.add(f"for start in range(0, {n_lo}, BLOCK_LO):")
            code.indent()
        self.red_block(f, code, "start", "BLOCK_LO", n_lo)
        return 2

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
        blocks: list[str] | None = None,
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
        # the mask along tile axis 1 (the contiguous one) compares with this size: aligned, it
        # lets masked loads stay vectors (KernelArgs.hint)
        bound, dims = (f.n_red, self.red) if f.red_axis == 1 else (f.n_par, self.inner)
        args.hint(bound, math.prod(self.layout.hint[d] for d in dims))
        return assemble(kname, args, [f.block_par, f.block_red, *(blocks or [])], head, em, body)
