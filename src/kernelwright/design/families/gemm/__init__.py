"""Matrix products with their element-wise epilogue (group kind ``gemm``).

    spec.py       the product (mm, bmm), where its batch, M and N lie in the domain, the epilogue
    kernels.py    the tiled kernel (persistent, grouped order; pointer or TMA loads), split-K's
                  partial and combine kernels
    epilogue.py   the epilogue's element-wise ops on the fp32 accumulator (the body printer)
    launch.py     the wrapper: sizes, the math the policy allows, tiles, descriptors, launches
    helpers.py    the Python helpers wrappers call (the math, SM count, TMA descriptors)
    precision.py  the math under each precision policy

A matrix-vector product (N or M of 1) is no GEMM: lowering turns it into a row or column
reduction (``lower._matvec``), which streams the matrix once through the reduction templates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from kernelwright.design.choices import GroupChoice
from kernelwright.design.families.base import input_dtypes
from kernelwright.design.families.gemm import conditions, defaults  # noqa: F401 (register)
from kernelwright.design.families.gemm.helpers import PY_HELPERS
from kernelwright.design.families.gemm.launch import DEFAULTS, render_gemm
from kernelwright.design.families.gemm.spec import gemm_shape, gemm_spec
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts

TMA_SKILL = "gemm-tma-loads"


class GemmFamily:
    """Tiled (plain, batched, transposed operands, tall-skinny) and split-K products, with TMA
    loads as a modifier skill."""

    kind = "gemm"
    prefix = "gemm"
    py_helpers: Mapping[str, str] = PY_HELPERS

    @property
    def skills(self) -> Traversable:
        return resources.files(__name__) / "skills"

    def facts(self, partition: Partition, group: Group, device: str, sm_count: int) -> GroupFacts:
        """The product's sizes and operand layouts (``GroupFacts.gemm``); K is the reduced
        length, the output's elements the parallel length."""
        assert group.layout is not None
        shape = gemm_shape(partition.graph, gemm_spec(partition.graph, group))
        return GroupFacts(
            "gemm",
            "",
            group.layout.hint,
            shape.k,
            shape.batch * shape.m * shape.n,
            shape.n,
            dtypes=input_dtypes(partition, group),
            device=device,
            sm_count=sm_count,
            gemm=shape,
        )

    def cost(
        self, partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
    ) -> float:
        """The inverse of the fraction of the SMs the programs fill: a product of few output
        tiles leaves most SMs idle unless split-K adds programs along K."""
        shape = facts.gemm
        assert shape is not None
        p = {**DEFAULTS, **choice.params}
        tiles = shape.batch * _blocks(shape.m, p["BLOCK_M"]) * _blocks(shape.n, p["BLOCK_N"])
        programs = tiles
        if choice.variant == "splitk":
            k_blocks = _blocks(shape.k, p["BLOCK_K"])
            programs = tiles * max(1, min(p["SPLIT_PROGRAMS"] // max(tiles, 1), k_blocks))
        return 1.0 / min(1.0, programs / facts.sm_count)

    def render(
        self, graph: OpGraph, group: Group, choice: GroupChoice, name: str
    ) -> RenderedKernel:
        return render_gemm(
            graph,
            group,
            name,
            choice.variant,
            dict(choice.params),
            tma=TMA_SKILL in choice.options,
        )


def _blocks(n: int, block: int) -> int:
    """Blocks of ``block`` (at least 16, at most n rounded up to a power of two) covering n."""
    size = max(16, min(block, 1 << max(0, math.ceil(math.log2(max(n, 1))))))
    return -(-n // size)
