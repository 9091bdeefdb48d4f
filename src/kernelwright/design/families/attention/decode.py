"""Attention for a few queries (a decode step): the ``decode`` variant's kernels and wrapper.

With a few queries a (batch, head) the work is matrix-vector products that stream the keys and
values: memory-bound, so what matters is reading each key and value once (one program for all
the query rows that share a key/value head) and keeping enough loads in flight; the products
are computed in fp32 whatever the operands' dtype.

    decode kernel    one program per (batch, key/value head, block of ROWS query rows, key
                     split): the rows are the (query head, query) pairs that read this key/value
                     head (all queries of all the heads of a grouped-query group), so a block of
                     keys is loaded once for all of them; scores s = q . k for BLOCK_N keys a
                     row-step (sums over the head dim), the flash kernel's online softmax per
                     row, acc = acc * alpha + sum over keys of p v
    combine kernel   with several key splits: each row's partial (max, sum, acc) merged, scaled
                     to the largest max, and normalised once

On the CUDA cores (``DOT`` 0) rows share a key block as a [ROWS, keys, head dim] product, so a
step takes BLOCK_N // ROWS keys (the registers of one row's BLOCK_N); its sums over the head dim
cross threads, which costs more than the loads once several rows share them. With ``DOT`` 1 the
two products run on tensor cores as tl.dot over a block of 16 rows (padding past the group's
rows), BLOCK_N keys a step, in 3xTF32 (fp32 accuracy; TF32 where the caller allowed it).

Key splits (flash-decoding) give a short batch enough programs to fill the GPU: about
``SPLIT_PROGRAMS`` programs, each at least four key blocks; one split writes the output
directly. Causal rows stop at their query (top-left aligned, as torch's ``is_causal``); a
boolean or additive mask is read per row and key block.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelwright.design.families.attention import prelude
from kernelwright.design.families.attention.kernels import (
    LOG2E,
    MASK_ADD,
    MASK_BOOL,
    STRIDES,
    attention_args,
)
from kernelwright.design.families.attention.spec import AttentionSpec
from kernelwright.design.fusion import Group
from kernelwright.design.kernel.common import Code, RenderedKernel, launch, signature, wrap_words
from kernelwright.design.kernel.emitter import KernelArgs, safe_name

DECODE_DEFAULTS = {"BLOCK_N": 32, "ROWS": 8, "DOT": 1, "WARPS": 4, "SPLIT_PROGRAMS": 528}
CONSTS = [
    "ROWS", "BLOCK_N", "BLOCK_D", "BLOCK_DV", "HEAD_D", "HEAD_DV", "CAUSAL", "MASK", "SPLIT",
    "DOT", "QK_PRECISION", "DOT_PRECISION",
]
DOT_ROWS = 16  # tl.dot's least block of rows
NOTE = (
    "Both products in IEEE fp32 on the CUDA cores (operands converted to fp32): a decode step "
    "reads each key and value once, so the math is never the limit."
)
DOT_NOTE = (
    "Both products on tensor cores over blocks of 16 query rows (operands converted to fp32): "
    "3xTF32, as accurate as fp32, or for the values' product TF32 where the caller allowed it "
    "for matrix products (torch.backends.cuda.matmul.allow_tf32); fp32 accumulation."
)


def decode_kernel(name: str, has_mask: bool) -> tuple[str, KernelArgs]:
    """The decode kernel's source and its arguments, in order."""
    args = attention_args(
        ("q", "k", "v", "mask", "out", "part_acc", "part_ml"),
        ("M", "N", "n_heads", "kv_group", "qk_scale", "chunk"),
        has_mask,
    )
    code = Code()
    code.indent()
    code.add(
        "# ---- this program's key/value head, its query rows and its slice of the keys",
        "pid = tl.program_id(0)  # over (batch, key/value head, block of rows)",
        "split = tl.program_id(1)",
        "group_rows = kv_group * M  # the (query head, query) rows reading one key/value head",
        "row_blocks = tl.cdiv(group_rows, ROWS)",
        "n_kv_heads = n_heads // kv_group",
        "off_kh = ((pid // row_blocks) % n_kv_heads).to(tl.int64)",
        "off_b = (pid // row_blocks // n_kv_heads).to(tl.int64)",
        "r = (pid % row_blocks) * ROWS + tl.arange(0, ROWS)  # [ROWS] rows of the group",
        "r_mask = r < group_rows",
        "off_h = off_kh * kv_group + (r // M).to(tl.int64)  # [ROWS] query heads",
        "off_m = r % M  # [ROWS] query positions",
        "offs_n = tl.arange(0, BLOCK_N)",
        "offs_d = tl.arange(0, BLOCK_D)",
        "offs_dv = tl.arange(0, BLOCK_DV)",
        "d_mask = offs_d < HEAD_D",
        "dv_mask = offs_dv < HEAD_DV",
        "q_rows = q_ptr + off_b * stride_qb + off_h * stride_qh + off_m * stride_qm",
        "q = tl.load(q_rows[:, None] + offs_d[None, :] * stride_qd,",
        "            mask=r_mask[:, None] & d_mask[None, :], other=0.0).to(tl.float32)",
        "q = q * qk_scale  # scores in the log2 domain: exp2 of them is exp",
        "k_tile = k_ptr + off_b * stride_kb + off_kh * stride_kh",
        "k_tile += offs_n[:, None] * stride_kn + offs_d[None, :] * stride_kd",
        "v_tile = v_ptr + off_b * stride_vb + off_kh * stride_vh",
        "v_tile += offs_n[:, None] * stride_vn + offs_dv[None, :] * stride_vd",
        "lo = split * chunk",
        "hi = tl.minimum(N, lo + chunk)",
        "if CAUSAL:  # query i sees keys 0..i: the rows' last query bounds the keys read",
        "    hi = tl.minimum(hi, tl.max(tl.where(r_mask, off_m, 0), 0) + 1)",
        "# ---- online softmax state per row, fp32: running max and sum, unnormalised output",
        'm_i = tl.full([ROWS], float("-inf"), tl.float32)',
        "l_i = tl.zeros([ROWS], tl.float32)",
        "acc = tl.zeros([ROWS, BLOCK_DV], tl.float32)",
    )
    if has_mask:
        code.add(
            "mask_rows = mask_ptr + off_b * stride_maskb + off_h * stride_maskh",
            "mask_rows += off_m * stride_maskm",
        )
    code.add("for start_n in range(lo, hi, BLOCK_N):")
    code.indent()
    code.add(
        "cols = start_n + offs_n",
        "n_mask = cols < hi",
        "k = tl.load(k_tile + start_n * stride_kn, mask=n_mask[:, None] & d_mask[None, :], "
        "other=0.0)",
        "# [ROWS, BLOCK_N]: every row's scores against the one loaded block of keys",
        "if DOT:",
        "    s = tl.dot(q, tl.trans(k.to(tl.float32)), input_precision=QK_PRECISION)",
        "else:",
        "    s = tl.sum(q[:, None, :] * k.to(tl.float32)[None, :, :], 2)",
        "valid = r_mask[:, None] & n_mask[None, :]",
        "if CAUSAL:",
        "    valid = valid & (cols[None, :] <= off_m[:, None])",
    )
    if has_mask:
        code.add(
            "at = mask_rows[:, None] + cols[None, :] * stride_maskn",
            f"if MASK == {MASK_BOOL}:  # True: attend",
            "    keep = tl.load(at, mask=valid, other=0)",
            "    valid = valid & (keep != 0)",
            f"if MASK == {MASK_ADD}:  # added to the scaled scores (-inf: masked out)",
            "    bias = tl.load(at, mask=valid, other=0.0)",
            f"    s += bias.to(tl.float32) * {LOG2E}",
        )
    code.add(
        's = tl.where(valid, s, float("-inf"))',
        "m_new = tl.maximum(m_i, tl.max(s, 1))",
        "# while every key so far is masked the max is -inf: shift by 0 (exp2(-inf) = 0)",
        'm_shift = tl.where(m_new == float("-inf"), 0.0, m_new)',
        "p = tl.math.exp2(s - m_shift[:, None])",
        "alpha = tl.math.exp2(m_i - m_shift)",
        "l_i = l_i * alpha + tl.sum(p, 1)",
        "v = tl.load(v_tile + start_n * stride_vn, mask=n_mask[:, None] & dv_mask[None, :], "
        "other=0.0)",
        "if DOT:",
        "    pv = tl.dot(p, v.to(tl.float32), input_precision=DOT_PRECISION)",
        "else:",
        "    pv = tl.sum(p[:, :, None] * v.to(tl.float32)[None, :, :], 1)",
        "acc = acc * alpha[:, None] + pv",
        "m_i = m_new",
    )
    code.dedent()
    code.add(
        "if SPLIT == 1:  # whole rows: normalise and store (0 where every key is masked)",
        "    out = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]",
        "    o_rows = out_ptr + off_b * stride_outb + off_h * stride_outh + off_m * stride_outm",
        "    tl.store(o_rows[:, None] + offs_dv[None, :] * stride_outd,",
        "             out.to(out_ptr.dtype.element_ty), mask=r_mask[:, None] & dv_mask[None, :])",
        "else:  # a slice: its unnormalised partials, merged by the combine kernel",
        "    row = (off_b * n_heads + off_h) * M + off_m  # [ROWS] rows over (batch, head, query)",
        "    part = row * SPLIT + split",
        "    tl.store(part_acc_ptr + part[:, None] * BLOCK_DV + offs_dv[None, :], acc,",
        "             mask=r_mask[:, None])",
        "    tl.store(part_ml_ptr + part * 2, m_i, mask=r_mask)",
        "    tl.store(part_ml_ptr + part * 2 + 1, l_i, mask=r_mask)",
    )
    return "\n".join(signature(name, args, CONSTS) + code.lines), args


def combine_kernel(name: str) -> tuple[str, KernelArgs]:
    """The kernel merging each row's key-split partials into its output."""
    args = KernelArgs()
    for t in ("part_acc", "part_ml", "out"):
        args.pointer(t)
    for s in ("M", "n_heads"):
        args.scalar(s, s)
    for d in STRIDES["out"]:
        args.scalar(f"stride_out{d}", f"stride_out{d}")
    code = Code()
    code.indent()
    code.add(
        "row = tl.program_id(0)",
        "off_m = row % M",
        "off_h = ((row // M) % n_heads).to(tl.int64)",
        "off_b = (row // M // n_heads).to(tl.int64)",
        "offs_s = tl.arange(0, SPLIT_BLOCK)",
        "offs_dv = tl.arange(0, BLOCK_DV)",
        "s_mask = offs_s < SPLIT",
        "part = row.to(tl.int64) * SPLIT + offs_s",
        'm = tl.load(part_ml_ptr + part * 2, mask=s_mask, other=float("-inf"))',
        "l = tl.load(part_ml_ptr + part * 2 + 1, mask=s_mask, other=0.0)",
        "acc = tl.load(part_acc_ptr + part[:, None] * BLOCK_DV + offs_dv[None, :],",
        "              mask=s_mask[:, None], other=0.0)",
        "# every partial scaled to the row's largest max (a split with every key masked has a",
        "# max of -inf and adds nothing)",
        "m_row = tl.max(m, 0)",
        'm_shift = tl.where(m_row == float("-inf"), 0.0, m_row)',
        "w = tl.math.exp2(m - m_shift)",
        "l_row = tl.sum(l * w, 0)",
        "out = tl.sum(acc * w[:, None], 0) / tl.where(l_row == 0.0, 1.0, l_row)",
        "o_row = out_ptr + off_b * stride_outb + off_h * stride_outh + off_m * stride_outm",
        "tl.store(o_row + offs_dv * stride_outd, out.to(out_ptr.dtype.element_ty), "
        "mask=offs_dv < HEAD_DV)",
    )
    consts = ["BLOCK_DV", "HEAD_DV", "SPLIT", "SPLIT_BLOCK"]
    return "\n".join(signature(name, args, consts) + code.lines), args


def render_decode(
    spec: AttentionSpec, group: Group, name: str, params: Mapping[str, Any], describe: str
) -> RenderedKernel:
    """The decode kernels and the wrapper that sizes the key splits and launches them."""
    params_in = [safe_name(x) for x in group.inputs]
    out = safe_name(group.outputs[0])
    p = {**DECODE_DEFAULTS, **{k: int(v) for k, v in params.items() if k in DECODE_DEFAULTS}}
    kname, cname = f"{name}_decode_kernel", f"{name}_combine_kernel"
    kernel, args = decode_kernel(kname, spec.mask is not None)
    combine, cargs = combine_kernel(cname)
    code = Code()
    code.add(f"def {name}({', '.join(params_in)}):")
    code.indent()
    first, *rest = wrap_words(describe, 84)
    note = DOT_NOTE if p["DOT"] else NOTE
    code.add(f'"""{first}', *rest, "", *wrap_words(note, 88), '"""')
    prelude.operands(code, spec, out)
    prelude.heads(code, spec)
    prelude.mask_and_strides(code, spec, out)
    code.add(
        "# rows: the (query head, query) pairs of one key/value head, up to ROWS a program",
        "group_rows = (H // Hk) * M",
    )
    if p["DOT"]:
        code.add(
            f"# tl.dot's blocks: {DOT_ROWS} rows (padding past the group's), BLOCK_N keys a step",
            f"ROWS = {DOT_ROWS}",
            f"BLOCK_N = max(16, min({p['BLOCK_N']}, _pow2(N)))",
            "# fp32 products: 3xTF32 (fp32 accuracy) unless the caller allowed TF32, which the",
            "# values' product takes; the scores' keeps fp32 accuracy (as the flash kernel's)",
            'DOT_PRECISION = "tf32" if torch.backends.cuda.matmul.allow_tf32 else "tf32x3"',
            'QK_PRECISION = "tf32x3"',
        )
    else:
        code.add(
            "# a step takes BLOCK_N // ROWS keys (one row's BLOCK_N in registers)",
            f"ROWS = min({p['ROWS']}, _pow2(group_rows))",
            f"BLOCK_N = max(16 // ROWS, min({p['BLOCK_N']} // ROWS, _pow2(N)))",
            "DOT_PRECISION = None",
            "QK_PRECISION = None",
        )
    code.add(
        "BLOCK_D = max(16, _pow2(D))",
        "BLOCK_DV = max(16, _pow2(DV))",
        "programs = B * Hk * _cdiv(group_rows, ROWS)",
        "rows = B * H * M",
        f"# key splits: about {p['SPLIT_PROGRAMS']} programs in all, each of at least four",
        "# key blocks; chunks are whole key blocks and no split is left empty",
        f"SPLIT = max(1, min(_cdiv({p['SPLIT_PROGRAMS']}, programs), "
        "_cdiv(N, 4 * BLOCK_N)))",
        "chunk = _cdiv(_cdiv(N, SPLIT), BLOCK_N) * BLOCK_N",
        "SPLIT = _cdiv(N, chunk)",
        "# the partials of each (row, split), fp32; never read when one split does it all",
        "parts = rows * SPLIT if SPLIT > 1 else 1",
        "part_acc = torch.empty((parts, BLOCK_DV), device=q.device, dtype=torch.float32)",
        "part_ml = torch.empty((parts, 2), device=q.device, dtype=torch.float32)",
    )
    consts = {
        "ROWS": "ROWS",
        "BLOCK_N": "BLOCK_N",
        "BLOCK_D": "BLOCK_D",
        "BLOCK_DV": "BLOCK_DV",
        "HEAD_D": "D",
        "HEAD_DV": "DV",
        "CAUSAL": str(spec.causal),
        "MASK": "MASK",
        "SPLIT": "SPLIT",
        "DOT": str(bool(p["DOT"])),
        "QK_PRECISION": "QK_PRECISION",
        "DOT_PRECISION": "DOT_PRECISION",
        "num_warps": p["WARPS"],
    }
    pointers = {"q": "q", "k": "k", "v": "v", "mask": "mask", "out": out,
                "part_acc": "part_acc", "part_ml": "part_ml"}
    args.pointers = [(kp, pointers[w]) for kp, w in args.pointers]
    launch(kname, "(programs, SPLIT)", args, consts, code)
    code.add("if SPLIT > 1:")
    code.indent()
    cargs.pointers = [(kp, pointers[w]) for kp, w in cargs.pointers]
    launch(
        cname,
        "(rows,)",
        cargs,
        {"BLOCK_DV": "BLOCK_DV", "HEAD_DV": "DV", "SPLIT": "SPLIT",
         "SPLIT_BLOCK": "_pow2(SPLIT)", "num_warps": 4},
        code,
    )
    code.dedent()
    code.add(f"return ({out},)")
    return RenderedKernel(
        (kernel, combine),
        code.text(),
        name,
        tuple(params_in),
        (group.outputs[0],),
        notes=(spec.node.origin, note) if spec.node.origin else (note,),
    )
