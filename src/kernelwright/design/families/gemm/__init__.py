"""Matrix products with their element-wise epilogue (group kind ``gemm``).

    spec.py       the product (mm, bmm), where its batch, M and N lie in the domain, the epilogue
    kernels.py    the tiled kernel (persistent, grouped order; pointer or TMA loads), split-K's
                  partial and combine kernels, the vendor path's epilogue kernel
    epilogue.py   the epilogue's element-wise ops on the fp32 accumulator (the body printer)
    launch.py     the wrapper: sizes, the math the policy allows, tiles, descriptors, launches
    helpers.py    the Python helpers wrappers call (the math, SM count, TMA descriptors)
    precision.py  the math under each precision policy

Where cuBLAS multiplies on tensor cores itself (TF32 allowed, 16-bit operands), a group whose
epilogue is more than an added bias takes PyTorch's product and our epilogue kernel
(``gemm-vendor``) besides the tiled kernels, ranked by :data:`TENSOR_CORE_TILED`.

A matrix-vector product (N or M of 1) is no GEMM: lowering turns it into a row or column
reduction (``lower._matvec``), which streams the matrix once through the reduction templates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from kernelwright.design.choices import GroupChoice
from kernelwright.design.families.base import input_dtypes, sixteen_bit
from kernelwright.design.families.gemm import conditions, defaults  # noqa: F401 (register)
from kernelwright.design.families.gemm.helpers import PY_HELPERS
from kernelwright.design.families.gemm.launch import DEFAULTS, render_gemm
from kernelwright.design.families.gemm.spec import gemm_shape, gemm_spec
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts

TMA_SKILL = "gemm-tma-loads"

# The tiled kernels' time against cuBLAS's where cuBLAS multiplies on tensor cores too (H200,
# 4096^3 products, ``measurements.csv``): under tf32 0.539 ms against 0.367 (TMA loads, K-major
# operands), under bf16 0.193 against 0.178 (128 x 256 tiles); on an H100 under tf32, whole
# calls with both measured, the vendor path ran 0.444 against 0.477 ms (KernelBench level-2 12),
# 0.446 against 0.448 (level-2 76) and 0.461 against 0.464 (held-out 27)
TENSOR_CORE_TILED = {"tf32": 1.45, "16-bit": 1.08}
# cuBLAS's IEEE fp32 (CUDA cores) against the tiled kernel's 3xTF32 under fp32: 2.675 ms against
# 1.747 (H200, 4096^3, ``measurements.csv``)
VENDOR_FP32 = 1.5


class GemmFamily:
    """Tiled (plain, batched, transposed operands, tall-skinny) and split-K products, with TMA
    loads as a modifier skill; PyTorch's product with our epilogue kernel."""

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
        tiles leaves most SMs idle unless split-K adds programs along K; times
        :data:`TENSOR_CORE_TILED` where cuBLAS multiplies on tensor cores itself. The vendor
        path: the same fill for the default tiles (cuBLAS tiles the output too), times
        :data:`VENDOR_FP32` under fp32 with fp32 operands (CUDA cores against our 3xTF32
        tensor-core products)."""
        shape = facts.gemm
        assert shape is not None
        vendor_units = "16-bit" if sixteen_bit(facts) else facts.precision
        p = {**DEFAULTS, **choice.params}
        if choice.variant == "vendor":
            factor = 1.0 if vendor_units in TENSOR_CORE_TILED else VENDOR_FP32
            tiles = shape.batch * _blocks(shape.m, DEFAULTS["BLOCK_M"]) * _blocks(
                shape.n, DEFAULTS["BLOCK_N"])
            return factor / min(1.0, tiles / facts.sm_count)
        factor = TENSOR_CORE_TILED.get(vendor_units, 1.0)
        tiles = shape.batch * _blocks(shape.m, p["BLOCK_M"]) * _blocks(shape.n, p["BLOCK_N"])
        programs = tiles
        if choice.variant == "splitk":
            k_blocks = _blocks(shape.k, p["BLOCK_K"])
            programs = tiles * max(1, min(p["SPLIT_PROGRAMS"] // max(tiles, 1), k_blocks))
        return factor / min(1.0, programs / facts.sm_count)

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
