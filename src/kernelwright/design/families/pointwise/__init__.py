"""Element-wise chains: one read and one write per element (``template``: flat or tiled)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from kernelwright.design.choices import GroupChoice
from kernelwright.design.families.base import domain_split, input_dtypes
from kernelwright.design.families.pointwise import conditions, defaults  # noqa: F401 (register)
from kernelwright.design.families.pointwise.template import contiguous_suffix, render_pointwise
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts


class PointwiseFamily:
    """Element-wise chains with broadcasting (skills ``elementwise-flat``/``-rows``)."""

    kind = "pointwise"
    prefix = "elementwise"
    py_helpers: Mapping[str, str] = {}

    @property
    def skills(self) -> Traversable:
        return resources.files(__name__) / "skills"

    def facts(self, partition: Partition, group: Group, device: str, sm_count: int) -> GroupFacts:
        """The domain, and the contiguous run every operand shares (``flat``: all of it)."""
        assert group.layout is not None
        domain = group.layout.hint
        _, par_len, _ = domain_split(group.layout)
        split = contiguous_suffix(partition.graph, group)
        run = 1
        for s in domain[split if split else 0 :]:
            run *= s
        return GroupFacts(
            "pointwise",
            "",
            domain,
            1,
            par_len,
            run,
            flat=split == 0,
            dtypes=input_dtypes(partition, group),
            device=device,
            sm_count=sm_count,
        )

    def cost(
        self, partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
    ) -> float:
        """One read and one write whatever the variant."""
        return 1.0

    def render(
        self, graph: OpGraph, group: Group, choice: GroupChoice, name: str
    ) -> RenderedKernel:
        return render_pointwise(graph, group, name, choice.variant, dict(choice.params))
