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
    """A convolution group's epilogue: rows over (image, oh, ow), columns over channels; or,
    for a kernel whose tile lies in one image (``per_image``), the image a scalar ``img`` and
    rows over the image's positions."""

    def __init__(self, graph: OpGraph, group: Group, spec: ConvSpec,
                 image_scalar: bool = False) -> None:
        super().__init__(graph, group, spec.node.name)
        self.spec = spec
        self.image_scalar = image_scalar

    def per_image(self) -> ConvEpilogue:
        """The same epilogue for tiles of one image's positions (the image in ``img``): the
        rows' addresses need no division by an image's positions, which would hide their
        contiguity from Triton (a tile of two 64-position rows then stores scalars). Its
        helpers are this epilogue's."""
        other = ConvEpilogue(self.graph, self.group, self.spec, image_scalar=True)
        other.helpers = self.helpers
        return other

    def context(self) -> Context:
        """Rows (tile axis 0) over the output's image, row and column dimensions; columns (axis
        1) over its channels."""
        channel = self.spec.axes[1]
        assert channel is not None
        image = self.spec.axes[0]
        if self.image_scalar and image is not None:
            positions = tuple(a for a in self.spec.axes[2:] if a is not None)
            return Context(
                (
                    IndexGroup((image,), "img", None, None),
                    IndexGroup(positions, "rows", "row_mask", 0),
                    IndexGroup((channel,), "cols", "col_mask", 1),
                )
            )
        return Context(
            (
                IndexGroup(self.spec.row_axes, "rows", "row_mask", 0),
                IndexGroup((channel,), "cols", "col_mask", 1),
            )
        )
