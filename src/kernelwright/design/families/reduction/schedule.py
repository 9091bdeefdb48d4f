"""The schedule of a reduction group: the one record every reduction kernel writer reads.

    along     ``row`` when the reduced dimensions are innermost (a program owns BLOCK_M rows, the
              row runs along tile axis 1, contiguous), else ``column`` (contiguous dimensions
              follow the reduced ones: a program owns BLOCK_P contiguous positions and reduces
              along tile axis 0, so every load stays contiguous)
    red       the reduced domain dimensions (one contiguous run)
    par       the others: ``outer`` ones before the reduced run, ``inner`` ones after it
    plan      the sweeps (``passes.PassPlan``): which reduction is accumulated in which sweep,
              with the online-softmax and Welford folds that apply
    frame()   the tile of a kernel: which index groups run along which axis

The one-pass and looped kernels (``sweeps``), the split's stages (``split``), the team, the
relay and the split statistics (``team``, ``relay``, ``split_stats``) are functions of this
schedule and of the accumulators (``accumulate``); none of them inherits state from another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kernelwright.design.aten import REDUCTIONS, classify
from kernelwright.design.axes import Layout
from kernelwright.design.families.reduction.passes import PassPlan, plan_passes
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph, Ref
from kernelwright.design.kernel.common import DesignError
from kernelwright.design.kernel.emitter import BodyEmitter, Context, IndexGroup, KernelArgs

VARIANTS = ("onepass", "looped", "split", "relay", "team", "split-stats")


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


def splittable(graph: OpGraph, group: Group, plan: PassPlan) -> bool:
    """A split (two-stage) reduction applies: one pass, no full outputs, no gathers."""
    if plan.stores or plan.n_passes > 1 or plan.online or plan.welford:
        return False
    return all(classify(graph.node(n)) != "gather" for n in group.nodes)


def relay_applies(graph: OpGraph, group: Group, plan: PassPlan) -> str:
    """Why a team, relay or split statistics cannot render this group ('' when it can): one
    statistics sweep
    (every reduction in the first pass, after the folds), one write sweep, only full-size
    outputs."""
    if plan.n_passes != 2:
        return f"{plan.n_passes} sweeps of each row: the relay needs statistics, then a write"
    if any(p != 0 for p in plan.pass_of.values()):
        return "a reduction needs another's result: the statistics take more than one sweep"
    if any(classify(graph.node(n)) == "gather" for n in group.nodes):
        return "a gather along the row needs the whole row's values"
    if any(o not in plan.stores for o in group.outputs):
        return "a per-row output (the statistics themselves) is not written by the relay"
    return ""


@dataclass(frozen=True, slots=True)
class ReductionSchedule:
    """One reduction group's structure (see the module docstring)."""

    graph: OpGraph
    group: Group
    layout: Layout
    along: str
    red: tuple[int, ...]
    par: tuple[int, ...]
    outer: tuple[int, ...]
    inner: tuple[int, ...]
    plan: PassPlan

    @classmethod
    def build(
        cls,
        graph: OpGraph,
        group: Group,
        variant: str,
        *,
        online: bool = True,
        welford: bool = True,
    ) -> ReductionSchedule:
        """The schedule of ``group`` under ``variant``, with the folds enabled.

        Raises:
            DesignError: the variant's preconditions do not hold for this group.
        """
        assert group.layout is not None
        layout = group.layout
        check_reduction(layout)
        red = tuple(sorted(layout.reduce))
        par = tuple(d for d in range(len(layout.hint)) if d not in red)
        plan = plan_passes(
            graph,
            list(group.nodes),
            list(group.inputs),
            list(group.outputs),
            layout,
            online=online,
            welford=welford,
        )
        s = cls(
            graph,
            group,
            layout,
            schedule_of(layout),
            red,
            par,
            tuple(d for d in par if d < red[0]),
            tuple(d for d in par if d > red[-1]),
            plan,
        )
        if variant == "split" and not splittable(graph, group, plan):
            raise DesignError(
                "split reductions need every reduction in one pass and no full outputs"
            )
        if variant in ("relay", "team", "split-stats"):
            if s.along != "row":
                raise DesignError(f"the {variant} splits rows (reduced dimensions innermost)")
            why = relay_applies(graph, group, plan)
            if why:
                raise DesignError(why)
        return s

    def frame(self) -> Frame:
        """The tile of a kernel over this group."""
        if self.along == "row":
            par = IndexGroup(self.par, "rows", "row_mask", 0, hoist=True)
            red = IndexGroup(self.red, "cols", "col_mask", 1)
            return Frame(1, par, None, red, "BLOCK_M", "BLOCK_N", "n_rows", "n_cols")
        outer = IndexGroup(self.outer, "pid_outer", None, None, hoist=True) if self.outer else None
        par = IndexGroup(self.inner, "cols", "col_mask", 1, hoist=True)
        red = IndexGroup(self.red, "rs", "r_mask", 0)
        return Frame(0, par, outer, red, "BLOCK_P", "BLOCK_R", "n_inner", "n_red")

    def emitter(self, args: KernelArgs) -> BodyEmitter:
        """A body printer for the group's values."""
        return BodyEmitter(self.graph, self.group.nodes, self.layout, args, self.group.inputs)

    def op(self, r: str) -> str:
        """The reduction ``r``'s operator (``sum``, ``max``, ``argmax``...)."""
        return REDUCTIONS[self.graph.node(r).target]

    def src(self, r: str) -> str:
        """The value reduction (or top-k) ``r`` reads."""
        a = self.graph.node(r).args[0]
        assert isinstance(a, Ref)
        return a.name

    def nest_for(self, stores: Sequence[str]) -> Nest | None:
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

    def inputs_of(self, names: Sequence[str]) -> list[str]:
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
        """The context of a nested sweep's inner block."""
        hi = IndexGroup(nest.hi, "red_hi", None, None)
        lo = IndexGroup(nest.lo, f.red.index, f.red.mask, f.red_axis)
        return f.nested_context(hi, lo)
