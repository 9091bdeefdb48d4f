"""The GEMM kernels: output tiles of ``BLOCK_M x BLOCK_N`` computed by ``tl.dot`` over blocks of
K, the epilogue applied to the fp32 accumulator before the single store.

    tiled     a persistent grid: ``n_programs`` programs (a few per SM, or one per tile) walk the
              output tiles in grouped order (GROUP_M row blocks take turns on each column block
              of the right operand, which stays in L2 meanwhile), batch entries one after another
    partial   split-K's first stage: each program reduces one slice of K for one tile into an
              fp32 workspace ``(n_split, n_batch, M, N)``
    combine   split-K's second stage: the slices added in order (deterministic, no atomics),
              then the epilogue
    vendor    the epilogue alone, one program per output tile, on the product PyTorch's
              matrix multiplication (cuBLAS) wrote

Operands load in one of two ways, both emitted so one file serves every input layout:

    pointers  any strides; rows and columns past the edge read row or column 0 (the store
              masks their results), the partial last block of K is masked to zeros
    tma       tensor-memory-accelerator descriptors (Hopper; the wrapper builds them where the
              operands are 16-byte aligned with a unit stride): out-of-range elements read as
              zeros, no masks; a transposed operand is loaded as stored and transposed in
              registers (``LHS_T``/``RHS_T``)

Under TF32 math (tf32, tf32x3) the wrapper hands both operands over K-major where the copy pays
(``launch.py``): the right operand then loads as ``[BLOCK_N, BLOCK_K]`` boxes (``RHS_T``) whose
``.T`` is a view, so the tile sits in shared memory K-major, as Hopper's wgmma needs 32-bit
operands, with no transpose between the load and the product.

``DOT_PRECISION`` is ``tl.dot``'s input precision, chosen by the wrapper from the operands'
dtype and the caller's matmul policy (``launch.py``).

Where the epilogue's position mask replaces every value of a tile (``torch.triu`` of a product:
``masked_tiles.py``), the tile's K loop runs no step.
"""

from __future__ import annotations

from kernelwright.design.families.gemm.epilogue import Epilogue
from kernelwright.design.families.gemm.masked_tiles import tile_live_test
from kernelwright.design.kernel.common import Code, signature
from kernelwright.design.kernel.emitter import KernelArgs

CONSTS = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "DOT_PRECISION"]


def tiled_kernel(
    epi: Epilogue, name: str, tma: bool, partial: bool = False
) -> tuple[str, KernelArgs]:
    """A tile loop over the product (``partial``: one slice of K per program, stored to the
    split-K workspace instead of the epilogue); its source and its arguments, in order."""
    args = KernelArgs(index_64=True, widen_sizes=False)
    if tma:
        args.pointers += [("lhs_desc", "lhs_desc"), ("rhs_desc", "rhs_desc")]
        args.spans.update(lhs_desc="lhs", rhs_desc="rhs")
    else:
        args.pointers += [("lhs_ptr", "lhs"), ("rhs_ptr", "rhs")]
    args.strided.update(("lhs", "rhs"))  # the operands may be slices of larger tensors
    if partial:
        args.pointer("ws")
    # N hinted with its value at capture: the column mask of the epilogue's loads and stores is
    # then known constant over runs of that many columns, which keeps them vectors (an output
    # 1000 wide stored each value alone)
    n_seen = epi.graph.meta(epi.spec.node.name).hint[-1]
    for s in ("M", "N", "K", "n_batch", "n_programs"):
        args.scalar(s, s, n_seen if s == "N" else None)
    if partial:
        args.scalar("chunk", "chunk")
    if not tma:
        seen = epi.operand_strides()
        for s in ("stride_lb", "stride_lm", "stride_lk", "stride_rb", "stride_rk", "stride_rn"):
            args.scalar(s, s, seen.get(s))
    body = Code()
    body.indent()
    _tile_loop_head(body, partial)
    body.indent()
    end = None if partial else _masked_tile_end(epi, body)
    if tma:
        _tma_main_loop(body, partial, end)
    else:
        _pointer_main_loop(body, partial, end)
    if partial:
        body.add(
            "# ---- this slice's partial product, to the workspace (fp32)",
            "rows = offs_m[:, None]",
            "cols = offs_n[None, :]",
            "slot = ((pid_k * n_batch + pid_b) * M + rows) * N + cols",
            "tl.store(ws_ptr + slot, acc, mask=(rows < M) & (cols < N))",
        )
    else:
        epi.write(args, body)
    consts = [*CONSTS, "LHS_T", "RHS_T"] if tma else CONSTS
    return "\n".join(signature(name, args, consts) + body.lines), args


def _tile_loop_head(code: Code, partial: bool) -> None:
    code.add("pid = tl.program_id(0)")
    if partial:
        code.add(
            "pid_k = tl.program_id(1)  # which slice of K",
            "k_lo = pid_k * chunk",
            "k_hi = tl.minimum(k_lo + chunk, K)",
        )
    code.add(
        "n_m = tl.cdiv(M, BLOCK_M)",
        "n_n = tl.cdiv(N, BLOCK_N)",
        "tiles = n_m * n_n  # output tiles of one product of the batch",
        "# a persistent program takes tiles pid, pid + n_programs, ... (n_programs: the grid)",
        "for tile in tl.range(pid, tiles * n_batch, n_programs, flatten=True):",
    )
    code.indent()
    code.add(
        "pid_b = tile // tiles",
        "# grouped order: GROUP_M row blocks take turns on each column block of the right",
        "# operand, so that block is read from HBM once and from L2 by the others",
        "in_group = GROUP_M * n_n",
        "first_m = tile % tiles // in_group * GROUP_M",
        "group_m = tl.minimum(n_m - first_m, GROUP_M)",
        "pid_m = first_m + tile % tiles % in_group % group_m",
        "pid_n = tile % tiles % in_group // group_m",
        "offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
        "offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
        "acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
    )
    code.dedent()


# the file header's line for a GEMM whose tiled kernel skips masked tiles
MASKED_NOTE = "position mask: output tiles it replaces entirely skip the product (masked_tiles.py)"


def masked_tile_test(epi: Epilogue) -> str | None:
    """The tiled kernel's test of whether a tile's product is needed, over its batch entry,
    rows and columns (``masked_tiles.tile_live_test``); None where every tile needs it."""
    s = epi.spec
    corners = {}
    if s.batch_axis is not None:
        corners[s.batch_axis] = ("pid_b", "pid_b")
    if s.m_axis is not None:
        corners[s.m_axis] = ("pid_m * BLOCK_M", "pid_m * BLOCK_M + BLOCK_M - 1")
    if s.n_axis is not None:
        corners[s.n_axis] = ("pid_n * BLOCK_N", "pid_n * BLOCK_N + BLOCK_N - 1")
    return tile_live_test(epi.graph, epi.group, s.node.name, corners)


def _masked_tile_end(epi: Epilogue, code: Code) -> str | None:
    """Where the epilogue gates the product by a position mask: the statements giving the K
    loop's end, 0 for a tile the mask replaces entirely (``masked_tiles.py``), and its name;
    None otherwise."""
    live = masked_tile_test(epi)
    if live is None:
        return None
    code.add(
        "# the epilogue's position mask keeps some value of the product in this tile only if",
        "# it holds at the tile's extreme corner: a tile it replaces entirely skips the product",
        f"k_end = tl.where({live}, K, 0)",
    )
    return "k_end"


def _k_range(partial: bool, end: str | None = None) -> tuple[str, str]:
    """The K loop's bounds (a slice of K for split-K's partial products; ``end``: the loop's
    end where it may stop before K)."""
    return ("k_lo", "k_hi") if partial else ("0", end or "K")


def _pointer_main_loop(code: Code, partial: bool, end: str | None = None) -> None:
    lo, hi = _k_range(partial, end)
    first = "(k_lo + offs_k)" if partial else "offs_k"
    code.add(
        "# rows and columns past the edge read row / column 0: their loads need no mask, and",
        "# the store leaves their results out",
        "safe_m = tl.where(offs_m < M, offs_m, 0)",
        "safe_n = tl.where(offs_n < N, offs_n, 0)",
        "offs_k = tl.arange(0, BLOCK_K)",
        "lhs_tile = lhs_ptr + pid_b * stride_lb + safe_m[:, None] * stride_lm",
        f"lhs_tile += {first}[None, :] * stride_lk  # [BLOCK_M, BLOCK_K] addresses",
        "rhs_tile = rhs_ptr + pid_b * stride_rb + safe_n[None, :] * stride_rn",
        f"rhs_tile += {first}[:, None] * stride_rk  # [BLOCK_K, BLOCK_N] addresses",
        f"for k in range({lo}, {hi}, BLOCK_K):",
        f"    k_mask = offs_k < {_k_range(partial)[1]} - k  # the last block of K is partial: its"
        " tail reads zeros",
        "    lhs = tl.load(lhs_tile, mask=k_mask[None, :], other=0.0)",
        "    rhs = tl.load(rhs_tile, mask=k_mask[:, None], other=0.0)",
        "    acc = tl.dot(lhs, rhs, acc, input_precision=DOT_PRECISION)",
        "    lhs_tile += BLOCK_K * stride_lk",
        "    rhs_tile += BLOCK_K * stride_rk",
    )


def _tma_main_loop(code: Code, partial: bool, end: str | None = None) -> None:
    lo, hi = _k_range(partial, end)
    code.add(
        f"for k in range({lo}, {hi}, BLOCK_K):",
        "    # tensor-memory-accelerator loads of [1, rows, cols] boxes: out-of-range rows,",
        "    # columns and K read as zeros",
        "    if LHS_T:  # stored K x M (a transposed operand): load as stored, transpose",
        "        lhs = lhs_desc.load([pid_b, k, pid_m * BLOCK_M]).reshape(BLOCK_K, BLOCK_M).T",
        "    else:",
        "        lhs = lhs_desc.load([pid_b, pid_m * BLOCK_M, k]).reshape(BLOCK_M, BLOCK_K)",
        "    if RHS_T:  # stored N x K (a linear layer's weight, a K-major copy): a view",
        "        rhs = rhs_desc.load([pid_b, pid_n * BLOCK_N, k]).reshape(BLOCK_N, BLOCK_K).T",
        "    else:",
        "        rhs = rhs_desc.load([pid_b, k, pid_n * BLOCK_N]).reshape(BLOCK_K, BLOCK_N)",
    )
    # a split-K slice is a whole number of blocks (the wrapper's chunk), so only the last slice
    # ends mid-block, at K, where the descriptor reads zeros
    code.add("    acc = tl.dot(lhs, rhs, acc, input_precision=DOT_PRECISION)")


def combine_kernel(epi: Epilogue, name: str) -> tuple[str, KernelArgs]:
    """Split-K's second stage: each program adds the slices of one output tile, in slice order,
    and applies the epilogue; its source and its arguments, in order."""
    args = KernelArgs(index_64=True, widen_sizes=False)
    args.pointer("ws")
    for s in ("M", "N", "n_batch", "n_split"):
        args.scalar(s, s)
    code = Code()
    code.indent()
    _output_tile(code)
    code.add(
        "# the slices' partial products, added in slice order: the same sum on every run",
        "acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
        "for pid_k in range(0, n_split):",
        "    slot = ((pid_k * n_batch + pid_b) * M + rows) * N + cols",
        "    acc += tl.load(ws_ptr + slot, mask=(rows < M) & (cols < N), other=0.0)",
    )
    epi.write(args, code, declare=False)
    return "\n".join(signature(name, args, ["BLOCK_M", "BLOCK_N"]) + code.lines), args


def product_epilogue_kernel(epi: Epilogue, name: str) -> tuple[str, KernelArgs]:
    """The vendor path's kernel: each program reads one output tile of the product PyTorch's
    matrix multiplication wrote (``prod``: [batch x] M x N, a unit stride along N) as the
    accumulator and applies the epilogue; its source and its arguments, in order."""
    args = KernelArgs(index_64=True, widen_sizes=False)
    prod = args.pointer("prod")
    # N (and the row stride, N for cuBLAS's row-major output) hinted with their values at
    # capture: the column mask and the rows' offsets then keep 16-byte vector loads and stores
    n_seen = epi.graph.meta(epi.spec.node.name).hint[-1]
    for s in ("M", "N", "n_batch"):
        args.scalar(s, s, n_seen if s == "N" else None)
    args.scalar("stride_pb", "stride_pb")
    args.scalar("stride_pm", "stride_pm", n_seen)
    code = Code()
    code.indent()
    _output_tile(code)
    code.add(
        "# ---- the product's tile, as the accumulator (in fp32 whatever the product's dtype)",
        f"acc = tl.load({prod} + pid_b * stride_pb + rows * stride_pm + cols,",
        "              mask=(rows < M) & (cols < N), other=0.0).to(tl.float32)",
    )
    epi.write(args, code, declare=False)
    return "\n".join(signature(name, args, ["BLOCK_M", "BLOCK_N"]) + code.lines), args


def _output_tile(code: Code) -> None:
    """The program's output tile, row-major over the batch's tiles of BLOCK_M x BLOCK_N:
    ``pid_b``, ``offs_m``/``offs_n`` and ``rows``/``cols``."""
    code.add(
        "pid = tl.program_id(0)",
        "n_n = tl.cdiv(N, BLOCK_N)",
        "tiles = tl.cdiv(M, BLOCK_M) * n_n",
        "pid_b = pid // tiles",
        "offs_m = pid % tiles // n_n * BLOCK_M + tl.arange(0, BLOCK_M)",
        "offs_n = pid % tiles % n_n * BLOCK_N + tl.arange(0, BLOCK_N)",
        "rows = offs_m[:, None]",
        "cols = offs_n[None, :]",
    )
