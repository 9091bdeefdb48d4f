"""2-D and 3-D convolutions, transposed or not, with their element-wise epilogue (group kind
``conv``), as implicit GEMMs or, grouped or over shallow inputs, as direct sums.

    spec.py       the convolution (NC(D)HW input, OI(D)HW weight, any groups, stride, padding
                  and dilation; transposed with its output padding), where its output's
                  dimensions lie in the domain, the epilogue; its implicit GEMM's sizes
                  (M = N*OH*OW, N = C_out, K = C_in/G*KH*KW in 2-D)
    kernels.py    the implicit-GEMM kernels (grouped order, patch gathers from NCHW or
                  channels-last copies, tl.dot; a transposed convolution's per output phase),
                  the direct kernel (grouped convolutions, or one group of few taps a
                  value) and the vendor path's epilogue
    epilogue.py   the epilogue on the accumulator: the GEMM family's, over (image, spatial)
                  rows and channel columns
    launch.py     the wrapper: sizes, the math the policy allows, tiles, stages, the launch
    helpers.py    the Python helpers wrappers call (the math under the conv policy, stages,
                  the channels-last copy)

1-D convolutions arrive as 2-D ones of height 1 (lowering: ``lower._conv_1d``). A ``conv`` group
whose implicit GEMM is too narrow for tensor-core tiles (``conv_gemm_at_least``) keeps
PyTorch's convolution with our epilogue kernel (``conv-vendor``), or PyTorch alone when there
is no epilogue. A convolution with few taps an output value (``conv_direct_sums``: a grouped or
depthwise one, or one group over a shallow input such as an image's three channels) has the
direct kernel (``conv-direct``) besides the others. 3-D convolutions take the channels-last
implicit GEMM or the direct kernel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from kernelwright.design.choices import GroupChoice
from kernelwright.design.families.base import input_dtypes, sixteen_bit, vendor_tensor_cores
from kernelwright.design.families.conv import conditions, defaults  # noqa: F401 (register)
from kernelwright.design.families.conv.helpers import PY_HELPERS
from kernelwright.design.families.conv.launch import DEFAULTS, render_conv
from kernelwright.design.families.conv.spec import block_diagonal, conv_shape, conv_spec
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts

# the implicit GEMM's cost factor against cuDNN where cuDNN multiplies on tensor cores itself
# (16-bit operands, or TF32 allowed), with pointer loads: on an H200 it ran 0.71-0.97x eager
# PyTorch's NCHW cuDNN convolution under the bf16 policy (three level-2 tasks, 3 x 3 filters,
# 48-64 -> 96-128 channels) and 0.92-0.97x under tf32 (level-2 task 1), and cuDNN runs faster
# still channels-last (torch.compile's layout: 2.3x eager under tf32, 1.6-3.2x under bf16).
# With TMA loads of 16-bit operands it is cuDNN's peer: on an H100 under bf16
# (``conv/sweeps/implicit_tma.csv``) the whole call ran 0.82, 0.99, 1.01 and 0.89x the time of
# cuDNN's channels-last convolution with our epilogue kernel (KernelBench level-2 1, 54, 4;
# held-out 33). Not with fp32 operands under tf32: there the same TMA kernel ran 1.07, 1.17
# and 1.22x the vendor path's time on tasks 1, 33 and 4 and 0.93x on 54 (H100, same file)
TENSOR_CORE_IMPLICIT = 1.25


class ConvFamily:
    """Implicit-GEMM convolutions (and the vendor convolution with our epilogue kernel)."""

    kind = "conv"
    prefix = "conv"
    py_helpers: Mapping[str, str] = PY_HELPERS

    @property
    def skills(self) -> Traversable:
        return resources.files(__name__) / "skills"

    def facts(self, partition: Partition, group: Group, device: str, sm_count: int) -> GroupFacts:
        """The implicit GEMM's sizes (``GroupFacts.gemm``); K is the reduced length, the
        output's elements the parallel length."""
        assert group.layout is not None
        shape = conv_shape(partition.graph, conv_spec(partition.graph, group))
        return GroupFacts(
            "conv",
            "",
            group.layout.hint,
            shape.k,
            shape.m * shape.n,
            1,
            dtypes=input_dtypes(partition, group),
            device=device,
            sm_count=sm_count,
            gemm=shape,
        )

    def cost(
        self, partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
    ) -> float:
        """The implicit GEMM: the inverse of the fraction of the SMs its output tiles fill,
        times :data:`TENSOR_CORE_IMPLICIT` for 16-bit operands or under tf32, unless its blocks
        of 16-bit operands load as TMA boxes. The vendor path: 1.0 (cuDNN fills the GPU). So
        under fp32 the vendor path ranks first only where the implicit GEMM leaves SMs idle,
        and elsewhere the skills' expected gains decide (3xTF32 tensor cores against cuDNN's
        fp32 CUDA cores); where cuDNN may use tensor cores itself, its kernels rank first
        unless the implicit GEMM loads 16-bit operands by TMA. A block-diagonal product does G
        times the grouped convolution's multiply-adds, and costs G times as much."""
        if choice.variant == "vendor":
            return 1.0
        shape = facts.gemm
        assert shape is not None
        p = {**DEFAULTS, **choice.params}
        tiles = _blocks(shape.m, p["BLOCK_M"]) * _blocks(shape.n, p["BLOCK_N"])
        factor = 1.0
        if vendor_tensor_cores(facts):
            tma = choice.variant == "implicit" and _tma_loads(partition, group, facts, p)
            factor = 1.0 if tma and sixteen_bit(facts) else TENSOR_CORE_IMPLICIT
        if shape.transposed and block_diagonal(shape.groups, shape.n // shape.groups):
            factor *= shape.groups
        return factor / min(1.0, tiles / facts.sm_count)

    def render(
        self, graph: OpGraph, group: Group, choice: GroupChoice, name: str
    ) -> RenderedKernel:
        return render_conv(graph, group, name, choice.variant, dict(choice.params))


def _tma_loads(
    partition: Partition, group: Group, facts: GroupFacts, params: Mapping[str, int]
) -> bool:
    """Whether the implicit GEMM loads its blocks as TMA boxes at these parameters: a 2-D
    convolution of stride 1 on channels-last operands whose rows of channels are whole 16-byte
    units (the wrapper checks the runtime tensors again)."""
    spec = conv_spec(partition.graph, group)
    shape = facts.gemm
    assert shape is not None
    item = 2 if sixteen_bit(facts) else 4
    return (
        bool(params["TMA"]) and bool(params["CHANNELS_LAST"]) and spec.nsp == 2
        and all(s == 1 for s in spec.stride) and not spec.transposed
        and shape.channels * item % 16 == 0
    )


def _blocks(n: int, block: int) -> int:
    """Blocks of ``block`` (at least 16, at most n rounded up to a power of two) covering n."""
    size = max(16, min(block, 1 << max(0, math.ceil(math.log2(max(n, 1))))))
    return -(-n // size)
