"""What a GEMM group computes: one matrix product and the element-wise epilogue applied to it.

product    ``mm`` (M x K @ K x N) or ``bmm`` (B x M x K @ B x K x N); operands of any
           strides (a transposed weight is a stride pattern, read as it is stored)
axes       which domain dimension is the batch, the rows (M) and the columns (N) of the
           product's output; M or N may be absent from the domain when its size is 1
epilogue   the group's other nodes: bias, scale, residual, clamp, activations, computed on
           the fp32 accumulator before the single store (``epilogue.py``)
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelwright.design.aten import classify
from kernelwright.design.fusion import Group
from kernelwright.design.graph import Node, OpGraph, Ref
from kernelwright.design.kernel.common import DesignError
from kernelwright.skills.conditions import GemmShape

# The alignment a tensor-memory-accelerator descriptor needs of every stride but the unit one
TMA_BYTES = 16
# The wrapper copies both operands K-major, K rounded up to a multiple of 16 with zeros, where K
# is no multiple of 16 and M and N are both at least this (each copied element serves that many
# products; launch.py's _k_padded): the copies are then aligned for TMA whatever the operands'
# own strides. The same size gates the K-major copies of 32-bit operands under TF32 math.
K_MAJOR_REUSE = 256
ITEM_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
# The shared memory a GEMM block may ask for: an H200's (and H100's) 232448 bytes a block, less
# 1 KB for the pipeline's barriers (Triton adds 24 to 48 bytes of them)
SMEM_BYTES = 232448 - 1024


@dataclass(frozen=True, slots=True)
class GemmSpec:
    """One GEMM group's product (see the module docstring).

    Attributes:
        node: the ``mm``/``bmm`` node.
        lhs, rhs: its operands' value names.
        batch_axis, m_axis, n_axis: the domain dimension of the output's batch, row and column
            dimensions (None: not in the domain, a size-1 dimension or no batch).
        epilogue: the group's other nodes, in order.
    """

    node: Node
    lhs: str
    rhs: str
    batch_axis: int | None
    m_axis: int | None
    n_axis: int | None
    epilogue: tuple[str, ...]

    @property
    def batched(self) -> bool:
        """A ``bmm``: the operands and the output have a leading batch dimension."""
        return self.node.out.rank == 3


def gemm_spec(graph: OpGraph, group: Group) -> GemmSpec:
    """The product of ``group`` and where its dimensions lie in the group's domain.

    Raises:
        DesignError: the group holds no single matrix product.
    """
    assert group.layout is not None
    products = [graph.node(n) for n in group.nodes if classify(graph.node(n)) == "matmul"]
    if len(products) != 1:
        raise DesignError(f"a GEMM group holds one matrix product, not {len(products)}")
    node = products[0]
    lhs, rhs = node.args[0], node.args[1]
    if not isinstance(lhs, Ref) or not isinstance(rhs, Ref):
        raise DesignError("a matrix product of non-tensor operands")
    axes = group.layout.axes[node.name]
    batch_axis = axes[0] if len(axes) == 3 else None
    epilogue = tuple(n for n in group.nodes if n != node.name)
    return GemmSpec(node, lhs.name, rhs.name, batch_axis, axes[-2], axes[-1], epilogue)


def gemm_shape(graph: OpGraph, spec: GemmSpec) -> GemmShape:
    """The product's sizes and operand layouts at capture (the skills' conditions read them)."""
    lm, rm = graph.meta(spec.lhs), graph.meta(spec.rhs)
    m, k = lm.hint[-2], lm.hint[-1]
    n = rm.hint[-1]
    batch = lm.hint[0] if lm.rank == 3 else 1
    ops = tuple(graph.node(x).op for x in spec.epilogue if graph.node(x).kind == "call")
    return GemmShape(
        m,
        n,
        k,
        batch,
        lhs_k_contiguous=lm.strides[-1] == 1 or k == 1,
        rhs_k_contiguous=rm.strides[-2] == 1 and n != 1,
        tma_aligned=_k_padded(m, n, k) or (
            _tma_aligned(lm.strides, lm.hint, lm.dtype)
            and _tma_aligned(rm.strides, rm.hint, rm.dtype)),
        epilogue=tuple(o for o in ops if o not in ("view", "unsqueeze", "permute", "expand")),
    )


def _k_padded(m: int, n: int, k: int) -> bool:
    """Whether the wrapper copies the operands with K padded to a multiple of 16 (at capture
    sizes; the wrapper decides the same at every call)."""
    return k > 1 and k % 16 != 0 and min(m, n) >= K_MAJOR_REUSE


def _tma_aligned(strides: tuple[int, ...], hint: tuple[int, ...], dtype: str) -> bool:
    """A unit stride along one of the two matrix dimensions and the other strides multiples
    of 16 bytes, for the dtype seen at capture."""
    inner = [d for d in (-1, -2) if strides[d] == 1 or hint[d] == 1]
    if not inner:
        return False
    size = ITEM_BYTES.get(dtype, 4)
    outer = [(s, h) for d, (s, h) in enumerate(zip(strides, hint, strict=True))]
    outer = [(s, h) for d, (s, h) in enumerate(outer) if d - len(strides) != inner[0]]
    # a zero stride (a broadcast) over more than one row or batch entry is no TMA box either
    return all((s * size) % TMA_BYTES == 0 and (s or h == 1) for s, h in outer)
