"""The wrapper of a GEMM group: sizes from the operands, the math the policy allows, the tiles,
TMA descriptors where the operands allow them, and the launch.

    tiled     one persistent kernel (TMA loads where possible, else pointer loads)
    splitk    partial products over slices of K into an fp32 workspace, then the combine kernel
    vendor    PyTorch's product (cuBLAS, under the caller's policy), then one kernel for the
              epilogue

The math is chosen at run time from the operands and the caller's matmul policy, never lowered
silently: bf16 and fp16 operands multiply on tensor cores with fp32 accumulation; fp32 operands
keep fp32 accuracy with 3xTF32 (``FP32_MATH`` 0: three TF32 tensor-core products per step, the
small parts' product dropped) or IEEE fp32 (``FP32_MATH`` 1), unless the caller allowed TF32 for
matrix products (``torch.backends.cuda.matmul.allow_tf32``, as the tf32 policy does). The vendor
path's product is cuBLAS's under that same policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelwright.design.families.gemm.epilogue import Epilogue
from kernelwright.design.families.gemm.kernels import (
    MASKED_NOTE,
    combine_kernel,
    masked_tile_test,
    product_epilogue_kernel,
    tiled_kernel,
)
from kernelwright.design.families.gemm.precision import FP32_MATH, VENDOR_NOTE, math_note
from kernelwright.design.families.gemm.spec import K_MAJOR_REUSE, SMEM_BYTES, GemmSpec, gemm_spec
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

VARIANTS = ("tiled", "splitk", "vendor")
DEFAULTS = {
    "BLOCK_M": 128,
    "BLOCK_N": 128,
    "BLOCK_K": 32,
    "GROUP_M": 8,
    "STAGES": 4,
    "WARPS": 8,
    "PROGRAMS_PER_SM": 1,
    "FP32_MATH": 0,
    "SPLIT_PROGRAMS": 264,
}
# the fp32 accumulator's values a thread at most (the skills' constraint BLOCK_M * BLOCK_N <=
# 4096 * WARPS): the widest tile a 2-byte TMA kernel takes without spilling
ACC_PER_THREAD = 128
COMBINE_TILE = (32, 128)  # the split-K combine kernel's tile: a 16 KB fp32 slice per step


def render_gemm(
    graph: OpGraph,
    group: Group,
    name: str,
    variant: str,
    params: Mapping[str, Any],
    *,
    tma: bool,
) -> RenderedKernel:
    """Render a GEMM group as ``tiled``, ``splitk`` or ``vendor`` (``tma``: with the TMA-load
    kernels)."""
    if variant not in VARIANTS:
        raise DesignError(f"the GEMM templates render {', '.join(VARIANTS)}, not {variant}")
    spec = gemm_spec(graph, group)
    p = {**DEFAULTS, **{k: int(v) for k, v in params.items() if k in DEFAULTS}}
    if variant == "vendor":
        return _render_vendor(graph, group, spec, name, p)
    if p["FP32_MATH"] not in FP32_MATH:
        raise DesignError(f"FP32_MATH {p['FP32_MATH']}: 0 (tf32x3) or 1 (ieee)")
    fp32_math = FP32_MATH[p["FP32_MATH"]]
    epi = Epilogue(graph, group, spec)
    partial = variant == "splitk"
    kname = f"{name}_partial" if partial else name
    kernels: list[str] = []
    code = Code()
    wparams = wrapper_params(graph, group)
    code.add(f"def {name}({', '.join(wparams)}):")
    code.indent()
    note = math_note(fp32_math)
    first, *rest = wrap_words(_describe(graph, spec, variant), 84)
    code.add(f'"""{first}', *rest, "", *wrap_words(note, 88), '"""')
    _operands(spec, fp32_math, code)
    _sizes(graph, group, spec, code)
    code.add(
        "# tiles: the output's BLOCK_M x BLOCK_N, BLOCK_K values of K a step",
        f"BLOCK_M = max(16, min({p['BLOCK_M']}, _pow2(M)))",
        f"BLOCK_N = max(16, min({p['BLOCK_N']}, _pow2(N)))",
        f"BLOCK_K = max(16, min({p['BLOCK_K']}, _pow2(K)))",
    )
    if tma:
        code.add(
            "# TMA loads of 2-byte operands take twice the K values (the same bytes a stage);",
            "# pointer loads keep BLOCK_K, since each of their addresses takes registers",
            f"BLOCK_K_TMA = max(16, min({p['BLOCK_K']} * 4 // lhs.element_size(), "
            "_pow2(K)))",
        )
        n_tma, wide = "BLOCK_N", "    BLOCK_K = BLOCK_K_TMA"
        if not partial:  # split-K's partial tiles keep BLOCK_N
            n_tma, wide = "BLOCK_N_TMA", "    BLOCK_N, BLOCK_K = BLOCK_N_TMA, BLOCK_K_TMA"
            code.add(
                "# and twice the output columns (up to 256) where the fp32 accumulator still fits"
                f" in {ACC_PER_THREAD}",
                "# values a thread: each left-operand tile then serves twice the columns; not"
                " where",
                "# output rows are off 16-byte boundaries (N % 8): each value is then stored"
                " alone, and",
                "# 256 columns of store addresses spill (sm_90, an odd N under bf16: 150 bytes"
                " a thread)",
                "BLOCK_N_TMA = BLOCK_N",
                "if lhs.element_size() == 2 and N % 8 == 0 and BLOCK_M * BLOCK_N * 2 <= "
                f"{ACC_PER_THREAD * 32 * p['WARPS']}:",
                "    BLOCK_N_TMA = max(16, min(BLOCK_N * 2, 256, _pow2(N)))",
            )
        code.add(
            "lhs_desc, lhs_t = _tma_operand(lhs, BLOCK_M, BLOCK_K_TMA)",
            f"rhs_desc, rhs_t = _tma_operand(rhs, BLOCK_K_TMA, {n_tma})",
            "use_tma = lhs_desc is not None and rhs_desc is not None",
            "if use_tma:  # the TMA kernel's tiles",
            wide,
        )
    outs = [safe_name(o) for o in group.outputs]
    out_bytes = "4" if partial else f"{outs[0]}.element_size()"
    if not partial and len(outs) > 1:
        out_bytes = f"max({', '.join(f'{o}.element_size()' for o in outs)})"
    code.add(
        f"# pipeline stages: up to {p['STAGES']}, as many as fit in shared memory (an H200 block's"
        " 227 KB,",
        "# less 1 KB for barriers) with these tiles, the operands' dtype and layout and the",
        "# output tile's dtype" + (" (split-K's workspace: fp32)" if partial else ""),
        f"STAGES = _stages({p['STAGES']}, BLOCK_M, BLOCK_N, BLOCK_K, lhs, rhs, "
        f"{out_bytes}, {SMEM_BYTES})",
        "tiles = _cdiv(M, BLOCK_M) * _cdiv(N, BLOCK_N) * n_batch",
    )
    if not partial:
        code.add(
            f"# persistent: up to {p['PROGRAMS_PER_SM']} program(s) per SM walk the tiles (one",
            "# tile each when there are fewer tiles)",
            f"n_programs = max(1, min(tiles, {p['PROGRAMS_PER_SM']} * _sm_count(lhs)))",
        )
        grid = "(n_programs,)"
    else:
        code.add(
            "# split K so that about SPLIT_PROGRAMS programs share the product; the slices'",
            "# partial products are added by a second kernel in slice order (deterministic)",
            "k_blocks = _cdiv(K, BLOCK_K)",
            f"n_split = max(1, min({p['SPLIT_PROGRAMS']} // max(tiles, 1), k_blocks))",
            "chunk = max(1, _cdiv(k_blocks, n_split)) * BLOCK_K  # whole K blocks a slice",
            "n_split = max(1, _cdiv(K, chunk))",
            "n_programs = max(1, tiles)",
            "ws = torch.empty((n_split, n_batch, M, N), device=lhs.device, dtype=torch.float32)",
        )
        grid = "(n_programs, n_split)"
    consts: dict[str, Any] = {
        "BLOCK_M": "BLOCK_M",
        "BLOCK_N": "BLOCK_N",
        "BLOCK_K": "BLOCK_K",
        "GROUP_M": p["GROUP_M"],
        "DOT_PRECISION": "DOT_PRECISION",
    }
    run = {"num_warps": p["WARPS"], "num_stages": "STAGES"}
    if tma:
        text, args = tiled_kernel(epi, f"{kname}_tma_kernel", tma=True, partial=partial)
        kernels.append(text)
        code.add("if use_tma:")
        code.indent()
        code.add("# Hopper's tensor memory accelerator: whole tiles a load, edges read as zeros")
        tma_consts = {**consts, "LHS_T": "lhs_t", "RHS_T": "rhs_t"}
        tma_consts.update(run)
        launch(f"{kname}_tma_kernel", grid, args, tma_consts, code)
        code.dedent()
        code.add("else:  # pointer loads (any strides)")
        code.indent()
    text, args = tiled_kernel(epi, f"{kname}_kernel", tma=False, partial=partial)
    kernels.append(text)
    launch(f"{kname}_kernel", grid, args, {**consts, **run}, code)
    if tma:
        code.dedent()
    if partial:
        text, args = combine_kernel(epi, f"{name}_combine_kernel")
        kernels.append(text)
        cm, cn = COMBINE_TILE
        code.add(f"grid = (_cdiv(M, {cm}) * _cdiv(N, {cn}) * n_batch,)")
        launch(
            f"{name}_combine_kernel",
            "grid",
            args,
            {"BLOCK_M": cm, "BLOCK_N": cn, "num_warps": 4},
            code,
        )
    code.add(f"return {', '.join(outs)}" + ("," if len(outs) == 1 else ""))
    return RenderedKernel(
        tuple(kernels),
        code.text(),
        name,
        tuple(wparams),
        tuple(group.outputs),
        tuple(sorted(epi.helpers)),
        # split-K's partial products run every tile
        notes=(note, *((MASKED_NOTE,) if not partial and masked_tile_test(epi) else ())),
    )


def _render_vendor(
    graph: OpGraph, group: Group, spec: GemmSpec, name: str, p: Mapping[str, int]
) -> RenderedKernel:
    """PyTorch's product, then the epilogue kernel over its output tiles."""
    if not spec.epilogue:
        raise DesignError("a vendor product without an epilogue: nothing for a kernel to do")
    epi = Epilogue(graph, group, spec)
    code = Code()
    wparams = wrapper_params(graph, group)
    code.add(f"def {name}({', '.join(wparams)}):")
    code.indent()
    first, *rest = wrap_words(_describe(graph, spec, "vendor"), 84)
    code.add(f'"""{first}', *rest, "", *wrap_words(VENDOR_NOTE, 88), '"""')
    product = "bmm" if spec.batched else "mm"
    code.add(
        f"lhs, rhs = {safe_name(spec.lhs)}, {safe_name(spec.rhs)}  # [batch x] M x K and K x N",
        "M, K, N = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]",
        "n_batch = lhs.shape[0] if lhs.dim() == 3 else 1",
        "# the vendor's product (cuBLAS on a GPU) under the caller's matmul policy, in the",
        "# operands' dtype; row-major, as the epilogue kernel reads it",
        f"prod = torch.ops.aten.{product}.default(lhs, rhs)",
        "if prod.stride(-1) != 1:",
        "    prod = prod.contiguous()",
        "stride_pb = prod.stride(0) if prod.dim() == 3 else 0",
        "stride_pm = prod.stride(-2)",
    )
    _domain(graph, group, spec, code)
    code.add(
        "# the epilogue's tiles: BLOCK_M rows x BLOCK_N columns of the product",
        f"BLOCK_M = max(16, min({p['BLOCK_M']}, _pow2(M)))",
        f"BLOCK_N = max(16, min({p['BLOCK_N']}, _pow2(N)))",
    )
    text, args = product_epilogue_kernel(epi, f"{name}_kernel")
    launch(
        f"{name}_kernel",
        "(_cdiv(M, BLOCK_M) * _cdiv(N, BLOCK_N) * n_batch,)",
        args,
        {"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "num_warps": p["WARPS"]},
        code,
    )
    outs = [safe_name(o) for o in group.outputs]
    code.add(f"return {', '.join(outs)}" + ("," if len(outs) == 1 else ""))
    return RenderedKernel(
        (text,),
        code.text(),
        name,
        tuple(wparams),
        tuple(group.outputs),
        tuple(sorted(epi.helpers)),
        notes=(VENDOR_NOTE,),
    )


def _describe(graph: OpGraph, spec: GemmSpec, variant: str) -> str:
    ops = ", ".join(dict.fromkeys(graph.node(n).op for n in spec.epilogue))
    what = f"Matrix product {safe_name(spec.lhs)} @ {safe_name(spec.rhs)}"
    if ops:
        what += f" with its epilogue ({ops}) on the fp32 accumulator"
    how = {
        "tiled": "persistent tiles in grouped order, one store",
        "splitk": "split-K partial products, then a combine kernel",
        "vendor": "PyTorch's product (cuBLAS), then one kernel for the epilogue over its tiles",
    }
    return f"{what}: {how[variant]}."


def _operands(spec: GemmSpec, fp32_math: str, code: Code) -> None:
    """The operands, M, N, K and the batch from the runtime tensors; tl.dot's input precision;
    K-major copies of 32-bit operands where TF32 tensor cores need them and the copy pays."""
    code.add(
        f"lhs, rhs = {safe_name(spec.lhs)}, {safe_name(spec.rhs)}  # [batch x] M x K and K x N",
        "lhs, rhs = _dot_operands(lhs, rhs)",
        "M, K, N = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]",
        "n_batch = lhs.shape[0] if lhs.dim() == 3 else 1",
        "if rhs.shape[-2] != K:",
        '    raise RuntimeError(f"matrix product of {tuple(lhs.shape)} and {tuple(rhs.shape)}")',
        "# tl.dot's input precision, from the operands' dtype and the caller's matmul policy",
        f'DOT_PRECISION = _dot_precision(lhs, "{fp32_math}")',
        "# Hopper's TF32 tensor cores (wgmma) read 32-bit tiles from shared memory only",
        "# K-major: a tile stored otherwise is transposed through registers every step of K,",
        "# which stalls the pipeline (H200, 4096^3 fp32 under tf32: 1.94 ms for A @ B, 0.55 ms",
        "# with the right operand stored K-major). A K-major copy moves 8 bytes an element (read",
        "# and write); each element of the right operand serves 2 x M FLOPs (of the left, 2 x N):",
        f"# from {K_MAJOR_REUSE} on ({K_MAJOR_REUSE // 2} FLOPs a byte read, above an H200's TF32"
        " balance of ~100) the",
        "# product is compute-bound and the transposes cost more than the copy; below, it is",
        "# memory-bound and the copy would double its traffic",
        'if DOT_PRECISION in ("tf32", "tf32x3"):',
        f"    lhs, rhs = _k_major(lhs, rhs, min_reuse={K_MAJOR_REUSE})",
        "# a K that is not a multiple of 16 leaves every load scalar: zero-padded copies where the",
        "# product is compute-bound",
        f"lhs, rhs = _k_padded(lhs, rhs, min_reuse={K_MAJOR_REUSE})",
        "K = lhs.shape[-1]",
    )


def _sizes(graph: OpGraph, group: Group, spec: GemmSpec, code: Code) -> None:
    """The operands' strides; the domain's sizes; the outputs."""
    code.add(
        "# any strides: a transposed operand is read as it is stored",
        "stride_lb = lhs.stride(0) if lhs.dim() == 3 else 0",
        "stride_rb = rhs.stride(0) if rhs.dim() == 3 else 0",
        "stride_lm, stride_lk = lhs.stride(-2), lhs.stride(-1)",
        "stride_rk, stride_rn = rhs.stride(-2), rhs.stride(-1)",
    )
    _domain(graph, group, spec, code)


def _domain(graph: OpGraph, group: Group, spec: GemmSpec, code: Code) -> None:
    """The domain's sizes from the product's (``n_batch``, ``M``, ``N``); the outputs."""
    assert group.layout is not None
    code.add("# the output's sizes come from the operands, so any input shape works")
    sizes = {spec.batch_axis: "n_batch", spec.m_axis: "M", spec.n_axis: "N"}
    for d in range(len(group.layout.hint)):
        if d not in sizes:
            raise DesignError(f"domain dimension {d} is none of the product's batch, M and N")
        code.add(f"dim{d} = {sizes[d]}")
    allocate(graph, group, group.layout, code, "lhs")
