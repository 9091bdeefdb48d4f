"""Cumulative sums and products with their prologue and epilogue (``template``)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from kernelwright.design.aten import classify, scan_info
from kernelwright.design.choices import GroupChoice
from kernelwright.design.families.base import domain_split, input_dtypes
from kernelwright.design.families.reduction.schedule import schedule_of
from kernelwright.design.families.scan import conditions, defaults  # noqa: F401 (register)
from kernelwright.design.families.scan.template import render_scan
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph, Ref
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts


class ScanFamily:
    """Row and column walks, and the chained (look-back) column scan."""

    kind = "scan"
    prefix = "scan"
    py_helpers: Mapping[str, str] = {}

    @property
    def skills(self) -> Traversable:
        return resources.files(__name__) / "skills"

    def facts(self, partition: Partition, group: Group, device: str, sm_count: int) -> GroupFacts:
        """The walk (row or column), its length, the positions and the direction."""
        graph = partition.graph
        assert group.layout is not None
        red_len, par_len, inner = domain_split(group.layout)
        scan = next(n for n in group.nodes if classify(graph.node(n)) == "scan")
        node = graph.node(scan)
        src = node.args[0]
        assert isinstance(src, Ref)
        _, _, reverse = scan_info(node, graph.meta(src.name).rank)
        return GroupFacts(
            "scan",
            schedule_of(group.layout),
            group.layout.hint,
            red_len,
            par_len,
            inner,
            reverse=reverse,
            dtypes=input_dtypes(partition, group),
            device=device,
            sm_count=sm_count,
        )

    def cost(
        self, partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
    ) -> float:
        """Every scan schedule reads and writes each element once."""
        return 1.0

    def render(
        self, graph: OpGraph, group: Group, choice: GroupChoice, name: str
    ) -> RenderedKernel:
        return render_scan(graph, group, name, choice.variant, dict(choice.params))
