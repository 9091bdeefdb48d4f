"""The one-pass and looped kernels of a reduction group, and the pieces every reduction kernel
shares (the prologue, a block of the reduced extent, gathers, per-row values, assembly).

    one pass  the whole reduced extent fits in one block: loaded once, reduced in registers,
              written once
    looped    blocks of the reduced extent are swept once per pass (see ``passes``), with
              per-lane accumulators; online softmax and Welford fold dependent reductions;
              sweeps alternate direction (each re-reads first what the previous one read last,
              from L2) and a write sweep whose inputs vary only along the outer reduced dims
              nests a scalar loop over them (``Nest``)

The split's stages (``split``), the relay (``relay``) and the team (``team``) build on a
:class:`SweepWriter` too: they are functions of its schedule and accumulators.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kernelwright.design.aten import classify
from kernelwright.design.families.reduction.accumulate import Accumulators
from kernelwright.design.families.reduction.schedule import Frame, Nest, ReductionSchedule
from kernelwright.design.families.reduction.split import store_partial
from kernelwright.design.graph import Ref
from kernelwright.design.kernel.common import Code, DesignError, assemble, program_id
from kernelwright.design.kernel.emitter import (
    BodyEmitter,
    Context,
    IndexGroup,
    KernelArgs,
    safe_name,
)


@dataclass(frozen=True, slots=True)
class Kernel:
    """A rendered kernel and the nesting of its write sweep (the launch sizes ``BLOCK_LO``)."""

    text: str
    nest: Nest | None = None


class SweepWriter:
    """Writes the kernels of one reduction group from its schedule; the accumulators collect
    the helpers every kernel calls.

    Args:
        schedule: the group's schedule.
        acc: its accumulators (``Accumulators(graph, layout, schedule.plan)``).
    """

    def __init__(self, schedule: ReductionSchedule, acc: Accumulators) -> None:
        self.s, self.acc = schedule, acc

    @property
    def helpers(self) -> set[str]:
        """``@triton.jit`` helpers the kernels written so far call."""
        return self.acc.helpers

    def prologue(self, f: Frame, code: Code) -> None:
        """The program's rows (row schedule) or contiguous positions (column schedule)."""
        code.add(f"pid = {program_id(0)}")
        if f.red_axis == 1:
            if self.s.par:
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
        """The whole reduced extent in one block: read once, reduced in registers."""
        f = self.s.frame()
        em = self.s.emitter(args)
        head, body = Code(), Code()
        head.indent()
        body.indent()
        self.prologue(f, head)
        self.red_block(f, head, None)
        ctx = f.context()
        for name in self.s.group.nodes:
            kind = classify(self.s.graph.node(name))
            if kind == "reduction":
                em.done[em.key(name, ctx)] = self.acc.reduce_onepass(em, f, ctx, name, body)
            elif kind == "gather":
                em.done[em.key(name, ctx)] = self.gather(em, f, ctx, name, body)
        body.add("# ---- write the results")
        for name in self.s.group.outputs:
            lines: list[str] = []
            em.store(name, safe_name(name), ctx, lines, contiguous=True)
            body.extend(lines)
        return self.finish_kernel(kname, args, f, em, head, body)

    def gather(self, em: BodyEmitter, f: Frame, ctx: Context, name: str, code: Code) -> str:
        """``gather(V, dim, I)`` along the reduced axis: evaluate V at column I of each row."""
        node = self.s.graph.node(name)
        v, idx = node.args[0], node.args[2]
        assert isinstance(v, Ref) and isinstance(idx, Ref)
        if len(self.s.red) != 1:
            raise DesignError("gather needs a single reduced dimension")
        index = self.acc.value(em, idx.name, ctx, code)
        at = IndexGroup(self.s.red, f"{safe_name(name)}_idx", f"{safe_name(name)}_ok", None)
        code.add(
            f"{at.index} = {index}  # the column each row reads (a gather along the reduced axis)",
            f"{at.mask} = ({at.index} >= 0) & ({at.index} < {f.n_red})",
        )
        sub = f.context(at, suffix=f"_at_{safe_name(name)}")
        val = self.acc.value(em, v.name, sub, code)
        out = em.var(name, ctx)
        code.add(f"{out} = {val}")
        return out

    # -- looped kernel -------------------------------------------------------------------------

    def looped_kernel(self, args: KernelArgs, kname: str, split: bool = False) -> Kernel:
        """Sweeps of the reduced extent in blocks, one per pass (``split``: over the slice
        ``[lo, hi)`` of stage 1 of a split reduction, storing partial results)."""
        f = self.s.frame()
        em = self.s.emitter(args)
        plan = self.s.plan
        head, code = Code(), Code()
        head.indent()
        code.indent()
        self.prologue(f, head)
        if split:
            head.add(
                f"pid_split = {program_id(1)}  # which slice of the reduced extent",
                "lo = pid_split * CHUNK",
                f"hi = tl.minimum(lo + CHUNK, {f.n_red})  # no index runs a block past the end",
            )
        ctx = f.context()
        nested: Nest | None = None  # one nesting per kernel (it sizes BLOCK_LO)
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
                self.acc.acc_init(f, r, code)
            reverse = forward and not split and all(self.order_free(r) for r in reds)
            forward = not reverse
            nest = None if reds else self.s.nest_for(stores)
            if nest is not None and nested not in (None, nest):
                nest = None  # one BLOCK_LO per kernel: a second, different nesting stays flat
            if nest is not None:
                nested = nest
                depth = self.open_nested(f, em, code, nest, stores, reverse)
                body_ctx = self.s.nested_ctx(f, nest)
            else:
                depth, body_ctx = self.open_flat(f, code, reverse, split), ctx
            for r in reds:
                self.acc.acc_update(em, f, body_ctx, r, code)
            for o in stores:
                lines: list[str] = []
                em.store(o, safe_name(o), body_ctx, lines, contiguous=True)
                code.extend(lines)
            for _ in range(depth):
                code.dedent()
            for r in reds:
                em.done[em.key(r, ctx)] = self.acc.acc_finish(em, f, ctx, r, code, split)
            if not split:
                self.row_level(em, ctx, code, avail=p + 1)
        if split:
            code.add("# ---- this slice's partial results")
            for r in plan.reductions:
                store_partial(self, em, f, ctx, r, code)
        else:
            rest = [o for o in self.s.group.outputs if o not in plan.stores]
            if rest:
                code.add("# ---- per-row results")
            for name in rest:
                lines = []
                em.store(name, safe_name(name), ctx, lines, contiguous=True)
                code.extend(lines)
        blocks = ["BLOCK_LO"] if nested else []
        text = self.finish_kernel(kname, args, f, em, head, code, split=split, blocks=blocks)
        return Kernel(text, nested)

    def order_free(self, r: str) -> bool:
        """A reduction whose result does not depend on the order of the blocks (argmax keeps
        each lane's first extreme and Welford counts blocks from the start: both need forward
        sweeps)."""
        return r not in self.s.plan.welford and self.s.op(r) not in ("argmax", "argmin")

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
        ctx = self.s.nested_ctx(f, nest)
        for name in self.s.inputs_of(stores):
            if not self.s.layout.varies(name) & set(nest.lo):
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
        """The banner of a pass: what it accumulates and writes."""
        parts = []
        for r in reds:
            if r in self.s.plan.online.values() or r in self.s.plan.welford.values():
                continue
            if r in self.s.plan.online:
                parts.append(f"{self.s.plan.online[r]} and {r} (online softmax)")
            elif r in self.s.plan.welford:
                parts.append(f"{self.s.plan.welford[r]} and {r} (Welford)")
            else:
                parts.append(f"{r} ({self.s.op(r)})")
        if stores:
            parts.append("write " + ", ".join(stores))
        return "; ".join(parts)

    def row_level(self, em: BodyEmitter, ctx: Context, code: Code, avail: int) -> None:
        """Compute the per-row values that become known after ``avail`` passes."""
        f = self.s.frame()
        for name in self.s.group.nodes:
            if name in self.s.plan.need or self.s.plan.avail.get(name) != avail:
                continue
            kind = classify(self.s.graph.node(name))
            if kind == "reduction":
                continue
            if kind == "gather":
                em.done[em.key(name, ctx)] = self.gather(em, f, ctx, name, code)
                continue
            self.acc.value(em, name, ctx, code)

    # -- assembly ------------------------------------------------------------------------------

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
        """The kernel's source: its size arguments first, then :func:`assemble`."""
        self.helpers.update(em.helpers)
        sizes = [(f.n_par, f.n_par), (f.n_red, f.n_red)]
        if split:
            sizes += [("CHUNK", "chunk"), ("n_par", "n_par")]
            for r in self.s.plan.reductions:
                args.pointer(f"ws_{safe_name(r)}")
                if self.s.op(r) in ("argmax", "argmin"):
                    args.pointer(f"ws_{safe_name(r)}_val")
        args.scalars[:0] = [s for s in sizes if all(s[0] != x for x, _ in args.scalars)]
        # the mask along tile axis 1 (the contiguous one) compares with this size: aligned, it
        # lets masked loads stay vectors (KernelArgs.hint)
        bound, dims = (f.n_red, self.s.red) if f.red_axis == 1 else (f.n_par, self.s.inner)
        args.hint(bound, math.prod(self.s.layout.hint[d] for d in dims))
        return assemble(kname, args, [f.block_par, f.block_red, *(blocks or [])], head, em, body)
