"""The flash-attention kernel: one program per ``BLOCK_M`` queries of one (batch, head), a loop
over ``BLOCK_N`` keys with an online softmax, so the ``M x N`` scores never reach memory.

    per key block    s = q k^T * scale (tl.dot, fp32 accumulation), masked to -inf where a key
                     is past N, above the diagonal (causal) or masked out; m_new = max(m, rowmax
                     s); p = exp(s - m_new); l = l * exp(m - m_new) + rowsum p;
                     acc = acc * exp(m - m_new) + p v (tl.dot). With ``SPLIT_KEYS`` the
                     blocks no query's row cuts (before the diagonal and before N) run first,
                     in a loop without the position masks, the others after, with them;
                     without it, one loop masks every block
    at the end       out = acc / l (0 for a row with every key masked, as torch's math kernel)

With ``TMA`` (Hopper) the key and value blocks are tensor-memory-accelerator loads of
``[1, 1, BLOCK_N, BLOCK_D]`` boxes of the operands as stored: no addresses in registers, and
keys past N and head dims past D read as zeros (the wrapper falls back to the pointer kernel
where a descriptor cannot describe an operand).

Scores are kept in the log2 domain (the scale folded with log2(e), ``exp2``). Causal programs
stop at the diagonal (key blocks wholly above it are never loaded) and run the longest rows
first. Head dims are padded to a power of two: the padding reads zeros, which add nothing to
``q . k`` and are not stored. Operands of any strides; grouped-query heads read key/value head
``h // KV_GROUP``. ``DOT_PRECISION`` is tl.dot's input precision, chosen by the wrapper from
the operands' dtype and the caller's matmul policy, exactly as for a GEMM; ``QK_PRECISION``,
the scores' product's, is the same but where TF32 is allowed, which the scores keep fp32
accuracy under (``launch.QK_NOTE``).
"""

from __future__ import annotations

from collections.abc import Iterable

from kernelwright.design.kernel.common import Code, signature
from kernelwright.design.kernel.emitter import KernelArgs

CONSTS = [
    "BLOCK_M",
    "BLOCK_N",
    "BLOCK_D",
    "BLOCK_DV",
    "HEAD_D",
    "HEAD_DV",
    "CAUSAL",
    "MASK",
    "QK_PRECISION",
    "DOT_PRECISION",
]
# MASK: what the mask operand is
MASK_NONE, MASK_BOOL, MASK_ADD = 0, 1, 2
LOG2E = 1.4426950408889634
# each operand's strides, by dimension: batch, head, query (m) or key (n) position, head dim (d)
STRIDES = {"q": "bhmd", "k": "bhnd", "v": "bhnd", "mask": "bhmn", "out": "bhmd"}


def attention_args(
    pointers: Iterable[str],
    scalars: Iterable[str],
    has_mask: bool,
    tma: bool = False,
    triangle: bool = False,
) -> KernelArgs:
    """An attention kernel's arguments, in order: the tensors (the mask and its causal flag
    after the value where the kernel reads a mask, and the flag of a whole lower triangle where
    ``triangle``), the scalars, then the strides of q, k, v, the mask and the output (``tma``:
    key and value descriptors instead of their pointers and strides)."""
    args = KernelArgs()
    for t in pointers:
        if t == "exact_flag" and not (has_mask and triangle):
            continue
        if t not in ("mask", "causal_flag") or has_mask:
            if tma and t in ("k", "v"):
                args.pointers.append((f"{t}_desc", f"{t}_desc"))
            else:
                args.pointer(t)
    for s in scalars:
        args.scalar(s, s)
    for t, dims in STRIDES.items():
        if (t != "mask" or has_mask) and not (tma and t in ("k", "v")):
            for d in dims:
                args.scalar(f"stride_{t}{d}", f"stride_{t}{d}")
    return args


def flash_kernel(
    name: str,
    has_mask: bool,
    split_keys: bool = True,
    positive_scale: bool = False,
    tma: bool = False,
    triangle: bool = False,
) -> tuple[str, KernelArgs]:
    """The kernel's source and its arguments, in order (``has_mask``: it reads a mask;
    ``split_keys``: the key blocks no row cuts run in a loop of their own, see ``_loop``;
    ``positive_scale``: the scale is known positive, see ``_step``; ``tma``: keys and values
    by tensor-memory-accelerator descriptors; ``triangle``: a boolean mask the wrapper found to
    be the whole lower triangle is not loaded, see ``_step``)."""
    triangle = triangle and has_mask
    args = attention_args(
        ("q", "k", "v", "mask", "causal_flag", "exact_flag", "out"),
        ("M", "N", "n_heads", "kv_group", "qk_scale"),
        has_mask,
        tma,
        triangle,
    )
    code = Code()
    code.indent()
    _program(code, has_mask, tma, triangle)
    fused = positive_scale and not has_mask
    if split_keys:
        _loop(code, has_mask, fused, tma, triangle)
    else:
        _one_loop(code, has_mask, fused, tma, triangle)
    _store(code)
    return "\n".join(signature(name, args, CONSTS) + code.lines), args


def _program(code: Code, has_mask: bool, tma: bool = False, triangle: bool = False) -> None:
    code.add(
        "# ---- this program's queries: one block of BLOCK_M rows of one (batch, head)",
        "n_m = tl.cdiv(M, BLOCK_M)",
        "pid = tl.program_id(0)",
        "pid_bh = pid // n_m  # the query blocks of one head are neighbours: its K, V stay in L2",
        "pid_m = pid % n_m",
        "if CAUSAL:  # the longest rows (most key blocks) first, the short ones fill the tail",
        "    pid_m = n_m - 1 - pid_m",
    )
    if has_mask:
        code.add(
            "# a boolean mask with no key past its query (the wrapper's flag): the causal",
            "# schedule, decided at run time",
            f"if MASK == {MASK_BOOL}:",
            "    mask_causal = tl.load(causal_flag_ptr) != 0",
        )
        if triangle:
            code.add(
                "    # the whole lower triangle (the second flag) masks nothing below the",
                "    # diagonal: it is not loaded at all",
                "    mask_exact = tl.load(exact_flag_ptr) != 0",
            )
        code.add("    pid_m = tl.where(mask_causal, n_m - 1 - pid_m, pid_m)")
    code.add(
        "off_b = (pid_bh // n_heads).to(tl.int64)",
        "off_h = pid_bh % n_heads",
        "off_kh = (off_h // kv_group).to(tl.int64)  # grouped-query heads share a K/V head",
        "off_h = off_h.to(tl.int64)",
        "offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
        "offs_n = tl.arange(0, BLOCK_N)",
        "offs_d = tl.arange(0, BLOCK_D)",
        "offs_dv = tl.arange(0, BLOCK_DV)",
        "m_mask = offs_m < M  # the last query block is partial",
        "# head dims padded to a power of two: the padding reads zeros (nothing added to q . k)",
        "d_mask = offs_d < HEAD_D",
        "dv_mask = offs_dv < HEAD_DV",
        "q_tile = q_ptr + off_b * stride_qb + off_h * stride_qh",
        "q_tile += offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd",
        "q = tl.load(q_tile, mask=m_mask[:, None] & d_mask[None, :], other=0.0)",
    )
    if tma:
        code.add(
            "# [BLOCK_N, BLOCK_D] keys and [BLOCK_N, BLOCK_DV] values a step, by descriptor:",
            "# box coordinates (batch, key/value head, first key, 0), 32-bit",
            "desc_b = pid_bh // n_heads",
            "desc_kh = pid_bh % n_heads // kv_group",
        )
    else:
        code.add(
            "k_tile = k_ptr + off_b * stride_kb + off_kh * stride_kh",
            "# [BLOCK_N, BLOCK_D] keys and [BLOCK_N, BLOCK_DV] values a step",
            "k_tile += offs_n[:, None] * stride_kn + offs_d[None, :] * stride_kd",
            "v_tile = v_ptr + off_b * stride_vb + off_kh * stride_vh",
            "v_tile += offs_n[:, None] * stride_vn + offs_dv[None, :] * stride_vd",
        )
    code.add(
        "# ---- online softmax state, fp32: running max and sum per row, unnormalised output",
        'm_i = tl.full([BLOCK_M], float("-inf"), tl.float32)',
        "l_i = tl.zeros([BLOCK_M], tl.float32)",
        "acc = tl.zeros([BLOCK_M, BLOCK_DV], tl.float32)",
        "# causal: key blocks wholly above the diagonal (past the last query) are skipped",
        "hi = N",
        "if CAUSAL:",
        "    hi = tl.minimum(N, (pid_m + 1) * BLOCK_M)",
    )
    if has_mask:
        code.add(
            f"if MASK == {MASK_BOOL}:",
            "    hi = tl.where(mask_causal, tl.minimum(N, (pid_m + 1) * BLOCK_M), N)",
        )


def _loop(
    code: Code, has_mask: bool, fused: bool = False, tma: bool = False, triangle: bool = False
) -> None:
    """Two loops over the key blocks: first those every query of the block sees whole (no key
    past N, none above the diagonal), with no masking of the scores; then the rest (the
    partial last block; under ``CAUSAL`` the blocks the diagonal crosses), masked. At 16-bit
    operands the tensor cores are fast enough that the element-wise work per score decides,
    and the mask is most of it in the blocks that need none."""
    if has_mask:
        code.add(
            "mask_tile = mask_ptr + off_b * stride_maskb + off_h * stride_maskh",
            "mask_tile += offs_m[:, None] * stride_maskm + offs_n[None, :] * stride_maskn",
        )
    if has_mask:  # the wrapper never passes CAUSAL with a mask
        code.add(
            "# key blocks wholly before the last key the schedule visits: the mask masks its",
            "# own diagonal, so only the end of the keys needs the position mask",
            "whole = hi // BLOCK_N * BLOCK_N",
        )
        if triangle:
            code.add(
                "# a whole lower triangle is not loaded: its diagonal blocks take the position",
                "# mask",
                f"if MASK == {MASK_BOOL}:",
                "    whole = tl.where(mask_exact, tl.minimum(whole, pid_m * BLOCK_M // BLOCK_N * "
                "BLOCK_N), whole)",
            )
    else:
        code.add(
            "# key blocks every query here sees whole: wholly before N and, causal, wholly",
            "# before the block's first query",
            "whole = N // BLOCK_N * BLOCK_N",
            "if CAUSAL:",
            "    whole = tl.minimum(whole, pid_m * BLOCK_M // BLOCK_N * BLOCK_N)",
        )
    code.add("for start_n in range(0, whole, BLOCK_N):")
    code.indent()
    _step(code, has_mask, edge=False, fused=fused, tma=tma, triangle=triangle)
    code.dedent()
    code.add("# the blocks the diagonal or the end of the keys cuts: masked", "for start_n in "
             "range(whole, hi, BLOCK_N):")
    code.indent()
    _step(code, has_mask, edge=True, fused=fused, tma=tma, triangle=triangle)
    code.dedent()


def _one_loop(
    code: Code, has_mask: bool, fused: bool = False, tma: bool = False, triangle: bool = False
) -> None:
    """One loop over every key block, each masked: half the loop code of ``_loop``, which the
    3xTF32 kernel at head dims past 64 needs (its two loops spilled 80 bytes at sm_90, 8 warps,
    32-key steps)."""
    if has_mask:
        code.add(
            "mask_tile = mask_ptr + off_b * stride_maskb + off_h * stride_maskh",
            "mask_tile += offs_m[:, None] * stride_maskm + offs_n[None, :] * stride_maskn",
        )
    code.add("for start_n in range(0, hi, BLOCK_N):")
    code.indent()
    _step(code, has_mask, edge=True, fused=fused, tma=tma, triangle=triangle)
    code.dedent()


def _step(
    code: Code,
    has_mask: bool,
    edge: bool,
    fused: bool = False,
    tma: bool = False,
    triangle: bool = False,
) -> None:
    """One key block of the online softmax (``edge``: keys past N or above the diagonal are
    masked to -inf; else the block has none). ``fused`` (no mask, a positive scale): the
    scale is applied to each row's largest raw score and, in the same multiply-add as the
    shift, to each score, one operation a score fewer; rounding is monotonic, so the scaled
    maximum is the maximum of the scaled scores. ``tma``: keys and values by descriptor
    (what lies past N or D reads as zeros). ``triangle``: where the mask is the whole lower
    triangle (the wrapper's second flag) it is not loaded: below the diagonal it masks
    nothing, on the diagonal the position mask stands in (a runtime branch: it holds both
    paths' registers, 164 bytes spilled at sm_90 for MinGPT's fp32 head dim 96 with pointer
    loads, none with ``tma``)."""
    n_mask = "n_mask[:, None] & " if edge else ""
    if edge or has_mask:
        code.add("cols = start_n + offs_n")
    if edge:
        code.add("n_mask = cols < N  # the last key block is partial")
    if tma:
        code.add("k = k_desc.load([desc_b, desc_kh, start_n, 0]).reshape(BLOCK_N, BLOCK_D)")
    else:
        code.add(
            f"k = tl.load(k_tile + start_n * stride_kn, mask={n_mask}d_mask[None, :], "
            "other=0.0)",
        )
    if fused:
        code.add(
            "# raw scores: qk_scale (scale * log2(e), positive) goes on each row's max and, in",
            "# one multiply-add with the shift, on each score (exp2 of the scaled scores is exp)",
            "s = tl.dot(q, tl.trans(k), input_precision=QK_PRECISION)",
        )
    else:
        code.add(
            "# scores in the log2 domain (qk_scale = scale * log2(e)): exp2 of them is exp",
            "s = tl.dot(q, tl.trans(k), input_precision=QK_PRECISION) * qk_scale",
        )
    if edge:
        code.add(
            "valid = n_mask[None, :]",
            "if CAUSAL:  # query i sees keys 0..i",
            "    valid = valid & (cols[None, :] <= offs_m[:, None])",
        )
    if has_mask and triangle:
        code.add("in_range = m_mask[:, None] & (cols < N)[None, :]")
        if edge:
            code.add(
                f"if MASK == {MASK_BOOL}:  # True: attend",
                "    if mask_exact:  # the whole lower triangle: query i sees keys 0..i",
                "        keep = cols[None, :] <= offs_m[:, None]",
                "    else:",
                "        keep = tl.load(mask_tile + start_n * stride_maskn, mask=in_range, "
                "other=0) != 0",
                "    valid = valid & keep",
            )
        else:
            code.add(
                f"if MASK == {MASK_BOOL}:  # True: attend; a whole lower triangle masks nothing",
                "    if not mask_exact:  # in these blocks, wholly below the diagonal",
                "        keep = tl.load(mask_tile + start_n * stride_maskn, mask=in_range, "
                "other=0)",
                '        s = tl.where(keep != 0, s, float("-inf"))',
            )
    elif has_mask:
        code.add(
            "in_range = m_mask[:, None] & (cols < N)[None, :]",
            f"if MASK == {MASK_BOOL}:  # True: attend",
            "    keep = tl.load(mask_tile + start_n * stride_maskn, mask=in_range, other=0)",
            "    " + ("valid = valid & (keep != 0)" if edge else "valid = keep != 0"),
        )
    if has_mask:
        code.add(
            f"if MASK == {MASK_ADD}:  # added to the scaled scores (-inf: masked out)",
            "    bias = tl.load(mask_tile + start_n * stride_maskn, mask=in_range, other=0.0)",
            f"    s += bias.to(tl.float32) * {LOG2E}",
        )
    if edge:
        code.add('s = tl.where(valid, s, float("-inf"))')
    elif has_mask and not triangle:
        code.add(
            f"if MASK == {MASK_BOOL}:",
            '    s = tl.where(valid, s, float("-inf"))',
        )
    code.add(
        "m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)" if fused
        else "m_new = tl.maximum(m_i, tl.max(s, 1))",
        "# a row with every key so far masked keeps a max of -inf: shift it by 0 (exp2(-inf) = 0)",
        'm_shift = tl.where(m_new == float("-inf"), 0.0, m_new)',
        "p = tl.math.exp2(s * qk_scale - m_shift[:, None])" if fused
        else "p = tl.math.exp2(s - m_shift[:, None])",
        "alpha = tl.math.exp2(m_i - m_shift)  # rescales what was summed under the old max",
        "l_i = l_i * alpha + tl.sum(p, 1)",
    )
    if tma:
        code.add("v = v_desc.load([desc_b, desc_kh, start_n, 0]).reshape(BLOCK_N, BLOCK_DV)")
    else:
        code.add(
            f"v = tl.load(v_tile + start_n * stride_vn, mask={n_mask}dv_mask[None, :], "
            "other=0.0)",
        )
    code.add(
        "acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=DOT_PRECISION)",
        "m_i = m_new",
    )


def _store(code: Code) -> None:
    code.add(
        "# ---- normalise and store once; a row with every key masked outputs 0 (torch's math",
        "# kernel), not 0 / 0",
        "l_safe = tl.where(l_i == 0.0, 1.0, l_i)",
        "out = acc / l_safe[:, None]",
        "o_tile = out_ptr + off_b * stride_outb + off_h * stride_outh",
        "o_tile += offs_m[:, None] * stride_outm + offs_dv[None, :] * stride_outd",
        "o_mask = m_mask[:, None] & dv_mask[None, :]",
        "tl.store(o_tile, out.to(out_ptr.dtype.element_ty), mask=o_mask)",
    )
