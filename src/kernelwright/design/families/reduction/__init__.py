"""Reductions with their prologue and epilogue: norms, softmax-like rows, argmax, losses.

schedule.py    the group's schedule (row or column, dims, tile frame, sweeps): one record
passes.py      which reduction is accumulated in which sweep; the online-softmax and Welford
               folds
accumulate.py  how each reduction is initialised, updated and finished
sweeps.py      the one-pass and looped kernels (and the pieces all reduction kernels share)
split.py       two stages: partials per slice of the reduced extent, then a combine kernel
team.py        a long row held in registers by a team of resident programs
relay.py       a long row's statistics shared by a team, each writing an earlier team's row
split_stats.py a few long rows: partial statistics per slice, then a kernel that combines them
               and writes each slice
launch.py      the wrapper: sizes, allocation, the launch of each variant
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from kernelwright.design.aten import REDUCTIONS, classify
from kernelwright.design.choices import GroupChoice
from kernelwright.design.families.base import domain_split, input_dtypes
from kernelwright.design.families.reduction import conditions, defaults  # noqa: F401 (register)
from kernelwright.design.families.reduction.launch import (
    COLUMN_DEFAULTS,
    ROW_DEFAULTS,
    render_reduction,
)
from kernelwright.design.families.reduction.passes import plan_passes
from kernelwright.design.families.reduction.schedule import relay_applies, schedule_of, splittable
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts


class ReductionFamily:
    """One pass, looped, split, team, relay and split-statistics reductions, with the
    online-softmax and Welford folds as modifier skills."""

    kind = "reduction"
    prefix = "reduce"
    py_helpers: Mapping[str, str] = {}

    @property
    def skills(self) -> Traversable:
        return resources.files(__name__) / "skills"

    def facts(self, partition: Partition, group: Group, device: str, sm_count: int) -> GroupFacts:
        """Extents, sweeps with and without the folds, and what the split and the team need."""
        graph = partition.graph
        layout = group.layout
        assert layout is not None
        red_len, par_len, inner = domain_split(layout)
        args = (graph, list(group.nodes), list(group.inputs), list(group.outputs), layout)
        plain = plan_passes(*args, online=False, welford=False)
        folded = plan_passes(*args, online=True, welford=True)
        gather = any(classify(graph.node(n)) == "gather" for n in group.nodes)
        indexed = any(
            REDUCTIONS.get(graph.node(n).target) in ("argmax", "argmin") for n in group.nodes
        )
        return GroupFacts(
            "reduction",
            schedule_of(layout),
            layout.hint,
            red_len,
            par_len,
            inner,
            n_passes=plain.n_passes,
            folded_passes=folded.n_passes,
            online_pattern=bool(folded.online),
            welford_pattern=bool(folded.welford),
            splittable=splittable(graph, group, plain),
            dtypes=input_dtypes(partition, group),
            device=device,
            sm_count=sm_count,
            has_gather=gather,
            indexed=indexed,
            stats_then_write=not relay_applies(graph, group, folded),
            full_outputs=any(layout.is_full(o) for o in group.outputs if o in layout.axes),
        )

    def cost(
        self, partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
    ) -> float:
        """Sweeps over the group's input divided by the fraction of the SMs its programs fill
        (1.0 for a kernel that reads everything once and fills the GPU)."""
        return sweeps(partition, group, choice) / min(1.0, programs(facts, choice) / facts.sm_count)

    def render(
        self, graph: OpGraph, group: Group, choice: GroupChoice, name: str
    ) -> RenderedKernel:
        return render_reduction(
            graph,
            group,
            name,
            choice.variant,
            dict(choice.params),
            online="online-softmax" in choice.options,
            welford="welford" in choice.options,
        )


def sweeps(partition: Partition, group: Group, choice: GroupChoice) -> int:
    """How many times the kernel reads the reduced extent from HBM: once in registers (one
    pass, or a split whose slices are read once), else once per pass of the looped kernel (and
    twice for the relay and the split statistics: see below)."""
    if choice.variant == "split-stats":
        return 2  # the statistics kernel reads each slice, the write kernel reads it again
    if choice.variant == "relay":
        # Meant to re-read from L2, but measured no faster than the looped kernel's two HBM
        # reads at its best (measurements.csv), so it is costed as two sweeps
        return 2
    if choice.variant != "looped":
        return 1
    assert group.layout is not None
    plan = plan_passes(
        partition.graph,
        list(group.nodes),
        list(group.inputs),
        list(group.outputs),
        group.layout,
        online="online-softmax" in choice.options,
        welford="welford" in choice.options,
    )
    return max(1, plan.n_passes)


def programs(facts: GroupFacts, choice: GroupChoice) -> int:
    """Programs the wrapper launches at the design's size (as the wrappers size them)."""
    row = facts.schedule == "row"
    p = {**(ROW_DEFAULTS if row else COLUMN_DEFAULTS), **choice.params}
    if choice.variant == "split":
        return int(p["SPLIT_PROGRAMS"])
    if choice.variant in ("relay", "split-stats"):
        return facts.parallel_length * -(-facts.reduced_length // max(1, int(p["SLICE"])))
    if choice.variant == "team":
        return facts.parallel_length * -(-facts.reduced_length // max(1, int(p["TEAM_SLICE"])))
    block = 1
    while block < facts.reduced_length:
        block *= 2
    if choice.variant == "onepass":
        per = min(p["ROWS"] if row else p["COLS"], max(1, p["TILE"] // block))
    else:
        per = p["LOOP_ROWS"] if row else p["LOOP_COLS"]
    return -(-facts.parallel_length // max(1, int(per)))
