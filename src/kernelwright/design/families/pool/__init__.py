"""Max and average pooling in 1, 2 and 3 dimensions (``template``: rows unrolled and shared;
``looped``: the window's outer taps in a loop, for large windows)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from kernelwright.design.choices import GroupChoice
from kernelwright.design.families.base import input_dtypes
from kernelwright.design.families.pool import conditions, defaults  # noqa: F401 (register)
from kernelwright.design.families.pool.looped import render_looped, reread_factor
from kernelwright.design.families.pool.template import POOL_OUT_SIZE, pool_spec, render_pool
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts


class PoolFamily:
    """One pooling op per group (skills ``pool-window`` and ``pool-looped``)."""

    kind = "pool"
    prefix = "pool"
    py_helpers: Mapping[str, str] = {"_pool_out_size": POOL_OUT_SIZE}

    @property
    def skills(self) -> Traversable:
        return resources.files(__name__) / "skills"

    def facts(self, partition: Partition, group: Group, device: str, sm_count: int) -> GroupFacts:
        """The pooled output's shape and the window's volume."""
        graph = partition.graph
        out = graph.meta(group.outputs[0])
        spec = pool_spec(graph.node(group.nodes[0]))
        window = 1
        for k in spec.kernel:
            window *= k
        return GroupFacts(
            "pool",
            "",
            out.hint,
            window,
            out.numel,
            1,
            dtypes=input_dtypes(partition, group),
            device=device,
            sm_count=sm_count,
            window=window,
        )

    def cost(
        self, partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
    ) -> float:
        """Inputs read per input: once for ``pool-window`` (a tile loads each input row once);
        for ``pool-looped`` once more per overlapping window along each axis."""
        if choice.variant == "pool-looped":
            return reread_factor(pool_spec(partition.graph.node(group.nodes[0])))
        return 1.0

    def render(
        self, graph: OpGraph, group: Group, choice: GroupChoice, name: str
    ) -> RenderedKernel:
        if choice.variant == "pool-looped":
            return render_looped(graph, group, name, dict(choice.params))
        return render_pool(graph, group, name, choice.variant, dict(choice.params))
