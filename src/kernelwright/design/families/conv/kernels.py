"""The convolution kernels: output tiles of ``BLOCK_M`` positions x ``BLOCK_N`` channels, the
epilogue applied to the fp32 accumulator before the single NCHW store.

    implicit  an implicit GEMM: rows are output positions (image, oh, ow), columns output
              channels, K the filter taps in the order (c, kh, kw); each step of K gathers a
              ``[BLOCK_M, BLOCK_K]`` tile of input patches with pointer loads (taps in the
              padding read zeros) and loads a ``[BLOCK_N, BLOCK_K]`` tile of the weight, whose
              OIHW storage is already ``[C_out, K]`` with a unit stride along K; ``tl.dot``
              accumulates in fp32. Programs take tiles in grouped order (GROUP_M row blocks take
              turns on each column block, so a block of filters stays in L2 meanwhile).
    implicit, channels-last
              the same GEMM on an NHWC copy of the input and a ``[C_out, KH, KW, C_in]`` copy
              of the weight, K in the order (kh, kw, c): a step of K is one filter tap's block
              of ``BLOCK_K`` input channels, contiguous in memory for both operands, so the
              patch block loads as whole K-major rows (vectors, one padding mask a row) and
              its addresses are one ``[BLOCK_M]`` vector a step, not a ``[BLOCK_M, BLOCK_K]``
              grid of divisions; channel counts that are no multiple of ``BLOCK_K`` pad the
              last block of each tap with zeros
    transposed
              a transposed convolution, one implicit GEMM per output phase: positions with
              the same (oh % stride_h, ow % stride_w) read the same taps (kh = kh0 + t
              stride_h, reading input row ih0 - t), so a phase is a forward convolution over
              the input with ceil(KH / stride_h) x ceil(KW / stride_w) taps; its K loop is the
              channels-last one, and each row's output position is mapped back into NCHW for
              the epilogue's store
    direct    a grouped (depthwise) convolution on CUDA cores: each output value sums its
              group's C_in / G x KH x KW taps, a ``[BLOCK_M]`` column of input values (one per
              position, gathered at that tap) times a ``[BLOCK_N]`` row of weights (one per
              channel) at a time, in fp32; the input channel of column n is its group's
              (n // (C_out / G)) * (C_in / G) plus the tap's. Each value is a few taps (a
              depthwise 3x3 has 9): too few for tensor-core tiles
    vendor    the epilogue alone, on the output of PyTorch's convolution (cuDNN), NCHW or
              channels-last: the same tile loop and epilogue with the accumulator loaded
              instead of computed

Why (c, kh, kw): the weight is then read as stored, K-major, the layout Hopper's tensor cores
(wgmma) need for 32-bit operands, with no copy; and on an NCHW input the contiguous direction
is the output's ow (along M) whatever the K order, while kw innermost makes neighbouring taps
neighbouring addresses (x[c, ih, iw + kw * dil]), so one step's gathers touch few cache lines.
Channel-innermost (kh, kw, c) suits NHWC inputs, whose channels are contiguous; on NCHW it would
stride every tap by H x W. That is the channels-last variant's order, at the price of the copies
(each input value read and written once more, the weight permuted).

``DOT_PRECISION`` is ``tl.dot``'s input precision, chosen by the wrapper from the operands' dtype
and the caller's convolution policy (``launch.py``). ``INDEX_64``: the wrapper's flag for inputs
or outputs of 2^31 elements or more, where the row offsets are computed in 64 bits.
"""

from __future__ import annotations

from kernelwright.design.families.conv.epilogue import ConvEpilogue
from kernelwright.design.kernel.common import Code, signature
from kernelwright.design.kernel.emitter import KernelArgs

GEOMETRY = ["KH", "KW", "STRIDE_H", "STRIDE_W", "PAD_H", "PAD_W", "DIL_H", "DIL_W"]
CONSTS = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "INDEX_64"]


def implicit_gemm_kernel(epi: ConvEpilogue, name: str) -> tuple[str, KernelArgs]:
    """The implicit-GEMM kernel; its source and its arguments, in order."""
    args, x, w, body = _patch_kernel(epi, ("M", "N", "K", "C_in", "H", "W", "OH", "OW"),
                                     "the gathers below need no row mask")
    body.add(
        f"x_base = {x} + img * sx_n  # [BLOCK_M] each row's image",
        "safe_n = tl.where(offs_n < N, offs_n, 0)",
        f"w_base = {w} + safe_n[:, None] * K  # [BLOCK_N, 1]: the weight is [C_out, K], K-major",
        "offs_k = tl.arange(0, BLOCK_K)",
        "acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
        "for k in range(0, K, BLOCK_K):",
        "    kk = k + offs_k",
        "    k_mask = kk < K  # the last block of K is partial: its tail reads zeros",
        "    # the taps (c, kh, kw) of this block of K (KH, KW constexpr: divisions by constants)",
        "    kc = kk // (KH * KW)",
        "    kr = kk % (KH * KW)",
        "    ih = ih0[:, None] + (kr // KW * DIL_H)[None, :]  # [BLOCK_M, BLOCK_K]",
        "    iw = iw0[:, None] + (kr % KW * DIL_W)[None, :]",
        "    # taps in the padding (outside the input) read zeros",
        "    inside = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W) & k_mask[None, :]",
        "    patch = x_base[:, None] + kc[None, :] * sx_c + ih * sx_h + iw * sx_w",
        "    patch = tl.load(patch, mask=inside, other=0.0)",
        "    filt = tl.load(w_base + kk[None, :], mask=k_mask[None, :], other=0.0)",
        "    # filt.T is a view: the [BLOCK_K, BLOCK_N] operand stays K-major in shared memory",
        "    acc = tl.dot(patch, filt.T, acc, input_precision=DOT_PRECISION)",
    )
    epi.write(args, body)
    consts = [*CONSTS, *GEOMETRY, "DOT_PRECISION"]
    return "\n".join(signature(name, args, consts) + body.lines), args


def implicit_gemm_nhwc_kernel(epi: ConvEpilogue, name: str) -> tuple[str, KernelArgs]:
    """The implicit-GEMM kernel on a channels-last (NHWC) input and a ``[C_out, KH, KW, C_in]``
    weight, K in the order (kh, kw, c); its source and its arguments, in order."""
    args, x, w, body = _patch_kernel(epi, ("M", "N", "K", "C_in", "H", "W", "OH", "OW"),
                                     "the gathers below need no row mask", channels_last=True)
    body.add(
        f"x_base = {x} + img * sx_n  # [BLOCK_M] each row's image",
        "safe_n = tl.where(offs_n < N, offs_n, 0)",
        f"w_base = {w} + safe_n[:, None] * K  # [BLOCK_N, 1]: the weight is [C_out, KH, KW, C_in]",
        "offs_k = tl.arange(0, BLOCK_K)",
        "acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
        "# one loop over (tap, block of channels), which Triton pipelines as one: a tap's",
        "# channels are contiguous, so a step loads whole rows of the patch block (one mask a",
        "# row, the padding's) and whole rows of the filter block, both K-major",
        "c_blocks = tl.cdiv(C_in, BLOCK_K)",
        "for step in range(0, KH * KW * c_blocks):",
        "    tap = step // c_blocks",
        "    c = (step - tap * c_blocks) * BLOCK_K + offs_k  # [BLOCK_K] input channels",
        "    c_ok = c < C_in  # the last block of channels is partial: its tail reads zeros",
        "    ih = ih0 + tap // KW * DIL_H  # [BLOCK_M] (KW constexpr: a division by a constant)",
        "    iw = iw0 + tap % KW * DIL_W",
        "    # taps in the padding (outside the input) read zeros",
        "    inside = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)",
        "    # channels have a unit stride in NHWC storage (the wrapper's copy guarantees it)",
        "    patch = x_base + ih * sx_h + iw * sx_w",
        "    patch = tl.load(patch[:, None] + c[None, :], mask=inside[:, None] & c_ok[None, :],",
        "                    other=0.0)",
        "    filt = tl.load(w_base + tap * C_in + c[None, :], mask=c_ok[None, :], other=0.0)",
        "    acc = tl.dot(patch, filt.T, acc, input_precision=DOT_PRECISION)",
    )
    epi.write(args, body)
    consts = [*CONSTS, *GEOMETRY, "DOT_PRECISION"]
    return "\n".join(signature(name, args, consts) + body.lines), args


def transposed_kernel(epi: ConvEpilogue, name: str) -> tuple[str, KernelArgs]:
    """The transposed convolution's kernel, one implicit GEMM per output phase (grid axis 1) on
    a channels-last input and a ``[C_out, KH, KW, C_in]`` weight; its source and its
    arguments, in order."""
    args = KernelArgs()
    x = args.pointer("x_in")
    w = args.pointer("w_in")
    xm = epi.graph.meta(epi.spec.x)
    _, c_in, h, w_ = xm.hint
    for s in ("M", "N", "K", "MP", "C_in", "H", "W", "OH", "OW", "QH", "QW"):
        args.scalar(s, s, c_in if s == "C_in" else None)
    for s, seen in {"sx_n": c_in * h * w_, "sx_h": w_ * c_in, "sx_w": c_in}.items():
        args.scalar(s, s, seen)
    body = Code()
    body.indent()
    body.add(
        "# ---- this program's phase (output positions with the same oh % STRIDE_H and",
        "# ow % STRIDE_W, which read the same taps) and its tile of that phase's MP positions",
        "phase = tl.program_id(1)",
        "ph = phase // STRIDE_W",
        "pw = phase % STRIDE_W",
    )
    _tile_head(body, rows="MP")
    body.add(
        "# rows past MP read row 0 (their results are not stored), so the gathers below need",
        "# no row mask",
        "safe_m = tl.where(offs_m < MP, offs_m, 0)",
        "img = safe_m // (QH * QW)",
        "q = safe_m % (QH * QW)",
        "oh = ph + q // QW * STRIDE_H  # [BLOCK_M] the rows' output positions",
        "ow = pw + q % QW * STRIDE_W",
        "# output row oh reads input row (oh + PAD_H - kh) / STRIDE_H of tap kh where that",
        "# divides: the phase's taps are kh0, kh0 + STRIDE_H, ..., and tap t reads row ih0 - t",
        "kh0 = (ph + PAD_H) % STRIDE_H",
        "kw0 = (pw + PAD_W) % STRIDE_W",
        "ih0 = q // QW + (ph + PAD_H - kh0) // STRIDE_H",
        "iw0 = q % QW + (pw + PAD_W - kw0) // STRIDE_W",
        f"x_base = {x} + img * sx_n  # [BLOCK_M] each row's image",
        "safe_n = tl.where(offs_n < N, offs_n, 0)",
        f"w_base = {w} + safe_n[:, None] * K  # [BLOCK_N, 1]: the weight is [C_out, KH, KW, C_in]",
        "offs_k = tl.arange(0, BLOCK_K)",
        "acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
        "# one loop over (tap of the phase, block of channels), pipelined as one; a tap's",
        "# channels are contiguous in both operands",
        "c_blocks = tl.cdiv(C_in, BLOCK_K)",
        "for step in range(0, TAPS_H * TAPS_W * c_blocks):",
        "    tap = step // c_blocks",
        "    c = (step - tap * c_blocks) * BLOCK_K + offs_k  # [BLOCK_K] input channels",
        "    c_ok = c < C_in  # the last block of channels is partial: its tail reads zeros",
        "    t = tap // TAPS_W",
        "    u = tap % TAPS_W",
        "    kh = kh0 + t * STRIDE_H",
        "    kw = kw0 + u * STRIDE_W",
        "    # a phase has fewer taps where the kernel is no multiple of the stride",
        "    tap_ok = (kh < KH) & (kw < KW)",
        "    ih = ih0 - t",
        "    iw = iw0 - u",
        "    inside = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W) & tap_ok  # [BLOCK_M]",
        "    patch = x_base + ih * sx_h + iw * sx_w",
        "    patch = tl.load(patch[:, None] + c[None, :], mask=inside[:, None] & c_ok[None, :],",
        "                    other=0.0)",
        "    filt = tl.load(w_base + (kh * KW + kw) * C_in + c[None, :],",
        "                   mask=c_ok[None, :] & tap_ok, other=0.0)",
        "    acc = tl.dot(patch, filt.T, acc, input_precision=DOT_PRECISION)",
        "# the rows' flat output positions (image, oh, ow); rows past the phase's positions or",
        "# the output (a phase's last row or column where OH or OW is no multiple of the",
        "# stride) are M, which the epilogue's row mask drops",
        "inside_out = (offs_m < MP) & (oh < OH) & (ow < OW)",
        "rows = tl.where(inside_out, img * (OH * OW) + oh * OW + ow, M)[:, None]",
        "cols = offs_n[None, :]",
    )
    epi.write(args, body, declare=False)
    consts = [*CONSTS, "KH", "KW", "STRIDE_H", "STRIDE_W", "PAD_H", "PAD_W", "TAPS_H",
              "TAPS_W", "DOT_PRECISION"]
    return "\n".join(signature(name, args, consts) + body.lines), args


def direct_kernel(epi: ConvEpilogue, name: str) -> tuple[str, KernelArgs]:
    """The direct (grouped) kernel; its source and its arguments, in order."""
    args, x, w, body = _patch_kernel(epi, ("M", "N", "H", "W", "OH", "OW", "CPG", "OPG"),
                                     "only the padding is masked below")
    body.add(
        "safe_n = tl.where(offs_n < N, offs_n, 0)  # columns past N read channel 0 (not stored)",
        "# each column's first input channel: its group's (OPG output, CPG input channels a group)",
        f"x_base = {x} + img[:, None] * sx_n + (safe_n // OPG * CPG)[None, :] * sx_c",
        f"w_base = {w} + safe_n * (CPG * KH * KW)  # [BLOCK_N]: the weight is contiguous OIHW",
        "acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
        "for c in range(0, CPG):",
        "    for kh in range(KH):",
        "        ih = ih0 + kh * DIL_H",
        "        for kw in range(KW):",
        "            iw = iw0 + kw * DIL_W",
        "            # taps in the padding (outside the input) read zeros",
        "            inside = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)  # [BLOCK_M]",
        "            tap = tl.load(x_base + c * sx_c + (ih * sx_h + iw * sx_w)[:, None],",
        "                          mask=inside[:, None], other=0.0).to(tl.float32)",
        "            filt = tl.load(w_base + (c * KH + kh) * KW + kw).to(tl.float32)",
        "            acc += tap * filt[None, :]",
    )
    epi.write(args, body)
    consts = ["BLOCK_M", "BLOCK_N", "GROUP_M", "INDEX_64", *GEOMETRY]
    return "\n".join(signature(name, args, consts) + body.lines), args


def vendor_epilogue_kernel(epi: ConvEpilogue, name: str) -> tuple[str, KernelArgs]:
    """The epilogue on a vendor convolution's output ``conv_out``, NCHW or NHWC (its strides per
    image, channel and output position); its source and its arguments, in order."""
    args = KernelArgs()
    y = args.pointer("conv_out")
    # positions an image (OH * OW), hinted with their value at capture: a modulus Triton knows
    # to be a multiple of 4 keeps runs of 4 positions contiguous, so NCHW reads vectorise (an
    # unknown one, 126 x 126 say, left every load scalar); NCHW's channel stride is the same
    _, _, oh, ow = epi.graph.meta(epi.spec.node.name).hint
    for s in ("M", "N"):
        args.scalar(s, s)
    args.scalar("P", "OH * OW", oh * ow)
    args.scalar("sy_n", "sy_n")
    args.scalar("sy_c", "sy_c", oh * ow)
    args.scalar("sy_p", "sy_p")
    body = Code()
    body.indent()
    _tile_head(body)
    body.add(
        "# ---- the convolution's output tile, as the accumulator (a unit stride, which Triton",
        "# specialises on, along positions in NCHW and along channels in NHWC)",
        "img = offs_m // P",
        "pix = offs_m % P",
        "chan = offs_n",
        "if INDEX_64:",
        "    chan = chan.to(tl.int64)",
        "inside = (offs_m < M)[:, None] & (offs_n < N)[None, :]",
        f"acc = tl.load({y} + img[:, None] * sy_n + chan[None, :] * sy_c + pix[:, None] * sy_p,",
        "              mask=inside, other=0.0).to(tl.float32)",
    )
    epi.write(args, body)
    return "\n".join(
        signature(name, args, ["BLOCK_M", "BLOCK_N", "GROUP_M", "INDEX_64"]) + body.lines
    ), args


def _patch_kernel(epi: ConvEpilogue, sizes: tuple[str, ...], masked: str, *,
                  channels_last: bool = False) -> tuple[KernelArgs, str, str, Code]:
    """(arguments, the input's and weight's pointers, body so far) of a kernel that gathers
    input patches: the operands, ``sizes`` and the input's strides as arguments (a
    ``channels_last`` input's channel stride is 1, not an argument); the tile's head; each
    row's output position and its patch's top-left corner (``masked`` says what the rows'
    clamp to row 0 spares)."""
    args = KernelArgs()
    x = args.pointer("x_in")  # the wrapper's names for the operands as the kernel takes them
    w = args.pointer("w_in")
    xm = epi.graph.meta(epi.spec.x)
    for s in sizes:
        args.scalar(s, s, xm.hint[1] if s == "C_in" and channels_last else None)
    strides = dict(zip(("sx_n", "sx_c", "sx_h", "sx_w"), xm.strides, strict=True))
    if channels_last:  # the strides of the wrapper's NHWC copy at the capture's sizes
        _, c_in, h, w_ = xm.hint
        strides = {"sx_n": c_in * h * w_, "sx_h": w_ * c_in, "sx_w": c_in}
    for s, seen in strides.items():
        args.scalar(s, s, seen)
    body = Code()
    body.indent()
    _tile_head(body)
    body.add(
        "# ---- the rows' output positions (image, oh, ow); rows past M read row 0 (their",
        f"# results are not stored), so {masked}",
        "safe_m = tl.where(offs_m < M, offs_m, 0)",
        "img = safe_m // (OH * OW)",
        "pix = safe_m % (OH * OW)",
        "ih0 = pix // OW * STRIDE_H - PAD_H  # the patch's top-left corner in the input",
        "iw0 = pix % OW * STRIDE_W - PAD_W",
    )
    return args, x, w, body


def _tile_head(code: Code, rows: str = "M") -> None:
    """The program's output tile in grouped order over ``rows`` tile rows x N columns."""
    code.add(
        "pid = tl.program_id(0)",
        f"n_m = tl.cdiv({rows}, BLOCK_M)",
        "n_n = tl.cdiv(N, BLOCK_N)",
        "# grouped order: GROUP_M row blocks take turns on each column block, which stays in L2",
        "in_group = GROUP_M * n_n",
        "first_m = pid // in_group * GROUP_M",
        "group_m = tl.minimum(n_m - first_m, GROUP_M)",
        "pid_m = first_m + pid % in_group % group_m",
        "pid_n = pid % in_group // group_m",
        "offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
        "offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
        "if INDEX_64:  # 2^31 elements or more: row offsets (and all derived from them) in 64 bits",
        "    offs_m = offs_m.to(tl.int64)",
    )
