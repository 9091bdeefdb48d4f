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
              last block of each tap with zeros; with ``TMA`` 1 (2-D, stride 1) a tile is
              ``BLOCK_H x BLOCK_W`` positions of one image and each step's blocks are boxes
              the tensor memory accelerator copies (:func:`implicit_gemm_tma_kernel`)
    transposed
              a transposed convolution, one implicit GEMM per output phase: positions with
              the same (oh % stride_h, ow % stride_w) read the same taps (kh = kh0 + t
              stride_h, reading input row ih0 - t), so a phase is a forward convolution over
              the input with ceil(KH / stride_h) x ceil(KW / stride_w) taps; its K loop is the
              channels-last one, and each row's output position is mapped back into NCHW for
              the epilogue's store. Dilated taps (:func:`phase_taps`): a phase's taps are
              every stride_h / g-th (g = gcd(stride_h, dil_h)), reading every dil_h / g-th
              input row back, and a phase none divides has none. Grouped, a tile's columns
              lie in one group (BLOCK_N divides C_out / G) and read that group's channels
    direct    a grouped (depthwise) convolution, or one of one group over a shallow input, on
              CUDA cores: each output value sums its group's C_in / G x KH x KW taps, a
              ``[BLOCK_M]`` column of input values (one per position, gathered at that tap)
              times a ``[BLOCK_N]`` row of weights (one per channel) at a time, in fp32; the
              input channel of column n is its group's (n // (C_out / G)) * (C_in / G) plus
              the tap's (one group: the same for every column, so the column is loaded once).
              Each value is a few taps (a depthwise 3x3 has 9, a 3 x 3 x 3 filter over an
              image's 3 channels 81): too few for tensor-core tiles
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

import math

from kernelwright.design.families.conv.epilogue import ConvEpilogue
from kernelwright.design.kernel.common import Code, signature
from kernelwright.design.kernel.emitter import KernelArgs

CONSTS = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "INDEX_64"]


def spatial(nsp: int) -> list[str]:
    """The spatial dimensions' letters, outermost first: H, W (2-D) or D, H, W (3-D)."""
    return ["D", "H", "W"][3 - nsp :]


def geometry(nsp: int, dilation: bool = True) -> list[str]:
    """The kernels' constexpr geometry: sizes, strides, padding (and dilation) per dimension."""
    dims = spatial(nsp)
    kinds = ["K", "STRIDE_", "PAD_"] + (["DIL_"] if dilation else [])
    return [f"{k}{d}" for k in kinds for d in dims]


def _unflatten(flat: str, sizes: list[str]) -> list[str]:
    """Expressions of the indices of a flat index over ``sizes`` (outermost first): the first
    without a modulus, the last without a division."""
    out = []
    for i, size in enumerate(sizes):
        inner = sizes[i + 1 :]
        expr = flat
        if inner:
            divisor = inner[0] if len(inner) == 1 else f"({' * '.join(inner)})"
            expr = f"{flat} // {divisor}"
        if i > 0:
            expr = f"{expr} % {size}"
        out.append(expr)
    return out


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
    consts = [*CONSTS, *geometry(2), "DOT_PRECISION"]
    return "\n".join(signature(name, args, consts) + body.lines), args


def implicit_gemm_nhwc_kernel(epi: ConvEpilogue, name: str) -> tuple[str, KernelArgs]:
    """The implicit-GEMM kernel on a channels-last (NHWC or NDHWC) input and a ``[C_out, KH,
    KW, C_in]`` (``[C_out, KD, KH, KW, C_in]``) weight, K in the order (taps, c); its source
    and its arguments, in order."""
    nsp = epi.spec.nsp
    dims = spatial(nsp)
    sizes = ("M", "N", "K", "C_in", *dims, *(f"O{d}" for d in dims))
    args, x, w, body = _patch_kernel(epi, sizes, "the gathers below need no row mask",
                                     channels_last=True)
    _channel_steps(body, x, w, dims, " * ".join(f"K{d}" for d in dims), [
        "# one loop over (tap, block of channels), which Triton pipelines as one: a tap's",
        "# channels are contiguous, so a step loads whole rows of the patch block (one mask a",
        "# row, the padding's) and whole rows of the filter block, both K-major",
    ])
    tap_index = _unflatten("tap", [f"K{d}" for d in dims])
    for i, d in enumerate(dims):
        why = f"  # [BLOCK_M] (K{dims[-1]} constexpr: a division by a constant)" if i == 0 else ""
        body.add(f"    i{d.lower()} = i{d.lower()}0 + {tap_index[i]} * DIL_{d}{why}")
    bounds = " & ".join(f"(i{d.lower()} >= 0) & (i{d.lower()} < {d})" for d in dims)
    body.add("    # taps in the padding (outside the input) read zeros", f"    inside = {bounds}")
    _multiply_rows(body, dims, "tap", "c_ok[None, :]")
    epi.write(args, body)
    consts = [*CONSTS, *geometry(nsp), "DOT_PRECISION"]
    return "\n".join(signature(name, args, consts) + body.lines), args


def implicit_gemm_tma_kernel(epi: ConvEpilogue, name: str) -> tuple[str, KernelArgs]:
    """The channels-last implicit GEMM of a 2-D convolution of stride 1 with
    tensor-memory-accelerator loads; its source and its arguments, in order.

    A tile's rows are ``BLOCK_H x BLOCK_W`` output positions of one image (not a run of the
    flat index), so each step's patch block is one box of the NHWC input: rows ``ih0 + kh *
    DIL_H`` on, columns ``iw0 + kw * DIL_W`` on, a block of channels, copied to shared memory
    by the TMA unit; rows, columns and channels outside the input (the padding, a channel
    block's tail) read as zeros. The filter block is a ``[BLOCK_N, 1, BLOCK_K]`` box of the
    ``[C_out, taps, C_in]`` weight. No per-element address or mask arithmetic in the loop."""
    args = KernelArgs()
    args.pointers += [("x_desc", "x_desc"), ("w_desc", "w_desc")]
    args.spans.update(x_desc="x_in", w_desc="w_in")
    for s in ("N", "C_in", "OH", "TILES", "TILES_H", "TILES_W"):
        args.scalar(s, s)
    # the width's alignment at capture: rows of 126 positions still store 2 values at a time
    args.scalar("OW", "OW", epi.spec.node.out.hint[-1])
    body = Code()
    body.indent()
    _grouped_order(body, "TILES  # tiles of positions: TILES_H x TILES_W an image")
    body.add(
        "# ---- the tile: BLOCK_H x BLOCK_W output positions of one image x BLOCK_N channels",
        "img = pid_m // (TILES_H * TILES_W)",
        "t = pid_m % (TILES_H * TILES_W)",
        "oh0 = t // TILES_W * BLOCK_H",
        "ow0 = t % TILES_W * BLOCK_W",
        "n0 = pid_n * BLOCK_N",
        "acc = tl.zeros([BLOCK_H * BLOCK_W, BLOCK_N], dtype=tl.float32)",
        "# one loop over (tap, block of channels), which Triton pipelines as one",
        "c_blocks = tl.cdiv(C_in, BLOCK_K)",
        "for step in range(0, KH * KW * c_blocks):",
        "    tap = step // c_blocks",
        "    c0 = (step - tap * c_blocks) * BLOCK_K",
        "    # the tap's box of the input: the tile's corner shifted by the tap (stride 1); rows",
        "    # and columns past either edge are the padding, read as zeros",
        "    ih = oh0 - PAD_H + tap // KW * DIL_H",
        "    iw = ow0 - PAD_W + tap % KW * DIL_W",
        "    patch = x_desc.load([img, ih, iw, c0]).reshape(BLOCK_H * BLOCK_W, BLOCK_K)",
        "    filt = w_desc.load([n0, tap, c0]).reshape(BLOCK_N, BLOCK_K)",
        "    acc = tl.dot(patch, filt.T, acc, input_precision=DOT_PRECISION)",
        "# ---- rows as the image's positions (oh, ow), runs of BLOCK_W contiguous ones (so",
        "# the NCHW store is vectors), the image a scalar; positions past the image's last row",
        "# or column are masked (their indices alias other positions)",
        "r = tl.arange(0, BLOCK_H * BLOCK_W)",
        "oh = oh0 + r // BLOCK_W",
        "ow = ow0 + r % BLOCK_W",
        "inside = (oh < OH) & (ow < OW)",
        "offs_m = oh * OW + ow",
        "if INDEX_64:  # 2^31 output elements or more: the image's offset in 64 bits",
        "    img = img.to(tl.int64)",
        "offs_n = n0 + tl.arange(0, BLOCK_N)",
    )
    epi.per_image().write(args, body, row_mask="inside[:, None]")
    consts = ["BLOCK_H", "BLOCK_W", "BLOCK_N", "BLOCK_K", "GROUP_M", "INDEX_64",
              *(c for c in geometry(2) if not c.startswith("STRIDE_")), "DOT_PRECISION"]
    return "\n".join(signature(name, args, consts) + body.lines), args


def phase_taps(stride: int, dilation: int) -> tuple[int, int, int, int]:
    """How a transposed convolution's phases read dilated taps along one dimension: (g, the tap
    step, the input step, the inverse). Output index o = p + q * stride reads tap k at input
    index (o + pad - k * dilation) / stride where that divides, i.e. where k * dilation = p +
    pad modulo stride. With g = gcd(stride, dilation) that holds only for phases whose p + pad
    is a multiple of g, at k = k0 + t * (stride / g) with k0 = (p + pad) / g * inverse modulo
    stride / g (the inverse of dilation / g modulo stride / g), reading input index i0 - t *
    (dilation / g); where stride / g is 1 every tap is a phase's and k0 is 0. Undilated: g = 1,
    steps stride and 1."""
    g = math.gcd(stride, dilation)
    step = stride // g
    return g, step, dilation // g, pow(dilation // g, -1, step) if step > 1 else 0


def transposed_kernel(epi: ConvEpilogue, name: str) -> tuple[str, KernelArgs]:
    """The transposed convolution's kernel, one implicit GEMM per output phase (grid axis 1) on
    a channels-last input and a ``[C_out, (KD,) KH, KW, C_in]`` weight; its source and its
    arguments, in order."""
    nsp = epi.spec.nsp
    dims = spatial(nsp)
    low = [d.lower() for d in dims]
    args = KernelArgs()
    x = args.pointer("x_in")
    w = args.pointer("w_in")
    xm = epi.graph.meta(epi.spec.x)
    c_in = xm.hint[1]
    grouped = epi.spec.groups != 1
    sizes = ["M", "N", "K", "MP", "C_in", *dims, *(f"O{d}" for d in dims), *(f"Q{d}" for d in dims)]
    if grouped:
        sizes += ["CPG", "OPG"]
    for s in sizes:
        args.scalar(s, s, c_in if s == "C_in" else None)
    for s, seen in _nhwc_strides(xm.hint).items():
        args.scalar(s, s, seen)
    body = Code()
    body.indent()
    phase = _unflatten("phase", [f"STRIDE_{d}" for d in dims])
    body.add(
        "# ---- this program's phase (output positions with the same index modulo the stride",
        "# along each dimension, which read the same taps) and its tile of the phase's MP",
        "# positions",
        "phase = tl.program_id(1)",
        *(f"p{d} = {e}" for d, e in zip(low, phase, strict=True)),
    )
    _tile_head(body, rows="MP")
    q = _unflatten("q", [f"Q{d}" for d in dims])
    span = " * ".join(f"Q{d}" for d in dims)
    body.add(
        "# rows past MP read row 0 (their results are not stored), so the gathers below need",
        "# no row mask",
        "safe_m = tl.where(offs_m < MP, offs_m, 0)",
        f"img = safe_m // ({span})",
        f"q = safe_m % ({span})",
    )
    for i, (d, dl) in enumerate(zip(dims, low, strict=True)):
        body.add(f"o{dl} = p{dl} + {q[i]} * STRIDE_{d}"
                 + ("  # [BLOCK_M] the rows' output positions" if i == 0 else ""))
    spec = epi.spec
    steps = [phase_taps(s, d) for s, d in zip(spec.stride, spec.dilation, strict=True)]
    if all(d == 1 for d in spec.dilation):
        body.add(
            f"# output index o{low[0]} reads input index (o{low[0]} + PAD_{dims[0]} - k) / "
            f"STRIDE_{dims[0]} of tap k where that",
            f"# divides: the phase's taps are k0, k0 + STRIDE_{dims[0]}, ..., and its t-th reads "
            f"i{low[0]}0 - t",
        )
        for d, dl in zip(dims, low, strict=True):
            body.add(f"k{dl}0 = (p{dl} + PAD_{d}) % STRIDE_{d}")
        for i, (d, dl) in enumerate(zip(dims, low, strict=True)):
            body.add(f"i{dl}0 = {q[i]} + (p{dl} + PAD_{d} - k{dl}0) // STRIDE_{d}")
    else:
        body.add(
            f"# output index o{low[0]} reads input index (o{low[0]} + PAD_{dims[0]} - k * "
            f"dilation) / STRIDE_{dims[0]} of tap k",
            "# where that divides: only phases whose p + PAD is a multiple of g = gcd(stride,",
            "# dilation) have taps, k0, k0 + stride / g, ..., and the t-th reads i0 - t *",
            "# dilation / g (k0: (p + PAD) / g times the inverse of dilation / g modulo",
            "# stride / g)",
        )
        for (d, dl), (g, step, _, inv), dil in zip(zip(dims, low, strict=True), steps,
                                                  spec.dilation, strict=True):
            lead = f"(p{dl} + PAD_{d})" if g == 1 else f"(p{dl} + PAD_{d}) // {g}"
            body.add(f"k{dl}0 = {lead} * {inv} % {step}  # dilation {dil}")
        for i, ((d, dl), dil) in enumerate(zip(zip(dims, low, strict=True), spec.dilation,
                                               strict=True)):
            body.add(f"i{dl}0 = {q[i]} + (p{dl} + PAD_{d} - k{dl}0 * {dil}) // STRIDE_{d}")
    if grouped:
        body.add(
            "# groups: a tile's columns lie in one group (BLOCK_N divides OPG), whose CPG input",
            "# channels it reads",
            "first_c = pid_n * BLOCK_N // OPG * CPG",
        )
    _channel_steps(body, x, w, dims, " * ".join(f"TAPS_{d}" for d in dims), [
        "# one loop over (tap of the phase, block of channels), pipelined as one; a tap's",
        "# channels are contiguous in both operands",
    ], channels="CPG" if grouped else "C_in", group="first_c" if grouped else "")
    t = _unflatten("tap", [f"TAPS_{d}" for d in dims])
    dilated = any(d != 1 for d in spec.dilation)
    for i, ((d, dl), (_, step, _, _)) in enumerate(zip(zip(dims, low, strict=True), steps,
                                                        strict=True)):
        along = str(step) if dilated else f"STRIDE_{d}"
        body.add(f"    t_{dl} = {t[i]}", f"    k{dl} = k{dl}0 + t_{dl} * {along}")
    tap_ok = " & ".join(f"(k{dl} < K{d})" for d, dl in zip(dims, low, strict=True))
    tap_ok += "".join(f" & ((p{dl} + PAD_{d}) % {g} == 0)"
                      for (d, dl), (g, _, _, _) in zip(zip(dims, low, strict=True), steps,
                                                       strict=True) if g > 1)
    bounds = " & ".join(f"(i{dl} >= 0) & (i{dl} < {d})" for d, dl in zip(dims, low, strict=True))
    filt = f"k{low[0]}"  # the tap's flat index in the weight, (kd * KH + kh) * KW + kw
    for d, dl in zip(dims[1:], low[1:], strict=True):
        filt = f"({filt} * K{d} + k{dl})"
    body.add(
        "    # a phase has fewer taps where the kernel is no multiple of the stride",
        f"    tap_ok = {tap_ok}",
        *(f"    i{dl} = i{dl}0 - t_{dl}" + (f" * {back}" if back != 1 else "")
          for dl, (_, _, back, _) in zip(low, steps, strict=True)),
        f"    inside = {bounds} & tap_ok  # [BLOCK_M]",
    )
    _multiply_rows(body, dims, filt, "c_ok[None, :] & tap_ok",
                   channels="CPG" if grouped else "C_in")
    inside = " & ".join(f"(o{dl} < O{d})" for d, dl in zip(dims, low, strict=True))
    flat = "img"
    for d, dl in zip(dims, low, strict=True):
        flat = f"({flat}) * O{d} + o{dl}" if flat != "img" else f"img * O{d} + o{dl}"
    body.add(
        "# the rows' flat output positions (image, spatial); rows past the phase's positions or",
        "# the output (a phase's last index where the output size is no multiple of the",
        "# stride) are M, which the epilogue's row mask drops",
        f"inside_out = (offs_m < MP) & {inside}",
        f"rows = tl.where(inside_out, {flat}, M)[:, None]",
        "cols = offs_n[None, :]",
    )
    epi.write(args, body, declare=False)
    consts = [*CONSTS, *geometry(nsp, dilation=False), *(f"TAPS_{d}" for d in dims),
              "DOT_PRECISION"]
    return "\n".join(signature(name, args, consts) + body.lines), args


def _channel_steps(body: Code, x: str, w: str, dims: list[str], taps: str,
                   note: list[str], channels: str = "C_in", group: str = "") -> None:
    """A channels-last kernel's operand bases and accumulator, then the head of its one loop
    over (``taps`` of a tap, block of ``BLOCK_K`` of a tap's ``channels``): ``tap``, channels
    ``c`` and their mask ``c_ok``. ``group``: the first input channel of the tile's group (a
    grouped convolution's), added to each row's base."""
    base = f"{x} + img * sx_n" + (f" + {group}" if group else "")
    body.add(
        f"x_base = {base}  # [BLOCK_M] each row's image"
        + (", the group's first channel" if group else ""),
        "safe_n = tl.where(offs_n < N, offs_n, 0)",
        f"w_base = {w} + safe_n[:, None] * K  # [BLOCK_N, 1]: the weight is "
        f"[C_out, {', '.join(f'K{d}' for d in dims)}, {channels}]",
        "offs_k = tl.arange(0, BLOCK_K)",
        "acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
        *note,
        f"c_blocks = tl.cdiv({channels}, BLOCK_K)",
        f"for step in range(0, {taps} * c_blocks):",
        "    tap = step // c_blocks",
        "    c = (step - tap * c_blocks) * BLOCK_K + offs_k  # [BLOCK_K] input channels",
        f"    c_ok = c < {channels}  # the last block of channels is partial: its tail reads "
        "zeros",
    )


def _multiply_rows(body: Code, dims: list[str], tap: str, filt_mask: str,
                   channels: str = "C_in") -> None:
    """A channels-last step's loads and product: the patch block's rows at the input indices
    ``i<d>`` (masked by ``inside``), the filter block's rows at the weight's tap ``tap`` (rows
    of ``channels`` a tap)."""
    offset = " + ".join(f"i{d.lower()} * sx_{d.lower()}" for d in dims)
    body.add(
        "    # channels have a unit stride in channels-last storage (the wrapper's copy)",
        f"    patch = x_base + {offset}",
        "    patch = tl.load(patch[:, None] + c[None, :], mask=inside[:, None] & c_ok[None, :],",
        "                    other=0.0)",
        f"    filt = tl.load(w_base + {tap} * {channels} + c[None, :],",
        f"                   mask={filt_mask}, other=0.0)",
        "    acc = tl.dot(patch, filt.T, acc, input_precision=DOT_PRECISION)",
    )


def direct_kernel(epi: ConvEpilogue, name: str) -> tuple[str, KernelArgs]:
    """The direct kernel (a grouped convolution, or one of one group with few taps a value);
    its source and its arguments, in order."""
    nsp = epi.spec.nsp
    dims = spatial(nsp)
    sizes = ("M", "N", *dims, *(f"O{d}" for d in dims), "CPG", "OPG")
    args, x, w, body = _patch_kernel(epi, sizes, "only the padding is masked below")
    one_group = epi.spec.groups == 1
    if one_group:
        body.add(
            "safe_n = tl.where(offs_n < N, offs_n, 0)  # columns past N read channel 0 (not "
            "stored)",
            "# one group: every column reads the same input channels, so a tap is one column of",
            "# BLOCK_M input values, shared by the BLOCK_N channels",
            f"x_base = {x} + img * sx_n  # [BLOCK_M]",
        )
    else:
        body.add(
            "safe_n = tl.where(offs_n < N, offs_n, 0)  # columns past N read channel 0 (not "
            "stored)",
            "# each column's first input channel: its group's (OPG output, CPG input channels a "
            "group)",
            f"x_base = {x} + img[:, None] * sx_n + (safe_n // OPG * CPG)[None, :] * sx_c",
        )
    taps = " * ".join(f"K{d}" for d in dims)
    body.add(
        f"w_base = {w} + safe_n * (CPG * {taps})  # [BLOCK_N]: the weight is contiguous "
        f"{'OIHW' if nsp == 2 else 'OIDHW'}",
        "acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
        "for c in range(0, CPG):",
    )
    indent = "    "
    for d in dims:
        a = d.lower()
        body.add(f"{indent}for k{a} in range(K{d}):",
                 f"{indent}    i{a} = i{a}0 + k{a} * DIL_{d}")
        indent += "    "
    inside = " & ".join(f"(i{d.lower()} >= 0) & (i{d.lower()} < {d})" for d in dims)
    offset = " + ".join(f"i{d.lower()} * sx_{d.lower()}" for d in dims)
    flat = "c"
    for d in dims:
        flat = f"({flat} * K{d} + k{d.lower()})"
    flat = flat[1:-1]  # the outermost parentheses
    body.add(f"{indent}# taps in the padding (outside the input) read zeros",
             f"{indent}inside = {inside}  # [BLOCK_M]")
    if one_group:
        body.add(f"{indent}tap = tl.load(x_base + c * sx_c + {offset},",
                 f"{indent}              mask=inside, other=0.0).to(tl.float32)[:, None]")
    else:
        body.add(f"{indent}tap = tl.load(x_base + c * sx_c + ({offset})[:, None],",
                 f"{indent}              mask=inside[:, None], other=0.0).to(tl.float32)")
    body.add(f"{indent}filt = tl.load(w_base + {flat}).to(tl.float32)",
             f"{indent}acc += tap * filt[None, :]")
    epi.write(args, body)
    consts = ["BLOCK_M", "BLOCK_N", "GROUP_M", "INDEX_64", *geometry(nsp)]
    return "\n".join(signature(name, args, consts) + body.lines), args


def vendor_epilogue_kernel(epi: ConvEpilogue, name: str) -> tuple[str, KernelArgs]:
    """The epilogue on a vendor convolution's output ``conv_out``, NCHW or NHWC (its strides per
    image, channel and output position); its source and its arguments, in order."""
    args = KernelArgs()
    y = args.pointer("conv_out")
    # positions an image (OH * OW), hinted with their value at capture: a modulus Triton knows
    # to be a multiple of 4 keeps runs of 4 positions contiguous, so NCHW reads vectorise (an
    # unknown one, 126 x 126 say, left every load scalar); NCHW's channel stride is the same
    positions = math.prod(epi.graph.meta(epi.spec.node.name).hint[2:])
    for s in ("M", "N"):
        args.scalar(s, s)
    args.scalar("P", " * ".join(f"O{d}" for d in spatial(epi.spec.nsp)), positions)
    args.scalar("sy_n", "sy_n")
    args.scalar("sy_c", "sy_c", positions)
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
    # NCHW stores lay the tile along positions (axis 0). Triton moves a 16-bit tile to that
    # layout before the epilogue's math (converting fewer bytes), where [1, N] per-channel
    # operands would load once per position a thread holds: there (ROW_VECTORS, set by the
    # wrapper for 16-bit outputs) they load as vectors. A 32-bit tile keeps the read's layout
    # for the math, where [1, N] loads are 16-byte vectors already (sm_90, triton 3.6: as [N]
    # vectors they split into scalars)
    epi.write(args, body, column_vectors="ROW_VECTORS")
    return "\n".join(
        signature(name, args, ["BLOCK_M", "BLOCK_N", "GROUP_M", "INDEX_64", "ROW_VECTORS"])
        + body.lines
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
    names = ("sx_n", "sx_c", *(f"sx_{d.lower()}" for d in spatial(epi.spec.nsp)))
    strides = dict(zip(names, xm.strides, strict=True))
    if channels_last:
        strides = _nhwc_strides(xm.hint)
    for s, seen in strides.items():
        args.scalar(s, s, seen)
    body = Code()
    body.indent()
    _tile_head(body)
    dims = spatial(epi.spec.nsp)
    out = [f"O{d}" for d in dims]
    span = " * ".join(out)
    body.add(
        f"# ---- the rows' output positions (image, {', '.join(f'o{d.lower()}' for d in dims)});"
        " rows past M read row 0 (their",
        f"# results are not stored), so {masked}",
        "safe_m = tl.where(offs_m < M, offs_m, 0)",
        f"img = safe_m // ({span})",
        f"pix = safe_m % ({span})",
    )
    for i, (d, index) in enumerate(zip(dims, _unflatten("pix", out), strict=True)):
        corner = "  # the patch's top-left corner in the input" if i == 0 else ""
        body.add(f"i{d.lower()}0 = {index} * STRIDE_{d} - PAD_{d}{corner}")
    return args, x, w, body


def _nhwc_strides(hint: tuple[int, ...]) -> dict[str, int]:
    """The strides of the wrapper's channels-last copy of an input of ``hint`` (N, C, spatial)
    at the capture's sizes (alignment hints): per image, then per spatial index (channels: 1)."""
    c_in, sizes = hint[1], hint[2:]
    strides = {"sx_n": c_in * math.prod(sizes)}
    for i, d in enumerate(spatial(len(sizes))):
        strides[f"sx_{d.lower()}"] = c_in * math.prod(sizes[i + 1 :])
    return strides


def _grouped_order(code: Code, row_blocks: str) -> None:
    """``pid_m`` and ``pid_n``: the program's row block (of ``row_blocks``) and column block of
    N, in grouped order."""
    code.add(
        "pid = tl.program_id(0)",
        f"n_m = {row_blocks}",
        "n_n = tl.cdiv(N, BLOCK_N)",
        "# grouped order: GROUP_M row blocks take turns on each column block, which stays in L2",
        "in_group = GROUP_M * n_n",
        "first_m = pid // in_group * GROUP_M",
        "group_m = tl.minimum(n_m - first_m, GROUP_M)",
        "pid_m = first_m + pid % in_group % group_m",
        "pid_n = pid % in_group // group_m",
    )


def _tile_head(code: Code, rows: str = "M") -> None:
    """The program's output tile in grouped order over ``rows`` tile rows x N columns."""
    _grouped_order(code, f"tl.cdiv({rows}, BLOCK_M)")
    code.add(
        "offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
        "offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
        "if INDEX_64:  # 2^31 elements or more: row offsets (and all derived from them) in 64 bits",
        "    offs_m = offs_m.to(tl.int64)",
    )
