"""The epilogue of a convolution group on the accumulator of an implicit-GEMM tile.

The tile's rows are output positions: the flat index ``rows`` runs over the domain dimensions of
the output's (image, oh, ow), whose indices the body printer recovers by ``//`` and ``%`` where a
value needs them (the NCHW store, a residual); its columns are output channels (``cols``): a
per-channel bias or scale ``(C, 1, 1)`` is a ``[1, BLOCK_N]`` load. The statements are the GEMM
family's (:class:`kernelwright.design.families.gemm.epilogue.TileEpilogue`).
"""

from __future__ import annotations

from kernelwright.design.families.conv.spec import ConvSpec
from kernelwright.design.families.gemm.epilogue import TileEpilogue
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.emitter import Context, IndexGroup


class ConvEpilogue(TileEpilogue):
    """A convolution group's epilogue: rows over (image, oh, ow), columns over channels."""

    def __init__(self, graph: OpGraph, group: Group, spec: ConvSpec) -> None:
        super().__init__(graph, group, spec.node.name)
        self.spec = spec

    def context(self) -> Context:
        """Rows (tile axis 0) over the output's image, row and column dimensions; columns (axis
        1) over its channels."""
        channel = self.spec.axes[1]
        assert channel is not None
        return Context(
            (
                IndexGroup(self.spec.row_axes, "rows", "row_mask", 0),
                IndexGroup((channel,), "cols", "col_mask", 1),
            )
        )
