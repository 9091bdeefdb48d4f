"""The one protocol every kernel family implements, and what families share.

A family is one kind of fusion group (``pointwise``, ``reduction``, ``scan``, ``pool``,
``select``, ``gemm``, ``conv``) with everything needed to turn such a group into kernels:

    kind, prefix     the group kind it takes, and its kernels' name prefix in the emitted file
    skills           the folder of its skill files: intents, validity conditions, tunable
                     parameters (values, constraints) and the name of the heuristic that gives
                     their defaults (registered by the family's ``defaults`` module)
    facts(...)       what its skills' conditions read about a group (``GroupFacts``)
    cost(...)        its estimated cost, for ranking designs (1.0: reads its input once and
                     fills the GPU)
    render(...)      the group's kernels and wrapper under a choice (skill, variant, params)

Families are looked up by kind (:func:`kernelwright.design.families.family`); nothing outside a
family knows its templates.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.resources.abc import Traversable
from typing import Protocol

from kernelwright.design.axes import Layout
from kernelwright.design.choices import GroupChoice
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts


class Family(Protocol):
    """One kernel family (see the module docstring)."""

    @property
    def kind(self) -> str:
        """The fusion-group kind it renders."""
        ...

    @property
    def prefix(self) -> str:
        """Its wrappers' and kernels' name prefix (``reduce_3``, ``reduce_3_kernel``)."""
        ...

    @property
    def skills(self) -> Traversable:
        """The folder of its skill files (``*.toml``)."""
        ...

    @property
    def py_helpers(self) -> Mapping[str, str]:
        """Python helpers its wrappers call, by name (source included once per file)."""
        ...

    def facts(self, partition: Partition, group: Group, device: str, sm_count: int) -> GroupFacts:
        """What the skills' conditions may read about ``group`` at the design's size."""
        ...

    def cost(
        self, partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
    ) -> float:
        """Estimated cost of ``choice`` relative to reading the input once on a full GPU."""
        ...

    def render(
        self, graph: OpGraph, group: Group, choice: GroupChoice, name: str
    ) -> RenderedKernel:
        """The group's kernels and wrapper under ``choice``.

        Raises:
            DesignError: the choice's variant cannot render this group.
        """
        ...


def domain_split(layout: Layout) -> tuple[int, int, int]:
    """(reduced elements, output positions, contiguous positions after the reduced dims) of a
    layout's domain at capture."""
    red = set(layout.reduce)
    red_len = par_len = inner = 1
    for d, s in enumerate(layout.hint):
        if d in red:
            red_len *= s
        else:
            par_len *= s
            if red and d > max(red):
                inner *= s
    return red_len, par_len, inner


def input_dtypes(partition: Partition, group: Group) -> tuple[str, ...]:
    """The storage dtypes the group reads, sorted."""
    return tuple(sorted({partition.graph.meta(i).dtype for i in group.inputs}))


def sixteen_bit(f: GroupFacts) -> bool:
    """The group's float operands are 16-bit (bf16 or fp16)."""
    floats = [d for d in f.dtypes if d.startswith(("float", "bfloat"))]
    return bool(floats) and all(d in ("float16", "bfloat16") for d in floats)


def vendor_tensor_cores(f: GroupFacts) -> bool:
    """The vendor's library (cuBLAS, cuDNN) multiplies this group's product on tensor cores
    itself: 16-bit operands, or the tf32 policy (fp32 operands with TF32 allowed)."""
    return sixteen_bit(f) or f.precision == "tf32"
