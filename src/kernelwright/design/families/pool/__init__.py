"""Max and average pooling in 1, 2 and 3 dimensions (``template``: taps from aligned vectors;
``tap_tile``: the W window's taps as a tile axis)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from kernelwright.design.choices import GroupChoice
from kernelwright.design.families.base import input_dtypes

# importing defaults and conditions registers the skills' heuristics and conditions
from kernelwright.design.families.pool import conditions, defaults  # noqa: F401
from kernelwright.design.families.pool.tap_tile import render_pool_tap_tile
from kernelwright.design.families.pool.template import (
    POOL_OUT_SIZE,
    fold_unit_windows,
    pool_spec,
    render_pool,
)
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts, PoolShape


class PoolFamily:
    """One pooling op per group (skills ``pool-window`` and ``pool-tap-tile``)."""

    kind = "pool"
    prefix = "pool"
    py_helpers: Mapping[str, str] = {"_pool_out_size": POOL_OUT_SIZE}

    @property
    def skills(self) -> Traversable:
        return resources.files(__name__) / "skills"

    def facts(self, partition: Partition, group: Group, device: str, sm_count: int) -> GroupFacts:
        """The pooled output's shape and the window (its volume and, per pooled dimension, its
        taps, stride and dilation; a leading dimension with a unit window is a plane)."""
        graph = partition.graph
        out = graph.meta(group.outputs[0])
        spec = fold_unit_windows(pool_spec(graph.node(group.nodes[0])))
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
            pool=PoolShape(spec.kernel, spec.stride, spec.dilation),
        )

    def cost(
        self, partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
    ) -> float:
        """Each input row of a tile is loaded once."""
        return 1.0

    def render(
        self, graph: OpGraph, group: Group, choice: GroupChoice, name: str
    ) -> RenderedKernel:
        if choice.variant == "tap-tile":
            return render_pool_tap_tile(graph, group, name, dict(choice.params))
        return render_pool(graph, group, name, choice.variant, dict(choice.params))
