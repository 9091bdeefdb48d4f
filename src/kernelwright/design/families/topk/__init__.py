"""Top-k of rows held in registers, with its prologue and epilogue (group kind ``select``)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from kernelwright.design.choices import GroupChoice
from kernelwright.design.families.base import domain_split, input_dtypes
from kernelwright.design.families.reduction.schedule import schedule_of
from kernelwright.design.families.topk import conditions, defaults  # noqa: F401 (register)
from kernelwright.design.families.topk.template import render_select, select_k
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts


class TopKFamily:
    """``torch.topk`` along the innermost dimension (skill ``topk-rounds``)."""

    kind = "select"
    prefix = "topk"
    py_helpers: Mapping[str, str] = {}

    @property
    def skills(self) -> Traversable:
        return resources.files(__name__) / "skills"

    def facts(self, partition: Partition, group: Group, device: str, sm_count: int) -> GroupFacts:
        """The row, the rows, and k."""
        assert group.layout is not None
        red_len, par_len, inner = domain_split(group.layout)
        return GroupFacts(
            "select",
            schedule_of(group.layout),
            group.layout.hint,
            red_len,
            par_len,
            inner,
            dtypes=input_dtypes(partition, group),
            device=device,
            sm_count=sm_count,
            k=select_k(partition.graph, group),
        )

    def cost(
        self, partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
    ) -> float:
        """The row is read once."""
        return 1.0

    def render(
        self, graph: OpGraph, group: Group, choice: GroupChoice, name: str
    ) -> RenderedKernel:
        return render_select(graph, group, name, choice.variant, dict(choice.params))
