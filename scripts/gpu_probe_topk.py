#!/usr/bin/env python
"""Probe (sixth session): the MoE top-k gating as 8 rounds over whole rows (the emitted
``topk-rounds`` kernel) against a tournament: each lane sorts its 4 columns once, then each
round takes the best lane head (two warp reductions) and pops it. Run on the GPU machine:

    PYTHONPATH=src python scripts/gpu_probe_topk.py
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _cas(ka, ca, kb, cb):
    # (kb, cb) ranks first when its key is larger, or equal with a lower column
    sw = (kb > ka) | ((kb == ka) & (cb < ca))
    return tl.where(sw, kb, ka), tl.where(sw, cb, ca), tl.where(sw, ka, kb), tl.where(sw, ca, cb)


@triton.jit
def topk_tournament_kernel(
    x_ptr,
    w_ptr,
    id_ptr,
    n_rows,
    n_cols,
    stride_x,
    stride_w,
    stride_i,
    K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    LANES: tl.constexpr = BLOCK_N // 4
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    row_mask = rows < n_rows
    cols = tl.arange(0, BLOCK_N)[None, :]
    col_mask = cols < n_cols
    ks = tl.arange(0, BLOCK_K)[None, :]
    k_mask = ks < K
    x = tl.load(x_ptr + rows * stride_x + cols, mask=row_mask & col_mask, other=0).to(tl.float32)
    m = tl.max(tl.where(row_mask & col_mask, x, -float("inf")), axis=1, keep_dims=True)
    e = tl.exp(x - m)
    s = tl.sum(tl.where(row_mask & col_mask, e, 0.0), axis=1, keep_dims=True)
    p = e / s
    key = p.to(tl.int32, bitcast=True)
    key = tl.where(key < 0, key ^ 0x7FFFFFFF, key)
    key = tl.where(p != p, 0x7FFFFFFE, key)
    key = tl.where(col_mask, key, -2147483648)
    # each lane's 4 adjacent columns, as 4 [BLOCK_M, LANES] tensors (col 4 * lane + 2a + b)
    ka, kb = tl.split(tl.reshape(key, [BLOCK_M, LANES, 2, 2]))
    h0, h2 = tl.split(ka)
    h1, h3 = tl.split(kb)
    zero = tl.zeros([BLOCK_M, LANES], tl.int32)
    base = tl.arange(0, LANES)[None, :] * 4 + zero
    g0, g1, g2, g3 = base, base + 1, base + 2, base + 3
    # sort each lane's 4 (largest first, a tie to the lower column)
    h0, g0, h1, g1 = _cas(h0, g0, h1, g1)
    h2, g2, h3, g3 = _cas(h2, g2, h3, g3)
    h0, g0, h2, g2 = _cas(h0, g0, h2, g2)
    h1, g1, h3, g3 = _cas(h1, g1, h3, g3)
    h1, g1, h2, g2 = _cas(h1, g1, h2, g2)
    sel_top = tl.zeros([BLOCK_M, BLOCK_K], tl.int32)
    sel_col = tl.zeros([BLOCK_M, BLOCK_K], tl.int32)
    for j in tl.static_range(K):
        best = tl.max(h0, axis=1, keep_dims=True)
        at = tl.min(tl.where(h0 == best, g0, BLOCK_N), axis=1, keep_dims=True)
        win = g0 == at
        h0 = tl.where(win, h1, h0)
        g0 = tl.where(win, g1, g0)
        h1 = tl.where(win, h2, h1)
        g1 = tl.where(win, g2, g1)
        h2 = tl.where(win, h3, h2)
        g2 = tl.where(win, g3, g2)
        h3 = tl.where(win, -2147483648, h3)
        g3 = tl.where(win, BLOCK_N, g3)
        sel_top = tl.where(ks == j, best, sel_top)
        sel_col = tl.where(ks == j, at, sel_col)
    vals = tl.where(sel_top < 0, sel_top ^ 0x7FFFFFFF, sel_top).to(tl.float32, bitcast=True)
    tot = tl.sum(tl.where(row_mask & k_mask, vals, 0.0), axis=1, keep_dims=True)
    tl.store(w_ptr + rows * stride_w + ks, vals / tot, mask=row_mask & k_mask)
    tl.store(id_ptr + rows * stride_i + ks, sel_col, mask=row_mask & k_mask)


def topk_tournament(x, k, block_m=16, warps=4):
    n_rows, n_cols = x.shape
    w = torch.empty((n_rows, k), device=x.device, dtype=x.dtype)
    ids = torch.empty((n_rows, k), device=x.device, dtype=torch.int32)
    BLOCK_N = max(4, triton.next_power_of_2(n_cols))
    BLOCK_K = triton.next_power_of_2(k)
    BLOCK_M = min(block_m, triton.next_power_of_2(n_rows))
    grid = (triton.cdiv(n_rows, BLOCK_M),)
    topk_tournament_kernel[grid](
        x,
        w,
        ids,
        n_rows,
        n_cols,
        x.stride(0),
        w.stride(0),
        ids.stride(0),
        K=k,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        num_warps=warps,
    )
    return w, ids


# ---- the probe ----------------------------------------------------------------------------


def main() -> None:
    import sys
    import tempfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "scripts"))
    from gpu_schedule_sweep import Reference, bench, load_solution

    from kernelwright.design.plan import plan_task
    from kernelwright.task import load_task

    task = root / "benchmarks/serving/04_moe_topk_gating.py"
    ref = Reference(task, "cuda", "full")
    (x,) = ref.inputs
    k = ref.init[0]
    rw, ri = ref.outputs
    plan = plan_task(load_task(task, "full"), "cuda", "full", isolate=False)
    f = Path(tempfile.mkdtemp()) / "rounds.py"
    f.write_text(plan.render(plan.designs[0]))
    model = ref.build(load_solution(f))
    rows = []
    with torch.no_grad():
        ew, ei = model(x)
        rows.append(
            (
                "rounds (emitted)",
                bench(lambda: model(x), "cuda")[0],
                torch.equal(ei, ri),
                (ew - rw).abs().max().item(),
            )
        )
        for bm, warps in ((16, 4), (32, 4), (32, 8), (64, 8), (8, 2)):
            w, i = topk_tournament(x, k, bm, warps)
            ms = bench(lambda bm=bm, warps=warps: topk_tournament(x, k, bm, warps), "cuda")[0]
            rows.append(
                (
                    f"tournament {bm} rows x {warps} warps",
                    ms,
                    torch.equal(i, ri),
                    (w - rw).abs().max().item(),
                )
            )
    floor = ref.bytes_moved() / 4238e9 * 1e3
    print(f"floor {floor:.4f} ms")
    for name, ms, same, err in rows:
        print(f"{name:>34} {ms:8.4f} ms {floor / ms:6.0%}  ids equal: {same}  max err {err:.2g}")


if __name__ == "__main__":
    main()
