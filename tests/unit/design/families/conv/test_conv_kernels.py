"""2-D convolutions and their epilogues as implicit GEMMs, run under the interpreter against
PyTorch's conv2d in float64, at small odd shapes (partial tiles along M, N and K; several K
blocks), with input variants of other sizes: strides, padding, dilation, 3x3 and 1x1 filters,
with and without the conv's bias, fp32 and tf32 policies; the vendor path for convolutions
too narrow for tensor-core tiles; and grouped (depthwise) convolutions in the direct kernel."""

from __future__ import annotations

from typing import Any

import pytest

# tiles of 64 output positions x 16 channels over K blocks of 16 taps: a few programs per
# launch under the interpreter (its cost is per program and K step), several channel and K
# blocks at these small sizes
SMALL = {"BLOCK_M": 64, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}
# the direct and epilogue-only kernels' tiles: 128 positions x 16 channels (the last channel
# block partial), a few programs per launch
WIDE = {"BLOCK_M": 128, "BLOCK_N": 16}

CONV = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d({cin}, {cout}, {k}, stride={stride}, padding={padding},
                              dilation={dilation}, bias={bias})
        self.bias = nn.Parameter(torch.randn({cout}, 1, 1))
    def forward(self, x):
        return {body}
def get_inputs():
    return [torch.randn(2, {cin}, {h}, {w})]
def get_input_variants():
    return [[torch.randn(1, {cin}, {h2}, {w2})]]
def get_init_inputs():
    return []
"""

CASES = {
    # name: (C_in, C_out, kernel, stride, padding, dilation, bias, H, W, variant H, W)
    # M (batch 2 x output pixels) is 70 for each 3x3 here: two 64-row tiles, the last partial
    # (larger inputs only add interpreted tiles); N = 33 and K = 8 x 9 = 72 are partial too
    "3x3": (8, 33, 3, 1, 0, 1, True, 9, 7, 7, 9),
    "3x3-stride2-pad1": (8, 33, 3, 2, 1, 1, False, 13, 10, 6, 5),
    "3x3-dilation2-pad1": (8, 33, 3, 1, 1, 2, True, 7, 9, 6, 7),
    "1x1": (65, 34, 1, 1, 0, 1, False, 5, 7, 3, 2),
    "1x1-stride2": (65, 34, 1, 2, 0, 1, True, 6, 7, 3, 3),
    "3x5-mixed": (7, 40, (3, 5), (2, 1), (1, 2), (1, 2), True, 9, 11, 5, 8),
}


def conv_task(case: str, body: str = "torch.relu(self.conv(x)) + self.bias") -> str:
    cin, cout, k, stride, padding, dilation, bias, h, w, h2, w2 = CASES[case]
    return CONV.format(
        cin=cin,
        cout=cout,
        k=k,
        stride=stride,
        padding=padding,
        dilation=dilation,
        bias=bias,
        h=h,
        w=w,
        h2=h2,
        w2=w2,
        body=body,
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_implicit_gemm_with_relu_and_bias_matches_float64(check_launches, case: str) -> None:
    """``CHANNELS_LAST`` 0, the NCHW gathers: one kernel, the convolution, its own bias, the
    ReLU and the added bias, one store."""
    runs = check_launches(
        conv_task(case),
        skills=("conv-implicit-gemm",),
        params={**SMALL, "CHANNELS_LAST": 0},
        reference="float64",
        policy="fp32",
    )
    assert [launched for _, launched in runs] == [["conv_0_kernel", "conv_0_kernel"]]


@pytest.mark.parametrize("case", sorted(CASES))
def test_channels_last_implicit_gemm_matches_float64(check_launches, case: str) -> None:
    """``CHANNELS_LAST`` 1: the input copied NHWC, the weight permuted to [C_out, KH, KW, C_in],
    a step of K one tap's block of channels: channel counts below, at and past a 16-channel
    block (7, 8, 65: partial and several blocks a tap), every geometry of the cases, the
    input variants of other sizes; the copy, then one kernel (pointer loads: ``TMA`` 0)."""
    runs = check_launches(
        conv_task(case),
        skills=("conv-implicit-gemm",),
        params={**SMALL, "CHANNELS_LAST": 1, "TMA": 0},
        reference="float64",
        policy="fp32",
    )
    copies = ["_nhwc_copy_kernel", "conv_0_kernel"]
    assert [launched for _, launched in runs] == [copies * 2]


def test_channels_last_implicit_gemm_source_and_bf16(check) -> None:
    """The channels-last kernel's loads: rows of one tap's channels (no channel stride), the
    weight at the tap's offset; bf16 operands too."""
    (src,) = check(
        conv_task("3x3-stride2-pad1"),
        skills=("conv-implicit-gemm",),
        params={**SMALL, "CHANNELS_LAST": 1},
        dtype="bfloat16",
        tol=3e-2,
    )
    assert "x_in = _nhwc_copy(x_in)" in src
    assert "w_in = w_in.permute(0, 2, 3, 1).contiguous()" in src
    assert "patch[:, None] + c[None, :]" in src and "sx_c" not in src.split("@triton.jit")[-1]
    assert "m_major=False" in src


TMA_CASES = {
    # name: (fields as CASES, the kernel launched after the input's channels-last copy)
    "3x3": (CASES["3x3"], "conv_0_tma_kernel"),
    "3x3-dilation2-pad1": (CASES["3x3-dilation2-pad1"], "conv_0_tma_kernel"),
    # 24 channels: a tap's second block of 16 is partial, its tail read as zeros
    "3x3-pad1-24-channels": ((24, 33, 3, 1, 1, 1, True, 7, 13, 5, 6), "conv_0_tma_kernel"),
    # 65 fp32 channels (260 bytes a position) are no multiple of 16 bytes: no descriptor
    "1x1-65-channels": (CASES["1x1"], "conv_0_kernel"),
}


@pytest.mark.parametrize("case", sorted(TMA_CASES))
def test_tma_loads_match_float64(check_launches, case: str) -> None:
    """``TMA`` 1: tiles of 64 positions of one image (8 rows x 8 columns where the output is
    7 x 5, 4 x 16 where it is 7 x 13: the shape covering the fewest positions past the edges,
    the widest of equals, the last tile partial either way) and boxes of the
    NHWC input at each tap's shifted corner, the padding and a channel block's tail read as
    zeros; the input variants of other sizes; the pointer-load kernel where a descriptor
    cannot describe the input."""
    fields, kernel = TMA_CASES[case]
    cin, cout, k, stride, padding, dilation, bias, h, w, h2, w2 = fields
    body = CONV.format(cin=cin, cout=cout, k=k, stride=stride, padding=padding,
                       dilation=dilation, bias=bias, h=h, w=w, h2=h2, w2=w2,
                       body="torch.relu(self.conv(x)) + self.bias")
    runs = check_launches(body, skills=("conv-implicit-gemm",),
                          params={**SMALL, "CHANNELS_LAST": 1, "TMA": 1},
                          reference="float64", policy="fp32")
    assert [launched for _, launched in runs] == [["_nhwc_copy_kernel", kernel] * 2]


@pytest.mark.parametrize(("fields", "kernel"), [
    ((64, 33, 3, 1, 1, 1, True, 5, 6, 4, 5), "conv_0_tma_kernel"),  # boxes of 64 channels
    (CASES["1x1"], "conv_0_kernel"),  # 65 fp32 channels: no descriptor, the pointer fallback
])
def test_k_blocks_of_64_fp32_values_load_by_tma_and_narrow_for_pointer_loads(
        design_worker, fields: tuple, kernel: str) -> None:
    """``BLOCK_K`` 64 under fp32 (the width TMA loads take where an SM keeps its blocks):
    the TMA kernel steps through a tap's 64 channels at once; the pointer kernel, here the
    fallback of a TMA design, narrows its blocks to 128 bytes (32 values) and fits its stages
    again. Both match float64."""
    cin, cout, k, stride, padding, dilation, bias, h, w, h2, w2 = fields
    body = CONV.format(cin=cin, cout=cout, k=k, stride=stride, padding=padding,
                       dilation=dilation, bias=bias, h=h, w=w, h2=h2, w2=w2,
                       body="torch.relu(self.conv(x)) + self.bias")
    # one check (the ``check`` fixtures' request), whose reply holds both the source and the
    # kernels launched
    reply = design_worker.ask({
        "body": body, "skills": ("conv-implicit-gemm",), "reference": "float64",
        "policy": "fp32", "params": {**SMALL, "CHANNELS_LAST": 1, "TMA": 1, "BLOCK_K": 64}})
    if "error" in reply:
        pytest.fail(reply["error"] + "\n" + reply.get("traceback", "")
                    + reply.get("source", "")[-3000:])
    (launched,), (src,) = reply["launched"], reply["sources"]
    assert launched == ["_nhwc_copy_kernel", kernel] * 2
    fallback = src.split("    else:\n", 1)[1]
    assert "BLOCK_K = min(BLOCK_K, 128 // x_in.element_size())" in fallback


@pytest.mark.parametrize(
    ("oh", "ow", "block_m", "tile"),
    [
        (192, 192, 128, (2, 64)),  # 128 wide would cover 256 columns of 192
        (128, 128, 128, (1, 128)),  # the widest of the exact fits
        (7, 7, 128, (16, 8)),  # 16 x 8 covers 128 positions an image; 32 x 4 covers 256
        (7, 5, 16, (8, 2)),
        (7, 13, 16, (1, 16)),
        (1, 3000, 128, (1, 128)),  # a 1-D convolution's single row
    ],
)
def test_tma_tile_covers_the_fewest_positions_past_the_edges(oh, ow, block_m, tile) -> None:
    """The wrapper's TMA tile shape (``_tma_tile``): block_m positions as rows x a
    power-of-two width, the fewest positions computed past the image's edges, the widest of
    equals."""
    from kernelwright.design.families.conv.helpers import PY_HELPERS

    scope: dict[str, object] = {}
    exec(PY_HELPERS["_tma_tile"], scope)
    got = scope["_tma_tile"](oh, ow, block_m)  # type: ignore[operator]
    assert got == tile
    bh, bw = got
    assert bh * bw == block_m and bw & (bw - 1) == 0


def test_tma_loads_source_bf16_and_strides(check) -> None:
    """bf16 operands through the descriptors; a strided convolution keeps the pointer loads
    (its patches are no box of the input)."""
    (src,) = check(conv_task("3x3"), skills=("conv-implicit-gemm",),
                   params={**SMALL, "CHANNELS_LAST": 1, "TMA": 1}, dtype="bfloat16", tol=3e-2)
    assert "_conv_tma_operands(x_in, w_in, BLOCK_H, BLOCK_W, BLOCK_N, BLOCK_K)" in src
    assert "x_desc.load([img, ih, iw, c0])" in src
    (strided,) = check(conv_task("3x3-stride2-pad1"), skills=("conv-implicit-gemm",),
                       params={**SMALL, "CHANNELS_LAST": 1, "TMA": 1}, reference="float64")
    assert "x_desc" not in strided


@pytest.mark.parametrize("policy", ["fp32", "tf32"])
def test_the_math_follows_the_policy(check, policy: str) -> None:
    """3xTF32 under fp32 and TF32 under tf32, chosen per call from PyTorch's conv flag; the
    interpreter computes either in fp32, so both match the float64 reference."""
    (src,) = check(
        conv_task("3x3-stride2-pad1", "F.gelu(self.conv(x) * 2.0)"),
        skills=("conv-implicit-gemm",),
        params=SMALL,
        reference="float64",
        policy=policy,
    )
    assert 'DOT_PRECISION = _conv_dot_precision(x_in, "tf32x3")' in src
    assert "torch.backends.cudnn.allow_tf32" in src
    assert "input_precision=DOT_PRECISION" in src and "torch.ops.aten.convolution" not in src


def test_ieee_fp32_math_on_request(check) -> None:
    (src,) = check(
        conv_task("1x1"),
        skills=("conv-implicit-gemm",),
        params={**SMALL, "FP32_MATH": 1},
        reference="float64",
    )
    assert '_conv_dot_precision(x_in, "ieee")' in src


def test_bf16_operands(check) -> None:
    check(
        conv_task("3x3"), skills=("conv-implicit-gemm",), params=SMALL, dtype="bfloat16", tol=3e-2
    )


def test_a_narrow_convolution_keeps_the_vendor_conv_and_fuses_its_epilogue(check) -> None:
    """K = 3 x 3 x 3 = 27 taps: no implicit GEMM; PyTorch's convolution, then one kernel for
    the bias, the ReLU and the added bias."""
    body = CONV.format(
        cin=3,
        cout=20,
        k=3,
        stride=1,
        padding=1,
        dilation=1,
        bias=True,
        h=9,
        w=10,
        h2=5,
        w2=4,
        body="torch.relu(self.conv(x)) + self.bias",
    )
    (src,) = check(body, skills=("conv-vendor",), params=WIDE)
    assert "torch.ops.aten.convolution.default(" in src and "tl.dot" not in src


@pytest.mark.parametrize(("dtype", "layout"), [("float32", 2), ("bfloat16", 1)])
def test_the_vendor_conv_runs_channels_last_and_its_epilogue_reads_nhwc(check, dtype, layout
                                                                          ) -> None:
    """CHANNELS_LAST 2 (always) under fp32, 1 (where cuDNN uses tensor cores) under bf16: the
    input and weight copied channels-last, cuDNN's output read as it is stored (channels
    innermost), the epilogue's output NCHW; 3 x 3 and 1 x 1 filters (a single output row or
    column takes the position stride from the other axis)."""
    tol = {"tol": 3e-2} if dtype == "bfloat16" else {}
    params = {**WIDE, "CHANNELS_LAST": layout}
    for case in ("3x3-stride2-pad1", "1x1-stride2"):
        (src,) = check(conv_task(case), skills=("conv-vendor",), params=params, dtype=dtype,
                       **tol)
        assert "x_in = _nhwc_copy(x_in)" in src
        tensor_cores = "if x_in.element_size() == 2 or torch.backends.cudnn.allow_tf32:"
        assert (tensor_cores in src) == (layout == 1)
        assert "_position_strides(conv_out)" in src and "tl.dot" not in src
        # the per-channel operands (the added bias; the conv's own where it has one) through
        # _load_row: [N] vectors for 16-bit outputs (the bf16 case runs that branch), [1, N]
        # loads otherwise
        own = CASES[case][6]
        assert src.count("= _load_row(") == 1 + own, src
        assert "ROW_VECTORS=conv_out.element_size() == 2" in src


def test_the_channels_last_copy_matches_torchs(monkeypatch) -> None:
    """The tiled NCHW -> NHWC copy (and NCDHW -> NDHWC) under the interpreter: channels and
    positions not multiples of its 64 x 64 tile, a single row; an input already channels-last
    is returned as it is, a strided one goes to PyTorch's copy."""
    import torch

    monkeypatch.setenv("TRITON_INTERPRET", "1")  # read when the kernel is decorated
    import triton
    import triton.language as tl

    from kernelwright.design.families.conv.helpers import PY_HELPERS
    from kernelwright.design.kernel.common import WRAPPER_HELPERS

    scope: dict[str, object] = {"torch": torch, "triton": triton, "tl": tl}
    exec(WRAPPER_HELPERS["_launch"], scope)
    exec(PY_HELPERS["_nhwc_copy"], scope)
    copy = scope["_nhwc_copy"]
    for shape in [(2, 3, 9, 10), (1, 70, 9, 8), (3, 65, 1, 130)]:
        x = torch.randn(*shape)
        want = x.contiguous(memory_format=torch.channels_last)
        got = copy(x)
        assert got.stride() == want.stride() and torch.equal(got, want), shape
    nhwc = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    assert copy(nhwc) is nhwc
    strided = torch.randn(2, 3, 5, 4).transpose(2, 3)
    assert torch.equal(copy(strided), strided)
    assert copy(strided).is_contiguous(memory_format=torch.channels_last)
    # 5-D: NCDHW to NDHWC (channels_last_3d)
    for shape in [(2, 3, 4, 9, 10), (1, 70, 3, 5, 8)]:
        x = torch.randn(*shape)
        want = x.contiguous(memory_format=torch.channels_last_3d)
        got = copy(x)
        assert got.stride() == want.stride() and torch.equal(got, want), shape


def test_the_position_strides_of_nchw_nhwc_and_other_layouts() -> None:
    """The epilogue's (image, channel, position) strides: NC(D)HW and N(D)HWC as stored, a
    single output row or column from the other axis, anything else a contiguous copy."""
    import torch

    from kernelwright.design.families.conv.helpers import PY_HELPERS

    scope: dict[str, object] = {"torch": torch}
    exec(PY_HELPERS["_position_strides"], scope)
    strides = scope["_position_strides"]
    y = torch.randn(2, 3, 4, 5)
    assert strides(y)[1] == (60, 20, 1)
    assert strides(y.contiguous(memory_format=torch.channels_last))[1] == (60, 1, 3)
    assert strides(torch.randn(2, 3, 1, 5).contiguous(memory_format=torch.channels_last))[1] == (
        15, 1, 3)
    assert strides(torch.randn(2, 3, 4, 1).contiguous(memory_format=torch.channels_last))[1] == (
        12, 1, 3)
    odd = torch.randn(2, 3, 5, 4).transpose(2, 3)  # positions not evenly strided
    copy, got = strides(odd)
    assert got == (60, 20, 1) and copy.is_contiguous() and torch.equal(copy, odd)
    # 5-D: NCDHW, NDHWC, a single depth, and positions not evenly strided
    y5 = torch.randn(2, 3, 4, 5, 6)
    assert strides(y5)[1] == (360, 120, 1)
    assert strides(y5.contiguous(memory_format=torch.channels_last_3d))[1] == (360, 1, 3)
    assert strides(torch.randn(2, 3, 1, 5, 6))[1] == (90, 30, 1)
    odd5 = torch.randn(2, 3, 4, 6, 5).transpose(3, 4)
    copy, got = strides(odd5)
    assert got == (360, 120, 1) and copy.is_contiguous() and torch.equal(copy, odd5)


GROUPED = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d({cin}, {cout}, {k}, stride={stride}, padding={padding},
                              dilation={dilation}, groups={groups}, bias={bias})
        self.bn = nn.BatchNorm2d({cout})
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.5)
            self.bn.running_var.uniform_(0.5, 1.5)
            self.bn.weight.uniform_(0.5, 1.5)
    def forward(self, x):
        return torch.clamp(self.bn(self.conv(x)), 0.0, 6.0)
def get_inputs():
    return [torch.randn(2, {cin}, 11, 9)]
def get_input_variants():
    return [[torch.randn(1, {cin}, 6, 7)]]
def get_init_inputs():
    return []
"""

GROUPED_CASES = {
    # name: (C_in, C_out, kernel, stride, padding, dilation, groups, bias)
    # depthwise (MobileNet's 3x3 with batch norm and ReLU6), 21 channels: a partial channel tile
    "depthwise-3x3": (21, 21, 3, 1, 1, 1, 21, False),
    "depthwise-5x5-stride2": (21, 21, 5, 2, 2, 1, 21, True),
    # a channel multiplier of 2: output channels 2c and 2c + 1 read input channel c
    "depthwise-multiplier2-dilated": (9, 18, 3, 1, 2, 2, 9, False),
    # three groups of 4 input and 6 output channels, a 3x1 filter (ShuffleNet's grouped convs)
    "groups3-3x1": (12, 18, (3, 1), (1, 2), (1, 0), 1, 3, True),
    # one group over an image's 3 channels (27 taps a value): one input column a tap, shared
    # by the tile's channels; 20 channels: a partial channel tile
    "one-group-shallow": (3, 20, 3, 1, 1, 1, 1, True),
    "one-group-stride2-dilated": (3, 17, 3, 2, 1, 2, 1, False),
}


@pytest.mark.parametrize("case", sorted(GROUPED_CASES))
def test_grouped_or_shallow_convolutions_with_their_epilogue_in_one_direct_kernel(
    check_launches, case: str
) -> None:
    cin, cout, k, stride, padding, dilation, groups, bias = GROUPED_CASES[case]
    body = GROUPED.format(cin=cin, cout=cout, k=k, stride=stride, padding=padding,
                          dilation=dilation, groups=groups, bias=bias)
    runs = check_launches(body, skills=("conv-direct",),
                          params={**WIDE, "WARPS": 4},
                          reference="float64", policy="fp32")
    assert [launched for _, launched in runs] == [["conv_0_kernel", "conv_0_kernel"]]


def test_a_grouped_convolution_keeps_its_groups_on_the_vendor_path(check) -> None:
    body = GROUPED.format(cin=12, cout=18, k=3, stride=1, padding=1, dilation=1, groups=3,
                          bias=True)
    (src,) = check(body, skills=("conv-vendor",), params=WIDE,
                   reference="float64")
    assert "False, [0, 0], 3" in src and "tl.dot" not in src


TRANSPOSED = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d({cin}, {cout}, {k}, stride={stride}, padding={padding},
                                     output_padding={out_pad}, bias={bias})
        self.gamma = nn.Parameter(torch.rand({cout}, 1, 1) + 0.5)
    def forward(self, x):
        return F.leaky_relu(self.up(x), 0.2) * self.gamma
def get_inputs():
    return [torch.randn(2, {cin}, {h}, {w})]
def get_input_variants():
    return [[torch.randn(1, {cin}, {h2}, {w2})]]
def get_init_inputs():
    return []
"""

TRANSPOSED_CASES = {
    # name: (C_in, C_out, kernel, stride, padding, output padding, bias, H, W, variant H, W);
    # K (a phase's taps x C_in) >= 32 and C_out >= 16, as the skill requires. The interpreter's
    # time is programs x steps, a step a tap's block of 16 channels: 8 channels (one partial
    # block a tap) where the case is about its taps, 17 or 33 (a partial second or third
    # block) where several blocks a tap are the point
    "k4-stride2-pad1": (17, 17, 4, 2, 1, 0, True, 5, 6, 4, 3),  # 4 taps a phase, 2 blocks
    "k3-stride1": (8, 17, 3, 1, 0, 0, False, 6, 5, 3, 4),  # one phase: a flipped convolution
    # phases of 4, 2 and 1 taps; K = 8 x 2 x 2 = 32
    "k3-stride2-outpad1": (8, 18, 3, 2, 1, 1, True, 4, 5, 3, 3),
    # 2 or 1 taps a side; K = 8 x 2 x 2 = 32
    "k5-stride3-pad2-outpad2": (8, 32, 5, 3, 2, 2, True, 3, 4, 2, 5),
    # phases with no tap: the bias alone; K = 33 x 1 tap: 3 blocks, the last partial
    "k1-stride2": (33, 18, 1, 2, 0, 1, True, 3, 4, 2, 2),
    "mixed": (8, 24, (3, 4), (2, 1), (1, 0), (1, 0), True, 4, 5, 3, 4),  # K = 8 x 2 x 4 = 64
    "narrow-out": (9, 20, 3, 1, 1, 0, True, 5, 6, 4, 3),  # C_out 20: a full and a partial block
    "one-tap-phases": (33, 16, 2, 2, 0, 0, True, 4, 5, 3, 3),  # K = 33: one tap a phase
}


def transposed_task(case: str) -> str:
    cin, cout, k, stride, padding, out_pad, bias, h, w, h2, w2 = TRANSPOSED_CASES[case]
    return TRANSPOSED.format(cin=cin, cout=cout, k=k, stride=stride, padding=padding,
                             out_pad=out_pad, bias=bias, h=h, w=w, h2=h2, w2=w2)


@pytest.mark.parametrize("case", sorted(TRANSPOSED_CASES))
def test_transposed_convolution_by_phases_matches_float64(check_launches, case: str) -> None:
    """A transposed convolution, its bias, LeakyReLU and a per-channel scale: the NHWC copy,
    then one kernel over every output phase; strides 1-3, kernels smaller and larger than the
    stride, output padding, partial channel blocks, input variants of other sizes."""
    runs = check_launches(
        transposed_task(case),
        skills=("conv-transposed-implicit-gemm",),
        params=SMALL,
        reference="float64",
        policy="fp32",
    )
    assert [launched for _, launched in runs] == [["_nhwc_copy_kernel", "conv_0_kernel"] * 2]


DILATED_TRANSPOSED = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d({cin}, {cout}, {k}, stride={stride}, padding={padding},
                                     output_padding={out_pad}, dilation={dilation}, bias=True)
    def forward(self, x):
        return torch.relu(self.up(x)) + 0.25
def get_inputs():
    return [torch.randn(2, {cin}, 3, 4)]
def get_input_variants():
    return [[torch.randn(1, {cin}, 2, 3)]]
def get_init_inputs():
    return []
"""

# name: (C_in, C_out, kernel, stride, padding, output padding, dilation); the phases of stride
# and dilation sharing a factor (gcd 2: half the phases read no tap at all), coprime ones (a
# modular inverse picks each phase's first tap), dilation without a stride, mixed per dimension.
# 8 channels (one block a tap) where K = 8 x a phase's taps reaches 32: stride2-dilation3's
# 2 x 2 taps, mixed's 3 x 2. stride2-dilation2's 16 output channels are one block (4 phases
# of 3 x 3 taps: the cost is in its steps); the others' 17 to 34 take two or three
DILATED_TRANSPOSED_CASES = {
    "stride2-dilation2": (8, 16, 3, 2, 1, 1, 2),
    "stride3-dilation2": (33, 34, 4, 3, 2, 0, 2),
    "stride2-dilation3": (8, 32, 3, 2, 0, 1, 3),
    "stride1-dilation3": (17, 17, 3, 1, 2, 0, 3),
    "mixed": (8, 24, (3, 5), (2, 3), (1, 2), (1, 0), (2, 4)),
}


def _marked_slow(cases: dict[str, Any], slow: set[str]) -> list[Any]:
    """``cases``' names in order, those in ``slow`` marked slow (left out of the default test
    command: a case beside them takes the same path at a fraction of the interpreter's time)."""
    return [pytest.param(c, marks=pytest.mark.slow) if c in slow else c for c in sorted(cases)]


# stride3-dilation2's coprime phases: stride2-dilation3's path
@pytest.mark.parametrize("case", _marked_slow(DILATED_TRANSPOSED_CASES, {"stride3-dilation2"}))
def test_dilated_transposed_convolution_by_phases_matches_float64(check, case: str) -> None:
    cin, cout, k, stride, padding, out_pad, dilation = DILATED_TRANSPOSED_CASES[case]
    body = DILATED_TRANSPOSED.format(cin=cin, cout=cout, k=k, stride=stride, padding=padding,
                                     out_pad=out_pad, dilation=dilation)
    (src,) = check(body, skills=("conv-transposed-implicit-gemm",), params=SMALL,
                   reference="float64", policy="fp32")
    assert "torch.ops.aten.convolution" not in src


def test_transposed_convolution_bf16_operands(check) -> None:
    # one tap a phase (4 phases), K = 33 in 3 blocks: the fewest steps of the strided cases
    (src,) = check(transposed_task("one-tap-phases"), skills=("conv-transposed-implicit-gemm",),
                   params=SMALL, dtype="bfloat16", tol=3e-2)
    assert "w_in = w_in.permute(1, 2, 3, 0).contiguous()" in src
    assert "torch.ops.aten.convolution" not in src


@pytest.mark.parametrize("layout", [0, 2])
def test_a_transposed_convolution_on_the_vendor_path(check, layout: int) -> None:
    """cuDNN's transposed convolution (its flag and output padding passed on), then the
    epilogue kernel, NCHW or channels-last."""
    (src,) = check(transposed_task("k3-stride2-outpad1"), skills=("conv-vendor",),
                   params={**WIDE, "CHANNELS_LAST": layout})
    assert "True, [1, 1], 1" in src and "tl.dot" not in src


CONV3D = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.{kind}({cin}, {cout}, {k}, stride={stride}, padding={padding}{extra})
        self.gamma = nn.Parameter(torch.rand({cout}, 1, 1, 1) + 0.5)
    def forward(self, x):
        return torch.tanh(self.conv(x)) * self.gamma
def get_inputs():
    return [torch.randn(2, {cin}, {d}, {h}, {w})]
def get_input_variants():
    return [[torch.randn(1, {cin}, {d2}, {h2}, {w2})]]
def get_init_inputs():
    return []
"""

CONV3D_CASES = {
    # name: (kind, C_in, C_out, kernel, stride, padding, extra, D, H, W, variant D, H, W);
    # K >= 64 taps and C_out >= 32 as the skills require
    "conv-3x3x3": ("Conv3d", 3, 33, 3, 1, 1, "", 4, 5, 6, 3, 4, 3),
    "conv-mixed-stride2": ("Conv3d", 5, 32, (3, 2, 3), (2, 1, 2), (1, 0, 1), ", dilation=(1, 2, 1)",
                           5, 6, 7, 4, 5, 5),
    "transposed-k3-stride2": ("ConvTranspose3d", 5, 33, 3, 2, 1, ", output_padding=1",
                              3, 4, 3, 2, 3, 2),
    "transposed-k4-mixed": ("ConvTranspose3d", 11, 32, (4, 3, 2), (2, 1, 2), (1, 1, 0), "",
                            2, 3, 4, 3, 2, 2),
}


def conv3d_task(case: str) -> str:
    kind, cin, cout, k, stride, padding, extra, d, h, w, d2, h2, w2 = CONV3D_CASES[case]
    return CONV3D.format(kind=kind, cin=cin, cout=cout, k=k, stride=stride, padding=padding,
                         extra=extra, d=d, h=h, w=w, d2=d2, h2=h2, w2=w2)


# conv-3x3x3: conv-mixed-stride2's path (one implicit GEMM over NDHWC); transposed-k3-stride2:
# transposed-k4-mixed's (one implicit GEMM per phase)
@pytest.mark.parametrize("case", _marked_slow(CONV3D_CASES,
                                              {"conv-3x3x3", "transposed-k3-stride2"}))
def test_3d_convolutions_channels_last_match_float64(check_launches, case: str) -> None:
    """3-D convolutions (NDHWC copies, K in the order (kd, kh, kw, c)) and transposed ones (one
    implicit GEMM per output phase), their bias, tanh and a per-channel scale: strides, padding,
    dilation and output padding per dimension, input variants of other sizes."""
    skill = ("conv-transposed-implicit-gemm" if CONV3D_CASES[case][0].startswith("ConvT")
             else "conv-implicit-gemm")
    runs = check_launches(conv3d_task(case), skills=(skill,), params=SMALL,
                          reference="float64", policy="fp32")
    assert [launched for _, launched in runs] == [["_nhwc_copy_kernel", "conv_0_kernel"] * 2]


DIRECT_3D_CASES = {
    # name: (kind, C_in, C_out, kernel, stride, padding, extra, D, H, W, variant D, H, W)
    # one group over 3 channels, a 3 x 3 x 1 filter (27 taps a value)
    "one-group-3x3x1": ("Conv3d", 3, 20, (3, 3, 1), 1, 0, "", 4, 5, 6, 3, 4, 3),
    # three groups of 2 input and 4 output channels (54 taps), strided and dilated
    "groups3-strided": ("Conv3d", 6, 12, 3, (1, 2, 1), 1, ", dilation=(2, 1, 1), groups=3",
                        5, 5, 4, 5, 4, 3),
}


@pytest.mark.parametrize("case", sorted(DIRECT_3D_CASES))
def test_3d_convolutions_of_few_taps_in_one_direct_kernel(check_launches, case: str) -> None:
    """The direct kernel in 3-D: a depth loop over the taps, positions along the innermost
    output dimension, NCDHW read as given; one group or several."""
    kind, cin, cout, k, stride, padding, extra, d, h, w, d2, h2, w2 = DIRECT_3D_CASES[case]
    task = CONV3D.format(kind=kind, cin=cin, cout=cout, k=k, stride=stride, padding=padding,
                         extra=extra, d=d, h=h, w=w, d2=d2, h2=h2, w2=w2)
    runs = check_launches(task, skills=("conv-direct",),
                          params={**WIDE, "WARPS": 4},
                          reference="float64", policy="fp32")
    assert [launched for _, launched in runs] == [["conv_0_kernel", "conv_0_kernel"]]


@pytest.mark.parametrize("layout", [0, 1])
def test_a_3d_convolution_on_the_vendor_path(check, layout: int) -> None:
    """cuDNN's 3-D convolution then the epilogue kernel, which reads NCDHW or NDHWC output."""
    (src,) = check(conv3d_task("transposed-k3-stride2"), skills=("conv-vendor",),
                   params={**WIDE, "CHANNELS_LAST": 2 * layout})
    assert "[2, 2, 2], [1, 1, 1], [1, 1, 1], True, [1, 1, 1], 1" in src
    assert ("channels_last_3d" in src) == bool(layout)


GROUPED_TRANSPOSED = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.{kind}({cin}, {cout}, {k}, stride={stride}, padding={padding}{extra},
                            groups={groups}, bias=True)
    def forward(self, x):
        return F.gelu(self.up(x)) * 0.5
def get_inputs():
    return [torch.randn(2, {cin}, {size})]
def get_input_variants():
    return [[torch.randn(1, {cin}, {size2})]]
def get_init_inputs():
    return []
"""

GROUPED_TRANSPOSED_CASES = {
    # name: (kind, C_in, C_out, kernel, stride, padding, extra, groups, size, variant size);
    # 16 output channels a group (a tile's columns in one group), K = C_in/G x a phase's taps
    # >= 32 (a step a tap: 3-D kernels of few taps a phase)
    "groups2-outpad": ("ConvTranspose2d", 18, 32, 3, 2, 1, ", output_padding=1", 2, "4, 5",
                       "3, 3"),
    # KernelBench level-1 75's geometry, smaller: stride (2, 3), dilation (2, 1), 4 groups
    "groups4-dilated": ("ConvTranspose2d", 32, 64, (3, 5), (2, 3), (1, 2), ", dilation=(2, 1)",
                        4, "3, 4", "2, 3"),
    # K = 8 x (2 x 2 x 1) taps
    "groups2-3d": ("ConvTranspose3d", 16, 32, (3, 3, 2), 2, 1, "", 2, "2, 3, 3", "3, 2, 2"),
    # groups of fewer than 16 output channels: one product over a block-diagonal weight;
    # KernelBench level-1 72's geometry, smaller (4 groups of 8, an asymmetric kernel, stride 2;
    # K = 4 groups x 2 channels x (2 x 1 x 2) taps = 32)
    "groups4-of-8-3d": ("ConvTranspose3d", 8, 32, (3, 2, 3), 2, (1, 0, 1),
                        ", output_padding=1", 4, "2, 3, 4", "3, 2, 2"),
    "groups2-of-10": ("ConvTranspose2d", 12, 20, 3, 2, 1, "", 2, "4, 5", "3, 3"),
}


@pytest.mark.parametrize("case", sorted(GROUPED_TRANSPOSED_CASES))
def test_grouped_transposed_convolutions_by_phases_match_float64(check_launches,
                                                                 case: str) -> None:
    """A grouped transposed convolution: each tile's columns in one group, whose input
    channels it reads; the weight regrouped to [C_out, taps, C_in / G]; 2-D, dilated and 3-D.
    Groups of no multiple of 16 output channels: the weight made block-diagonal."""
    kind, cin, cout, k, stride, padding, extra, groups, size, size2 = (
        GROUPED_TRANSPOSED_CASES[case])
    task = GROUPED_TRANSPOSED.format(kind=kind, cin=cin, cout=cout, k=k, stride=stride,
                                     padding=padding, extra=extra, groups=groups, size=size,
                                     size2=size2)
    runs = check_launches(task, skills=("conv-transposed-implicit-gemm",), params=SMALL,
                          reference="float64", policy="fp32")
    assert [launched for _, launched in runs] == [["_nhwc_copy_kernel", "conv_0_kernel"] * 2]
