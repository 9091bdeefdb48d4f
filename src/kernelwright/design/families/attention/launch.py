"""The wrapper of an attention group: sizes and strides from the operands, the math the policy
allows (the GEMM family's rule), the blocks, the pipeline depth that fits, the launch. A boolean
mask that allows no key past its query (a causal mask passed as a tensor) is found at run time,
on the device (a flag the kernel reads, so no call waits for the GPU), and takes the causal
schedule.

The math is chosen at run time, never lowered silently: bf16 and fp16 operands multiply on
tensor cores with fp32 accumulation; fp32 operands keep fp32 accuracy with 3xTF32 (``FP32_MATH``
0) or IEEE fp32 (1), unless the caller allowed TF32 for matrix products (the tf32 policy),
which the values' product then takes while the scores' keeps fp32 accuracy (``QK_COMMENT``),
written-out attention too; ``TF32_SCORES`` 1 lets a task that wrote its attention out (its
scores are its own matrix product, which the policy covers) take TF32 for them, where the
harness accepts it on that task (``QK_WRITTEN_COMMENT``).
3xTF32 is the default: on the H200 at head dim 64 (scripts/bench_attention.py) it ran 2.6 ms
against 11.8 ms for IEEE fp32, and on inputs scaled by 64, where the softmax magnifies the
scores' rounding, it erred less than both IEEE fp32 and PyTorch's own fp32 attention.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelwright.design.families.attention import prelude
from kernelwright.design.families.attention.decode import render_decode
from kernelwright.design.families.attention.kernels import (
    flash_kernel,
)
from kernelwright.design.families.attention.spec import AttentionSpec, attention_spec
from kernelwright.design.families.gemm.precision import FP32_MATH, math_note
from kernelwright.design.families.gemm.spec import SMEM_BYTES
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import (
    Code,
    DesignError,
    RenderedKernel,
    launch,
    wrap_words,
)
from kernelwright.design.kernel.emitter import safe_name

VARIANTS = ("flash", "decode")
DEFAULTS = {"BLOCK_M": 128, "BLOCK_N": 64, "STAGES": 3, "WARPS": 8, "FP32_MATH": 0,
            "SPLIT_KEYS": 1, "TMA": 0, "SKIP_TRIANGLE": 0, "TF32_SCORES": 0}
QK_NOTE = "the scores' product keeps fp32 accuracy where TF32 is allowed"
# why the scores' product is not lowered to TF32 (the wrapper's comment)
QK_COMMENT = (
    "the scores' product keeps fp32 accuracy where TF32 is allowed: the softmax exponentiates",
    "the scores, and TF32's rounding of large ones moves the weights (H200, tf32 policy, SDPA",
    "inputs scaled by 64: with TF32 scores 73 K of 16.8 M outputs missed PyTorch's attention,",
    "by up to 234, and the float64 answer excused 47 of them)",
)
# A task that writes its attention out multiplies the scores itself, a matrix product the
# policy's TF32 covers, yet its reference's TF32 scores round otherwise than the kernel's, and
# the softmax magnifies the difference: so these scores keep fp32 accuracy too unless
# TF32_SCORES asks otherwise (a tuning move the harness accepts or refuses per task).
QK_WRITTEN_NOTE = "the scores' product, the task's own matrix product, takes the same math"
QK_WRITTEN_COMMENT = (
    "the task multiplies the scores itself (a matrix product, which the policy's TF32 covers",
    "as it does in the task's own model), so the scores' product takes the values' math",
    "(TF32_SCORES 1: by default the scores keep fp32 accuracy, since TF32 scores that round",
    "otherwise than the task's missed it on inputs scaled by 64: H200, tf32 policy, a",
    "grouped-query attention at head dim 128, 35.8 K of 16.8 M outputs by up to 284)",
)

ATTN_STAGES = '''def _attn_stages(stages, block_m, block_n, block_d, block_dv, item, smem):
    """The pipeline's depth: at most stages, within smem bytes of shared memory. The query
    block stays resident (block_m x block_d); each stage holds a block of keys and one of
    values (block_n x (block_d + block_dv)); one more value block is kept for the layout
    the second product needs. item: bytes of an operand value. At least one stage."""
    room = smem - (block_m * block_d + block_n * block_dv) * item
    return max(1, min(stages, room // (block_n * (block_d + block_dv) * item)))'''

ATTN_DESCRIPTOR = '''def _attn_descriptor(t, block_n, block_d):
    """A tensor-memory-accelerator descriptor of t, (batch, heads, keys, head dim) as stored,
    for [1, 1, block_n, block_d] boxes (what lies past the keys or the head dim reads as
    zeros); None where TMA cannot load t: it needs a Hopper GPU (or the interpreter), a unit
    stride along the head dim, no zero stride (a broadcast) and 16-byte aligned addresses
    and strides."""
    if t.device.type == "cuda" and _cuda_device(t.device)[1] < 9:
        return None
    strides = t.stride()
    if t.numel() == 0 or strides[-1] != 1 or 0 in strides[:-1]:
        return None
    if t.data_ptr() % 16 or any(s * t.element_size() % 16 for s in strides[:-1]):
        return None
    return _descriptor(t, list(t.shape), list(strides), [1, 1, block_n, block_d])'''

ATTN_LAUNCH = '''_FITTING_STAGES = {}  # (kernel, blocks, dtype, depth asked) -> the depth that fits


def _launch_fitting(launch, stages, key):
    """launch(depth) with at most stages pipeline stages. _attn_stages estimates the shared
    memory, the compiler decides: a launch it refuses for shared memory runs nothing, so it
    is retried a stage shallower. The depth that fits is kept per key."""
    stages = _FITTING_STAGES.get(key, stages)
    while True:
        try:
            launch(stages)
            break
        except triton.runtime.errors.OutOfResources:
            if stages <= 1:
                raise
            stages -= 1
    _FITTING_STAGES[key] = stages'''


def render_attention(
    graph: OpGraph, group: Group, name: str, variant: str, params: Mapping[str, Any]
) -> RenderedKernel:
    """Render an attention group as one flash-attention kernel and its wrapper."""
    if variant not in VARIANTS:
        raise DesignError(f"the attention template renders {', '.join(VARIANTS)}, not {variant}")
    spec = attention_spec(graph, group)
    if variant == "decode":
        return render_decode(spec, group, name, params, _describe(spec, "decode"))
    p = {**DEFAULTS, **{k: int(v) for k, v in params.items() if k in DEFAULTS}}
    if p["FP32_MATH"] not in FP32_MATH:
        raise DesignError(f"FP32_MATH {p['FP32_MATH']}: 0 (tf32x3) or 1 (ieee)")
    fp32_math = FP32_MATH[p["FP32_MATH"]]
    kname = f"{name}_kernel"
    if p["SPLIT_KEYS"] not in (0, 1):
        raise DesignError(f"SPLIT_KEYS {p['SPLIT_KEYS']}: 0 (one key loop) or 1 (two)")
    # a positive scale (a literal, or 1 / sqrt(D)) scales each row's max, not each score
    positive = spec.scale is None or spec.scale > 0
    if p["TMA"] not in (0, 1):
        raise DesignError(f"TMA {p['TMA']}: 0 (pointer loads) or 1 (descriptors, Hopper)")
    if p["SKIP_TRIANGLE"] not in (0, 1):
        raise DesignError(f"SKIP_TRIANGLE {p['SKIP_TRIANGLE']}: 0 or 1")
    if p["TF32_SCORES"] not in (0, 1):
        raise DesignError(f"TF32_SCORES {p['TF32_SCORES']}: 0 (fp32-accurate scores) or 1")
    # TF32 scores only where the task multiplies them itself; SDPA's keep fp32 accuracy
    tf32_scores = spec.written_out and bool(p["TF32_SCORES"])
    masked = spec.mask is not None
    triangle = masked and bool(p["SKIP_TRIANGLE"])
    kernel, args = flash_kernel(
        kname, masked, bool(p["SPLIT_KEYS"]), positive, triangle=triangle
    )
    kernels = [kernel]
    if p["TMA"]:
        tma_kernel, tma_args = flash_kernel(
            f"{name}_tma_kernel", masked, bool(p["SPLIT_KEYS"]), positive, tma=True,
            triangle=triangle,
        )
        kernels.insert(0, tma_kernel)
    mask = safe_name(spec.mask) if spec.mask is not None else None
    params_in = [safe_name(x) for x in group.inputs]
    out = safe_name(group.outputs[0])
    code = Code()
    code.add(f"def {name}({', '.join(params_in)}):")
    code.indent()
    note = f"{math_note(fp32_math)}; {QK_WRITTEN_NOTE if tf32_scores else QK_NOTE}"
    first, *rest = wrap_words(_describe(spec, "flash"), 84)
    code.add(f'"""{first}', *rest, "", *wrap_words(note, 88), '"""')
    prelude.operands(code, spec, out)
    code.add(
        "q, k = _dot_operands(q, k)",
        "v, _ = _dot_operands(v, v)",
        "# tl.dot's input precision, from the operands' dtype and the caller's matmul policy;",
    )
    if tf32_scores:
        code.add(
            *(f"# {line}" for line in QK_WRITTEN_COMMENT),
            f'DOT_PRECISION = _dot_precision(q, "{fp32_math}")',
            "QK_PRECISION = DOT_PRECISION",
        )
    else:
        code.add(
            *(f"# {line}" for line in QK_COMMENT),
            f'DOT_PRECISION = _dot_precision(q, "{fp32_math}")',
            f'QK_PRECISION = "{fp32_math}" if DOT_PRECISION == "tf32" else DOT_PRECISION',
        )
    prelude.heads(code, spec)
    if mask is not None and spec.causal:
        raise DesignError("an attention with both a mask and is_causal (SDPA allows one)")
    if mask is not None:
        code.add(
            "# a boolean mask that allows no key past its query (GPT's lower triangle) leaves",
            "# those keys out anyway: the causal schedule, which never visits a key block past",
            "# the diagonal, computes the same (the mask still applies below it). Checked on the",
            "# mask as given (its batch and head dimensions still broadcast), on the device, into",
            "# a flag the kernel reads: a check on the host would wait for the GPU every call",
            "if mask.dtype == torch.bool:",
            "    causal_flag = ~mask.expand(*mask.shape[:-2], M, N).triu(1).any()",
            "else:  # an additive mask never takes the causal schedule (the flag is not read)",
            "    causal_flag = mask",
        )
    if triangle:
        code.add(
            "# a causal mask that is the whole lower triangle (GPT's) masks nothing below the",
            "# diagonal: a second flag, found on the device too, spares the kernel its loads",
            "if mask.dtype == torch.bool:",
            "    exact_flag = causal_flag & "
            "~mask.expand(*mask.shape[:-2], M, N).logical_not().tril().any()",
            "else:",
            "    exact_flag = mask",
        )
    prelude.mask_and_strides(code, spec, out)
    code.add(
        "# blocks: BLOCK_M queries (at least 16, tl.dot's minimum: one query decodes in 16",
        "# rows), BLOCK_N keys a step, head dims padded to a power of two",
        f"BLOCK_M = max(16, min({p['BLOCK_M']}, _pow2(M)))",
        f"BLOCK_N = max(16, min({p['BLOCK_N']}, _pow2(N)))",
        "BLOCK_D = max(16, _pow2(D))",
        "BLOCK_DV = max(16, _pow2(DV))",
        f"# pipeline stages: up to {p['STAGES']}, as many as fit in an H200 block's 227 KB less",
        "# 1 KB for barriers with these blocks and the operands' dtype (an estimate: the",
        "# launch below goes shallower where the compiler needs more)",
        f"STAGES = _attn_stages({p['STAGES']}, BLOCK_M, BLOCK_N, BLOCK_D, BLOCK_DV, "
        f"q.element_size(), {SMEM_BYTES})",
        "grid = (_cdiv(M, BLOCK_M) * B * H,)",
    )
    if p["TMA"]:
        code.add(
            "# keys and values by Hopper's tensor memory accelerator where descriptors describe",
            "# them; the pointer kernel otherwise",
            "k_desc = _attn_descriptor(k, BLOCK_N, BLOCK_D)",
            "v_desc = _attn_descriptor(v, BLOCK_N, BLOCK_DV)",
            "use_tma = k_desc is not None and v_desc is not None",
        )
    consts = {
        "BLOCK_M": "BLOCK_M",
        "BLOCK_N": "BLOCK_N",
        "BLOCK_D": "BLOCK_D",
        "BLOCK_DV": "BLOCK_DV",
        "HEAD_D": "D",
        "HEAD_DV": "DV",
        "CAUSAL": str(spec.causal),
        "MASK": "MASK",
        "QK_PRECISION": "QK_PRECISION",
        "DOT_PRECISION": "DOT_PRECISION",
        "num_warps": p["WARPS"],
        "num_stages": "depth",
    }
    pointers = {"q": "q", "k": "k", "v": "v", "mask": "mask", "causal_flag": "causal_flag",
                "exact_flag": "exact_flag", "out": out, "k_desc": "k_desc", "v_desc": "v_desc"}
    args.pointers = [(kp, pointers[w]) for kp, w in args.pointers]
    code.add("", "def run(depth):")
    code.indent()
    if p["TMA"]:
        tma_args.pointers = [(kp, pointers[w]) for kp, w in tma_args.pointers]
        code.add("if use_tma:")
        code.indent()
        launch(f"{name}_tma_kernel", "grid", tma_args, consts, code)
        code.dedent()
        code.add("else:  # pointer loads (any strides)")
        code.indent()
    launch(kname, "grid", args, consts, code)
    if p["TMA"]:
        code.dedent()
    code.dedent()
    kernel_key = f"({kname!r}, use_tma)" if p["TMA"] else repr(kname)
    code.add(
        "",
        f"fit = (BLOCK_M, BLOCK_N, BLOCK_D, BLOCK_DV, D, DV, {spec.causal}, MASK, QK_PRECISION,",
        "       DOT_PRECISION, q.dtype, STAGES)",
        f"_launch_fitting(run, STAGES, ({kernel_key}, *fit))",
    )
    code.add(f"return ({out},)")
    return RenderedKernel(
        tuple(kernels),
        code.text(),
        name,
        tuple(params_in),
        (group.outputs[0],),
        notes=(spec.node.origin, note) if spec.node.origin else (note,),
    )


def _describe(spec: AttentionSpec, variant: str) -> str:
    what = "Scaled-dot-product attention"
    opts = []
    if spec.causal:
        opts.append("causal")
    if spec.mask is not None:
        opts.append("masked")
    if spec.gqa:
        opts.append("grouped-query heads")
    if opts:
        what += f" ({', '.join(opts)})"
    if variant == "decode":
        return (
            f"{what}: decode, the query rows sharing a key/value head in one program (its keys "
            "split over several programs where rows are few), an online softmax over blocks of "
            "keys in fp32; the scores never reach memory."
        )
    return (
        f"{what}: flash, BLOCK_M queries of one (batch, head) a program, an online softmax "
        "over blocks of keys in fp32; the scores never reach memory."
    )
