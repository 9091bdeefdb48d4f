"""What a convolution group computes: one 2-D or 3-D convolution (NCHW or NCDHW input, OIHW or
OIDHW weight, G groups) and the element-wise epilogue applied to it, seen as a matrix product
(an implicit GEMM). Below in 2-D; a 3-D one adds a depth (D, KD, OD) before H.

    notation   N images of C_in x H x W in G groups of C_in / G channels; C_out filters of
               C_in / G x KH x KW, C_out / G a group; output N x C_out x OH x OW,
               OH = (H + 2 pad_h - dil_h (KH - 1) - 1) // stride_h + 1 (OW alike)
    product    out[m, n] = sum_k patch[m, k] * weight[n, k], with
                 M = N * OH * OW   rows: (image, oh, ow), ow fastest
                 N = C_out         columns: output channels
                 K = C_in / G * KH * KW, in the order (c, kh, kw): the OIHW weight flattened
                                   is [C_out, K] with a unit stride along K, as stored; the
                                   patch of column n is taken from n's group's channels
    axes       which domain dimension is the output's image, channel, row and column (None:
               a size-1 dimension, not in the domain)
    epilogue   the group's other nodes (the conv's bias, lowered to an add, then scales,
               activations...), computed on the fp32 accumulator before the single store
    transposed a transposed convolution (weight C_in x C_out / G x KH x KW; output
               OH = (H - 1) stride_h - 2 pad_h + dil_h (KH - 1) + out_pad_h + 1): each output
               position sums the taps whose input position (oh + pad_h - kh dil_h) / stride_h
               is whole; output positions of one phase (oh % stride_h, ow % stride_w) share
               their taps, about KH / stride_h x KW / stride_w of them (dilated: stride_h /
               gcd(stride_h, dil_h) in place of stride_h), so K counts those
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kernelwright.design.aten import classify, conv_args, conv_groups, conv_output_padding
from kernelwright.design.fusion import Group
from kernelwright.design.graph import Node, OpGraph, Ref
from kernelwright.design.kernel.common import DesignError
from kernelwright.skills.conditions import GemmShape

# The shared memory a block may ask for: an H200's (and H100's) 232448 bytes, less 1 KB for the
# pipeline's barriers (as the GEMM family)
SMEM_BYTES = 232448 - 1024

# A grouped transposed convolution whose groups hold no multiple of a tensor-core tile's 16
# output channels runs as one product over a block-diagonal weight (zeros between the groups):
# G times the multiply-adds of the grouped one, for tiles that fill. Past DENSE_GROUPS groups
# the zeros outweigh the tiles and cuDNN's grouped kernel keeps it.
DENSE_GROUPS = 4
TILE_N = 16


def block_diagonal(groups: int, out_per_group: int) -> bool:
    """Whether a grouped transposed convolution runs as one block-diagonal product."""
    return 1 < groups <= DENSE_GROUPS and out_per_group % TILE_N != 0


@dataclass(frozen=True, slots=True)
class ConvSpec:
    """One convolution group's product (see the module docstring).

    Attributes:
        node: the ``convolution`` node (its bias is None: lowering moved it to the epilogue).
        x, w: its input's and weight's value names.
        stride, padding, dilation: one a spatial dimension ((along H, along W) in 2-D).
        groups: the convolution's groups (1: every channel reads every input channel).
        axes: the domain dimension of the output's (image, channel, *spatial) dimensions.
        epilogue: the group's other nodes, in order.
        output_padding: a transposed convolution's (along H, along W); None when the
            convolution is not transposed.
    """

    node: Node
    x: str
    w: str
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    axes: tuple[int | None, ...]
    epilogue: tuple[str, ...]
    groups: int = 1
    output_padding: tuple[int, ...] | None = None

    @property
    def nsp(self) -> int:
        """Spatial dimensions: 2 or 3."""
        return len(self.stride)

    @property
    def transposed(self) -> bool:
        """A transposed convolution (see the module docstring)."""
        return self.output_padding is not None

    @property
    def row_axes(self) -> tuple[int, ...]:
        """The domain dimensions of the GEMM's rows (image, [od,] oh, ow), outermost first."""
        return tuple(a for a in (self.axes[0], *self.axes[2:]) if a is not None)


def conv_spec(graph: OpGraph, group: Group) -> ConvSpec:
    """The convolution of ``group`` and where its dimensions lie in the group's domain.

    Raises:
        DesignError: the group holds no single bias-free 2-D or 3-D convolution.
    """
    assert group.layout is not None
    convs = [graph.node(n) for n in group.nodes if classify(graph.node(n)) == "conv"]
    if len(convs) != 1:
        raise DesignError(f"a convolution group holds one convolution, not {len(convs)}")
    node = convs[0]
    found = conv_args(node)
    x, w, bias = node.args[0], node.args[1], node.args[2]
    if found is None or not isinstance(x, Ref) or not isinstance(w, Ref):
        raise DesignError("a convolution of non-tensor operands")
    if bias is not None:
        raise DesignError("a convolution with its bias (lowering adds it in the epilogue)")
    stride, padding, dilation = found
    rank = len(stride) + 2
    if graph.meta(x.name).rank != rank or graph.meta(w.name).rank != rank:
        raise DesignError("the convolution templates take N x C x spatial inputs and weights")
    ax = group.layout.axes[node.name]
    if ax[1] is None or all(a is None for i, a in enumerate(ax) if i != 1):
        raise DesignError("one output channel or one output position: no product to tile")
    epilogue = tuple(n for n in group.nodes if n != node.name)
    return ConvSpec(
        node, x.name, w.name, stride, padding, dilation, tuple(ax), epilogue,
        conv_groups(node), conv_output_padding(node),
    )


def conv_shape(graph: OpGraph, spec: ConvSpec) -> GemmShape:
    """The implicit GEMM's sizes at capture (the skills' conditions read them as a product's):
    M = N * OH * OW, N = C_out, K = C_in / G * KH * KW (one group's taps: the weight's second
    dimension holds C_in / G); the weight is K-major as stored. A transposed convolution's K
    counts the taps of one output phase, C_in / G * ceil(KH / stride_h) * ceil(KW / stride_w)
    (its weight, C_in x C_out / G x KH x KW, is not K-major as stored)."""
    xm, wm, om = graph.meta(spec.x), graph.meta(spec.w), spec.node.out
    bias = own_bias(graph, spec)
    ops = tuple(
        graph.node(x).op for x in spec.epilogue if graph.node(x).kind == "call" and x != bias
    )
    epilogue = tuple(o for o in ops if o not in ("view", "unsqueeze", "permute", "expand"))
    m = om.hint[0] * math.prod(om.hint[2:])
    dilated = any(d != 1 for d in spec.dilation)
    if spec.transposed:
        # a phase's taps: every stride-th, or every stride / gcd(stride, dilation)-th
        steps = [s // math.gcd(s, d) for s, d in zip(spec.stride, spec.dilation, strict=True)]
        taps = math.prod(-(-k // s) for k, s in zip(wm.hint[2:], steps, strict=True))
        return GemmShape(m, om.hint[1], wm.hint[0] // spec.groups * taps,
                         lhs_k_contiguous=xm.strides[-1] == 1, rhs_k_contiguous=False,
                         epilogue=epilogue, groups=spec.groups, transposed=True,
                         dilated=dilated, spatial=spec.nsp,
                         channels=wm.hint[0] // spec.groups)
    return GemmShape(
        m,
        wm.hint[0],
        math.prod(wm.hint[1:]),
        lhs_k_contiguous=xm.strides[-1] == 1,
        rhs_k_contiguous=wm.strides[-1] == 1 and wm.strides[1] == math.prod(wm.hint[2:]),
        epilogue=epilogue,
        groups=spec.groups,
        dilated=dilated,
        strided=any(s != 1 for s in spec.stride),
        spatial=spec.nsp,
        channels=wm.hint[1],
        input_elements=math.prod(xm.hint),
    )


def own_bias(graph: OpGraph, spec: ConvSpec) -> str | None:
    """The epilogue's add of the convolution's own bias (lowering's ``conv + bias.view(C, 1,
    1)``), which PyTorch's convolution would do itself; None when there is none. It is no
    epilogue of its own: the vendor path is not worth a kernel for it alone."""
    for name in spec.epilogue:
        node = graph.node(name)
        if node.target != "aten.add.Tensor" or node.args[0] != Ref(spec.node.name):
            continue
        other = node.args[1]
        if not isinstance(other, Ref) or not graph.has_node(other.name):
            continue
        view = graph.node(other.name)
        src = view.args[0] if view.args else None
        if (
            view.target == "aten.view.default"
            and isinstance(src, Ref)
            and graph.meta(src.name).rank == 1
            and view.out.hint[1:] == (1,) * spec.nsp
        ):
            return name
    return None
