"""The epilogue of a GEMM group: its element-wise nodes computed on the fp32 accumulator.

The product's value is the accumulator ``acc``, a ``[BLOCK_M, BLOCK_N]`` tile; the body printer
(``kernel/emitter.py``, the same one the element-wise templates use) computes every other value
of the group over the tile's index groups (``pid_b`` for the batch entry, ``rows`` along M,
``cols`` along N), loads what they read (a bias ``[1, BLOCK_N]``, a residual ``[BLOCK_M,
BLOCK_N]``) where it is used, and stores each output once, converted to its dtype.
"""

from __future__ import annotations

from kernelwright.design.families.gemm.spec import GemmSpec
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import Code
from kernelwright.design.kernel.emitter import (
    BodyEmitter,
    Context,
    IndexGroup,
    KernelArgs,
    safe_name,
)


class TileEpilogue:
    """Writes the epilogue and stores of a group whose ``product`` is the fp32 accumulator
    ``acc`` of an output tile, into any kernel that holds ``acc``, ``offs_m``, ``offs_n``, ``M``,
    ``N`` and the index names of :meth:`context`; collects the ``@triton.jit`` helpers it calls.
    The families of products (GEMM, convolution) say where the tile's rows and columns lie in
    the domain."""

    def __init__(self, graph: OpGraph, group: Group, product: str) -> None:
        assert group.layout is not None
        self.graph, self.group, self.product = graph, group, product
        self.helpers: set[str] = set()

    def context(self) -> Context:
        """The tile's index groups (``rows`` along tile axis 0, ``cols`` along axis 1)."""
        raise NotImplementedError

    def write(self, args: KernelArgs, code: Code, declare: bool = True,
              column_vectors: str = "", row_mask: str = "rows < M") -> None:
        """The epilogue's statements and stores (``declare``: first define ``rows``/``cols``
        from ``offs_m``/``offs_n``; ``column_vectors``: the kernel's constexpr that says whether
        per-column operands load as vectors, for a tile Triton may lay along its rows;
        ``row_mask``: which of the tile's rows exist)."""
        layout = self.group.layout
        assert layout is not None
        em = BodyEmitter(self.graph, self.group.nodes, layout, args, self.group.inputs,
                         hoist=False, column_vectors=column_vectors)
        ctx = self.context()
        em.done[em.key(self.product, ctx)] = "acc"
        code.add("# ---- epilogue: the group's element-wise ops on the fp32 accumulator, one store")
        if declare:
            code.add("rows = offs_m[:, None]", "cols = offs_n[None, :]")
        code.add(
            f"row_mask = {row_mask}  # edge tiles run past the last row and column",
            "col_mask = cols < N",
        )
        for out in self.group.outputs:
            lines: list[str] = []
            em.store(out, safe_name(out), ctx, lines, contiguous=True)
            code.extend(lines)
        self.helpers.update(em.helpers)


class Epilogue(TileEpilogue):
    """A GEMM group's epilogue: the tile's batch entry ``pid_b``, rows along M, columns along
    N."""

    def __init__(self, graph: OpGraph, group: Group, spec: GemmSpec) -> None:
        super().__init__(graph, group, spec.node.name)
        self.spec = spec

    def context(self) -> Context:
        """The tile's index groups: the batch entry (scalar), rows (axis 0), columns (axis 1)."""
        s = self.spec
        groups = []
        if s.batch_axis is not None:
            groups.append(IndexGroup((s.batch_axis,), "pid_b", None, None))
        if s.m_axis is not None:
            groups.append(IndexGroup((s.m_axis,), "rows", "row_mask", 0))
        if s.n_axis is not None:
            groups.append(IndexGroup((s.n_axis,), "cols", "col_mask", 1))
        return Context(tuple(groups))

    def operand_strides(self) -> dict[str, int]:
        """The operands' strides at capture (alignment hints for the pointer loads)."""
        lm, rm = self.graph.meta(self.spec.lhs), self.graph.meta(self.spec.rhs)
        seen = {
            "stride_lm": lm.strides[-2],
            "stride_lk": lm.strides[-1],
            "stride_rk": rm.strides[-2],
            "stride_rn": rm.strides[-1],
        }
        if self.spec.batched:
            seen.update(stride_lb=lm.strides[0], stride_rb=rm.strides[0])
        return seen
