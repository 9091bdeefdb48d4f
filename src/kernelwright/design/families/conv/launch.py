"""The wrapper of a convolution group: sizes from the input and the weight, the math the policy
allows, the tiles, the launch.

    implicit  one implicit-GEMM kernel (the convolution and its epilogue, one store), on the
              operands as given or (``CHANNELS_LAST`` 1) on channels-last copies of them;
              ``TMA`` 1 (2-D, stride 1, channels-last): its blocks loaded as boxes by the
              tensor memory accelerator where descriptors can describe the operands
    transposed
              a transposed convolution: one implicit GEMM per output phase, channels-last
    direct    one kernel for a grouped (depthwise) convolution, or one of one group with few
              taps a value, and its epilogue, on CUDA cores
    vendor    PyTorch's convolution (cuDNN), then one kernel for the epilogue

The math is chosen at run time from the operands and the caller's convolution policy, never
lowered silently: bf16 and fp16 operands multiply on tensor cores with fp32 accumulation; fp32
operands keep fp32 accuracy with 3xTF32 (``FP32_MATH`` 0) or IEEE fp32 (``FP32_MATH`` 1), unless
the caller allowed TF32 for convolutions (``torch.backends.cudnn.allow_tf32``, as the tf32 policy
does). The direct kernel sums in IEEE fp32 whatever the policy (its few taps a value gain
nothing from tensor cores).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from kernelwright.design.families.conv.epilogue import ConvEpilogue
from kernelwright.design.families.conv.kernels import (
    direct_kernel,
    implicit_gemm_kernel,
    implicit_gemm_nhwc_kernel,
    implicit_gemm_tma_kernel,
    phase_taps,
    spatial,
    transposed_kernel,
    vendor_epilogue_kernel,
)
from kernelwright.design.families.conv.spec import (
    DENSE_GROUPS,
    SMEM_BYTES,
    TILE_N,
    ConvSpec,
    block_diagonal,
    conv_spec,
)
from kernelwright.design.families.gemm.precision import FP32_MATH, FP32_NOTES
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import (
    Code,
    DesignError,
    RenderedKernel,
    allocate,
    launch,
    wrap_words,
    wrapper_params,
)
from kernelwright.design.kernel.emitter import safe_name

VARIANTS = ("implicit", "transposed", "direct", "vendor")
DEFAULTS = {
    "BLOCK_M": 128,
    "BLOCK_N": 128,
    "BLOCK_K": 32,
    "GROUP_M": 8,
    "STAGES": 3,
    "WARPS": 8,
    "FP32_MATH": 0,
    "CHANNELS_LAST": 0,
    "TMA": 0,
}
INDEX_32 = 2**31  # elements from which offsets need 64 bits
CHANNELS_LAST = {2: "channels_last", 3: "channels_last_3d"}  # PyTorch's memory formats


def math_note(fp32_math: str) -> str:
    """The math of every policy, for a file whose fp32 operands take ``fp32_math``."""
    return (
        f"math: fp32 operands {FP32_NOTES[fp32_math]}, or TF32 where the caller allowed it "
        "for convolutions (torch.backends.cudnn.allow_tf32); bf16/fp16 operands on tensor "
        "cores; fp32 accumulation throughout"
    )


def render_conv(
    graph: OpGraph, group: Group, name: str, variant: str, params: Mapping[str, Any]
) -> RenderedKernel:
    """Render a convolution group as ``implicit`` or ``vendor``."""
    if variant not in VARIANTS:
        raise DesignError(f"the convolution templates render {', '.join(VARIANTS)}, not {variant}")
    spec = conv_spec(graph, group)
    p = {**DEFAULTS, **{k: int(v) for k, v in params.items() if k in DEFAULTS}}
    if p["FP32_MATH"] not in FP32_MATH:
        raise DesignError(f"FP32_MATH {p['FP32_MATH']}: 0 (tf32x3) or 1 (ieee)")
    fp32_math = FP32_MATH[p["FP32_MATH"]]
    vendor = variant == "vendor"
    if vendor and not spec.epilogue:
        raise DesignError("a vendor convolution without an epilogue: nothing for a kernel to do")
    if variant == "implicit" and spec.groups != 1:
        raise DesignError(f"an implicit GEMM takes a convolution of one group, not {spec.groups}")
    if spec.transposed and variant in ("implicit", "direct"):
        raise DesignError(f"the {variant} kernel takes forward convolutions, not transposed ones")
    if variant == "transposed" and not spec.transposed:
        raise DesignError("the phase kernel takes transposed convolutions")
    dense = False
    if variant == "transposed" and spec.groups != 1:
        opg = graph.meta(spec.w).hint[1]  # a transposed convolution's weight: C_in x C_out / G
        dense = block_diagonal(spec.groups, opg)
        if opg % TILE_N and not dense:
            raise DesignError(
                f"a transposed convolution of {spec.groups} groups of {opg} output channels: "
                f"the phase kernel's tiles need a multiple of {TILE_N} a group, or at most "
                f"{DENSE_GROUPS} groups to run as one block-diagonal product"
            )
    # a block-diagonal product is a convolution of one group to the kernel
    epi = ConvEpilogue(graph, group, dataclasses.replace(spec, groups=1) if dense else spec)
    code = Code()
    wparams = wrapper_params(graph, group)
    code.add(f"def {name}({', '.join(wparams)}):")
    code.indent()
    note = {
        "implicit": math_note(fp32_math),
        "transposed": math_note(fp32_math),
        "direct": "math: IEEE fp32 sums on CUDA cores, whatever the operands' dtype",
        "vendor": "math: PyTorch's convolution (cuDNN)",
    }[variant]
    how = "implicit-nhwc" if variant == "implicit" and p["CHANNELS_LAST"] else variant
    first, *rest = wrap_words(_describe(graph, spec, how), 84)
    code.add(f'"""{first}', *rest, "", *wrap_words(note, 88), '"""')
    if vendor and p["CHANNELS_LAST"] not in (0, 1, 2):
        raise DesignError(
            f"CHANNELS_LAST {p['CHANNELS_LAST']}: 0 (as given), 1 (on tensor cores) or 2 (all)"
        )
    if variant == "transposed":
        p["CHANNELS_LAST"] = 1  # its only layout
    if not vendor and p["CHANNELS_LAST"] not in (0, 1):
        raise DesignError(f"CHANNELS_LAST {p['CHANNELS_LAST']}: 0 (as given) or 1 (NHWC)")
    if variant == "direct" and p["CHANNELS_LAST"]:
        raise DesignError("the direct kernel reads its input as given (CHANNELS_LAST 0)")
    if variant == "implicit" and spec.nsp != 2 and not p["CHANNELS_LAST"]:
        raise DesignError("the implicit GEMM gathers NCHW patches in 2-D only: CHANNELS_LAST 1")
    _sizes(graph, group, spec, fp32_math, variant, code, channels_last=p["CHANNELS_LAST"],
           dense=dense)
    product = variant in ("implicit", "transposed")
    rows = "MP" if variant == "transposed" else "M"  # a phase's positions, or all
    code.add(
        "# tiles: BLOCK_M output positions x BLOCK_N channels"
        + (", BLOCK_K filter taps a step" if product else ""),
        f"BLOCK_M = max(16, min({p['BLOCK_M']}, _pow2({rows})))",
        f"BLOCK_N = max(16, min({p['BLOCK_N']}, _pow2(N)))",
    )
    if variant == "transposed" and spec.groups != 1 and not dense:
        code.add("# a tile's columns lie in one group: BLOCK_N divides the group's OPG channels",
                 "BLOCK_N = min(BLOCK_N, OPG & -OPG)")
    outs = [safe_name(o) for o in group.outputs]
    big = " or ".join(
        f"{o}.numel() >= {INDEX_32}" for o in ["x_in" if not vendor else "conv_out", *outs]
    )
    code.add(f"INDEX_64 = {big}")
    consts: dict[str, Any] = {
        "BLOCK_M": "BLOCK_M",
        "BLOCK_N": "BLOCK_N",
        "GROUP_M": p["GROUP_M"],
        "INDEX_64": "INDEX_64",
    }
    grid = "(_cdiv(M, BLOCK_M) * _cdiv(N, BLOCK_N),)"
    dims = spatial(spec.nsp)
    geometry: dict[str, Any] = {f"K{d}": f"K{d}" for d in dims}
    for key, values in (("STRIDE_", spec.stride), ("PAD_", spec.padding),
                        ("DIL_", spec.dilation)):
        geometry.update({f"{key}{d}": v for d, v in zip(dims, values, strict=True)})
    extra: tuple[str, ...] = ()  # kernels before the main one (the TMA variant's)
    if vendor:
        text, args = vendor_epilogue_kernel(epi, f"{name}_kernel")
        # 16-bit outputs: per-channel operands as vectors (vendor_epilogue_kernel says why)
        launch(f"{name}_kernel", grid, args,
               {**consts, "ROW_VECTORS": "conv_out.element_size() == 2",
                "num_warps": p["WARPS"]}, code)
    elif variant == "direct":
        text, args = direct_kernel(epi, f"{name}_kernel")
        launch(f"{name}_kernel", grid, args,
               {**consts, **geometry, "num_warps": p["WARPS"]}, code)
    elif variant == "transposed":
        _stages(p, outs, True, code)
        text, args = transposed_kernel(epi, f"{name}_kernel")
        taps = {f"TAPS_{d}": f"TAPS_{d}" for d in dims}
        geometry = {k: v for k, v in geometry.items() if not k.startswith("DIL")}
        run = {"num_warps": p["WARPS"], "num_stages": "STAGES"}
        launch(
            f"{name}_kernel",
            f"(_cdiv(MP, BLOCK_M) * _cdiv(N, BLOCK_N), {math.prod(spec.stride)})",
            args,
            {**consts, "BLOCK_K": "BLOCK_K", **geometry, **taps,
             "DOT_PRECISION": "DOT_PRECISION", **run},
            code,
        )
    else:
        nhwc = bool(p["CHANNELS_LAST"])
        _stages(p, outs, nhwc, code)
        kernel = implicit_gemm_nhwc_kernel if nhwc else implicit_gemm_kernel
        text, args = kernel(epi, f"{name}_kernel")
        run = {"num_warps": p["WARPS"], "num_stages": "STAGES"}
        # TMA loads take boxes of the input at the tile's corner: stride 1, channels-last, 2-D
        tma = bool(p["TMA"]) and nhwc and spec.nsp == 2 and spec.stride == (1, 1)
        if tma:
            tma_text, tma_args = implicit_gemm_tma_kernel(epi, f"{name}_tma_kernel")
            extra = (tma_text,)
            code.add(
                "# tensor-memory-accelerator loads (Hopper): tiles of BLOCK_H x BLOCK_W positions"
                " of one image,",
                "# each step's blocks boxes of the NHWC input and the [C_out, taps, C_in] weight;"
                " pointer loads",
                "# where a descriptor cannot describe them",
                "BLOCK_H, BLOCK_W = _tma_tile(OH, OW, BLOCK_M)",
                "x_desc, w_desc = _conv_tma_operands(x_in, w_in, BLOCK_H, BLOCK_W, BLOCK_N, "
                "BLOCK_K)",
                "if x_desc is not None:",
            )
            code.indent()
            code.add(
                "TILES_H, TILES_W = _cdiv(OH, BLOCK_H), _cdiv(OW, BLOCK_W)",
                "TILES = n_img * TILES_H * TILES_W",
            )
            launch(
                f"{name}_tma_kernel",
                "(TILES * _cdiv(N, BLOCK_N),)",
                tma_args,
                {"BLOCK_H": "BLOCK_H", "BLOCK_W": "BLOCK_W", "BLOCK_N": "BLOCK_N",
                 "BLOCK_K": "BLOCK_K", "GROUP_M": p["GROUP_M"], "INDEX_64": "INDEX_64",
                 **{k: v for k, v in geometry.items() if not k.startswith("STRIDE_")},
                 "DOT_PRECISION": "DOT_PRECISION", **run},
                code,
            )
            code.dedent()
            code.add("else:")
            code.indent()
        _pointer_block_k(p, outs, nhwc, code)
        launch(
            f"{name}_kernel",
            grid,
            args,
            {**consts, "BLOCK_K": "BLOCK_K", **geometry, "DOT_PRECISION": "DOT_PRECISION", **run},
            code,
        )
        if tma:
            code.dedent()
    code.add(f"return {', '.join(outs)}" + ("," if len(outs) == 1 else ""))
    return RenderedKernel(
        (*extra, text),
        code.text(),
        name,
        tuple(wparams),
        tuple(group.outputs),
        tuple(sorted(epi.helpers)),
        notes=(note,),
    )


def _stages(p: Mapping[str, int], outs: list[str], nhwc: bool, code: Code) -> None:
    """``BLOCK_K`` and ``STAGES`` of an implicit GEMM: K blocks of at most the taps (NCHW) or
    one tap's input channels (``nhwc``), as many pipeline stages as fit."""
    code.add(
        # a block of K is a block of one tap's channels in NHWC: at most C_in of them
        f"BLOCK_K = max(16, min({p['BLOCK_K']}, _pow2({'C_in' if nhwc else 'K'})))",
        f"# pipeline stages: up to {p['STAGES']}, as many as fit in shared memory (an H200"
        " block's 227 KB,",
        "# less 1 KB for barriers) with these tiles and the operands' and output's dtypes",
        _fit_stages(p, outs, nhwc),
    )


def _fit_stages(p: Mapping[str, int], outs: list[str], nhwc: bool) -> str:
    """The wrapper's line fitting ``STAGES`` to the current ``BLOCK_K`` and dtypes."""
    out_bytes = f"{outs[0]}.element_size()"
    if len(outs) > 1:
        out_bytes = f"max({', '.join(f'{o}.element_size()' for o in outs)})"
    return (f"STAGES = _conv_stages({p['STAGES']}, BLOCK_M, BLOCK_N, BLOCK_K, x_in, "
            f"{out_bytes}, {SMEM_BYTES}" + (", m_major=False)" if nhwc else ")"))


def _pointer_block_k(p: Mapping[str, int], outs: list[str], nhwc: bool, code: Code) -> None:
    """Pointer loads take K blocks of at most 128 bytes a row: where ``BLOCK_K`` is wider (64
    fp32 values, for TMA loads) the pointer kernel, a TMA design's fallback included, narrows
    it and fits its stages again. Compiled for sm_90 at KernelBench level-2 1's size, its 64-wide
    fp32 blocks spill (52 bytes gathering channels-last rows, 4 NCHW patches); 32 spill none."""
    if p["BLOCK_K"] <= 32:
        return
    code.add(
        "# pointer loads: K blocks of at most 128 bytes (wider ones spill the gathers)",
        "BLOCK_K = min(BLOCK_K, 128 // x_in.element_size())",
        _fit_stages(p, outs, nhwc),
    )


def _describe(graph: OpGraph, spec: ConvSpec, variant: str) -> str:
    ops = ", ".join(dict.fromkeys(graph.node(n).op for n in spec.epilogue))
    def x(values: tuple[int, ...]) -> str:
        return "x".join(str(v) for v in values)

    kind = f"{spec.nsp}-D convolution"
    if spec.transposed:
        kind = f"transposed {kind}"
    what = (
        f"{kind} of {safe_name(spec.x)} by {safe_name(spec.w)} (stride {x(spec.stride)}, "
        f"padding {x(spec.padding)}, dilation {x(spec.dilation)}"
    )
    if spec.output_padding and any(spec.output_padding):
        what += f", output padding {x(spec.output_padding)}"
    what += ")"
    if spec.groups != 1:
        what += f" in {spec.groups} groups"
    if ops:
        what += f" with its epilogue ({ops}) on the fp32 accumulator"
    how = {
        "direct": "each output value summed tap by tap on CUDA cores from its group's input "
        "channels, tiles of positions x channels, one NCHW store",
        "implicit": "an implicit GEMM on tensor cores (input patches gathered a block of taps "
        "at a time), tiles in grouped order, one NCHW store",
        "implicit-nhwc": "an implicit GEMM on tensor cores over channels-last copies of the "
        "input and weight (a step loads one tap's block of channels, contiguous), tiles in "
        "grouped order, one NCHW store",
        "transposed": "one implicit GEMM on tensor cores per output phase (positions with the "
        "same index modulo the stride along each dimension, which read the same taps) over "
        "channels-last copies of the input and weight, tiles in grouped order, one NCHW store",
        "vendor": "PyTorch's convolution, then one kernel for the epilogue",
    }
    return f"{what}: {how[variant]}."


def _sizes(
    graph: OpGraph,
    group: Group,
    spec: ConvSpec,
    fp32_math: str,
    variant: str,
    code: Code,
    *,
    channels_last: int = 0,
    dense: bool = False,
) -> None:
    """The operands and the GEMM's sizes from the runtime tensors (``dense``: a grouped
    transposed convolution's weight made block-diagonal, one group); tl.dot's input precision
    (the vendor path: its convolution, channels-last if ``channels_last`` is 1 and cuDNN uses
    tensor cores (16-bit operands or TF32 allowed), always if 2; the implicit GEMM:
    channels-last copies of both operands if ``channels_last`` is 1); the domain's sizes; the
    outputs."""
    assert group.layout is not None
    s, pd, d = spec.stride, spec.padding, spec.dilation
    x, w = safe_name(spec.x), safe_name(spec.w)
    per_group = "" if spec.groups == 1 else "/G"
    dims = spatial(spec.nsp)
    shape = " x ".join(dims)
    kernel = " x ".join(f"K{a}" for a in dims)
    names = ", ".join(dims)
    knames = ", ".join(f"K{a}" for a in dims)
    if spec.output_padding is not None:
        op = spec.output_padding
        code.add(
            f"# N x C_in x {shape} (any strides); the weight C_in x C_out{per_group} x {kernel},"
            " as a transposed",
            "# convolution's is",
            f"x_in, w_in = {x}, {w}",
            f"n_img, C_in, {names} = x_in.shape",
            f"_, C_out, {knames} = w_in.shape",
            *([f"C_out *= {spec.groups}"] if spec.groups != 1 else []),
            *(f"O{a} = ({a} - 1) * {s[i]} - {2 * pd[i]} + {d[i]} * (K{a} - 1) + {op[i] + 1}"
              for i, a in enumerate(dims)),
        )
    else:
        code.add(
            f"x_in, w_in = {x}, {w}  # N x C_in x {shape} (any strides), C_out x C_in{per_group}"
            f" x {kernel}",
            f"n_img, C_in, {names} = x_in.shape",
            f"C_out, _, {knames} = w_in.shape",
            *(f"O{a} = ({a} + {2 * pd[i]} - {d[i]} * (K{a} - 1) - 1) // {s[i]} + 1"
              for i, a in enumerate(dims)),
        )
    positions = " * ".join(f"O{a}" for a in dims)
    taps = " * ".join(f"K{a}" for a in dims)
    code.add(
        "# the implicit GEMM: M output positions x N channels over K filter taps",
        f"M, N, K = n_img * {positions}, C_out, C_in * {taps}",
    )
    if spec.groups != 1:
        code.add(
            f"# {spec.groups} groups: CPG input and OPG output channels a group, K taps a value",
            f"CPG, OPG = C_in // {spec.groups}, C_out // {spec.groups}",
            f"K = CPG * {taps}",
        )
    elif variant == "direct":
        code.add("CPG, OPG = C_in, C_out  # one group: each output channel reads every input one")
    if variant == "vendor":
        if channels_last:
            code.add(
                "# the convolution on channels-last (NHWC) tensors"
                + (
                    " where cuDNN multiplies on tensor cores (16-bit operands, or TF32 allowed):"
                    if channels_last == 1
                    else ": where cuDNN multiplies on tensor cores"
                ),
                "# its kernels run several times faster on them than on NCHW ones; the copies",
                "# move each input value once (none where the input already is channels-last)",
            )
            if channels_last == 1:
                code.add("if x_in.element_size() == 2 or torch.backends.cudnn.allow_tf32:")
                code.indent()
            code.add(
                "x_in = _nhwc_copy(x_in)",
                f"w_in = w_in.contiguous(memory_format=torch.{CHANNELS_LAST[spec.nsp]})",
            )
            if channels_last == 1:
                code.dedent()
        code.add(
            "conv_out = torch.ops.aten.convolution.default(",
            f"    x_in, w_in, None, {list(s)}, {list(pd)}, {list(d)},"
            f" {spec.transposed}, {list(spec.output_padding or (0,) * spec.nsp)}, {spec.groups}",
            ")",
            "# the epilogue reads the output in the layout the convolution wrote (NCHW or NHWC)",
            "conv_out, (sy_n, sy_c, sy_p) = _position_strides(conv_out)",
        )
    elif variant == "direct":
        code.add(
            f"w_in = w_in.contiguous()  # {'OIHW' if spec.nsp == 2 else 'OIDHW'}, as stored: "
            "no copy then",
            f"sx_n, sx_c, {', '.join(f'sx_{a.lower()}' for a in dims)} = x_in.stride()",
        )
    elif variant == "transposed":
        qs = ", ".join(f"Q{a}" for a in dims)
        # a phase's taps are every stride-th (undilated) or every stride / gcd(stride, dilation)-th
        tap_steps = [phase_taps(s[i], d[i])[1] for i in range(spec.nsp)]
        ts = ", ".join(f"TAPS_{a}" for a in dims)
        code.add(
            "x_in, w_in = _dot_operands(x_in, w_in)",
            "# channels-last operands: the input copied once (none where it already is), the",
            f"# weight permuted to [C_out, {knames}, C_in]: [C_out, K], K-major",
            "x_in = _nhwc_copy(x_in)",
            *(
                [f"w_in = w_in.permute(1, {', '.join(str(i + 2) for i in range(spec.nsp))}, 0)"
                 ".contiguous()"]
                if spec.groups == 1
                else [
                    f"# {spec.groups} groups of OPG output channels, no multiple of a tile's 16:"
                    " one product over a",
                    "# block-diagonal weight [C_in, C_out, taps], zeros between the groups "
                    "(exactly: where,",
                    "# not a multiplication, so a weight's inf or NaN stays in its own group)",
                    f"_w = w_in.reshape({spec.groups}, CPG, 1, OPG, -1)",
                    f"_same = torch.eye({spec.groups}, dtype=torch.bool, device=_w.device)"
                    f".reshape({spec.groups}, 1, {spec.groups}, 1, 1)",
                    f"w_in = torch.where(_same, _w, _w.new_zeros(())).reshape(C_in, C_out, "
                    f"{knames})",
                    f"w_in = w_in.permute(1, {', '.join(str(i + 2) for i in range(spec.nsp))}, 0)"
                    ".contiguous()",
                    f"CPG, OPG, K = C_in, C_out, C_in * {taps}",
                ]
                if dense
                else [
                    f"# groups: [G, CPG, OPG, {knames}] to [C_out, {knames}, CPG]: each output "
                    "channel's",
                    "# row holds its own group's input channels",
                    f"w_in = w_in.reshape({spec.groups}, CPG, OPG, {knames}).permute("
                    f"0, 2, {', '.join(str(i + 3) for i in range(spec.nsp))}, 1)",
                    f"w_in = w_in.reshape(C_out, {knames}, CPG)",
                ]
            ),
            f"sx_n, _, {', '.join(f'sx_{a.lower()}' for a in dims)} = x_in.stride()",
            "# tl.dot's input precision, from the operands' dtype and the caller's conv policy",
            f'DOT_PRECISION = _conv_dot_precision(x_in, "{fp32_math}")',
            "# the output's phases: positions with the same index modulo the stride along each",
            f"# dimension read the same taps, {' x '.join(f'TAPS_{a}' for a in dims)} of them at"
            f" most; {' x '.join(f'Q{a}' for a in dims)} positions",
            "# a phase an image",
            f"{qs} = {', '.join(f'_cdiv(O{a}, {s[i]})' for i, a in enumerate(dims))}",
            f"MP = n_img * {' * '.join(f'Q{a}' for a in dims)}",
            f"{ts} = {', '.join(f'_cdiv(K{a}, {tap_steps[i]})' for i, a in enumerate(dims))}",
        )
    elif channels_last:
        order = ", ".join(f"k{a.lower()}" for a in dims)
        code.add(
            "x_in, w_in = _dot_operands(x_in, w_in)",
            f"# channels-last operands, K in the order ({order}, c): each input value copied "
            "once",
            "# (none where the input already is channels-last), the weight permuted to",
            f"# [C_out, {knames}, C_in]: [C_out, K], K-major",
            "x_in = _nhwc_copy(x_in)",
            f"w_in = w_in.permute(0, {', '.join(str(i + 2) for i in range(spec.nsp))}, 1)"
            ".contiguous()",
            f"sx_n, _, {', '.join(f'sx_{a.lower()}' for a in dims)} = x_in.stride()",
            "# tl.dot's input precision, from the operands' dtype and the caller's conv policy",
            f'DOT_PRECISION = _conv_dot_precision(x_in, "{fp32_math}")',
        )
    else:
        code.add(
            "x_in, w_in = _dot_operands(x_in, w_in)",
            "# the weight as [C_out, K], K-major: OIHW storage already is (no copy then)",
            "w_in = w_in.contiguous()",
            "sx_n, sx_c, sx_h, sx_w = x_in.stride()",
            "# tl.dot's input precision, from the operands' dtype and the caller's conv policy",
            f'DOT_PRECISION = _conv_dot_precision(x_in, "{fp32_math}")',
        )
    sizes = {spec.axes[0]: "n_img", spec.axes[1]: "C_out"}
    sizes.update({axis: f"O{a}" for axis, a in zip(spec.axes[2:], dims, strict=True)})
    for dim in range(len(group.layout.hint)):
        if dim not in sizes:
            raise DesignError(f"domain dimension {dim} is none of the convolution's output's")
        code.add(f"dim{dim} = {sizes[dim]}")
    allocate(graph, group, group.layout, code, "x_in")
