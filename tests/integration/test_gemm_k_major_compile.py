"""Under TF32 math (3xTF32 under the fp32 policy, TF32 under tf32) the square and A^T @ B
products reach Hopper's wgmma with K-major tiles in shared memory, compiled for sm_90 without a
GPU (compile_check, in a child without the interpreter).

Triton 3.6 emits wgmma for a 32-bit product whatever the operands' layout; a tile stored other
than K-major is transposed through registers every step of K: scalar 32-bit shared stores
(``st.shared.b32``) in the loop, and the TF32 product waits for each wgmma before the next
(no ``wgmma.wait_group 1``). H200, 4096^3 tf32: 1.94 ms that way, 0.55 ms for the K-major
product of a linear layer. The wrapper's K-major copies remove both.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_child import run_compile_script

ROOT = Path(__file__).resolve().parents[2]
TASKS = ["level1/31_gemm_square", "level1/34_gemm_transposed_a"]
WGMMA = r"wgmma\.mma_async[\w.]*?\.f32\.(\w+)\.\w+"


@pytest.mark.sm90
def test_tf32_products_take_k_major_tiles_to_wgmma() -> None:
    pytest.importorskip("triton")
    paths = [str(ROOT / "benchmarks" / f"{t}.py") for t in TASKS]
    rows = run_compile_script(
        f"""
        import json, re
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.evaluate.precision import apply_policy
        from kernelwright.records import Precision
        from kernelwright.task import load_task
        rows = []
        for path in {paths!r}:
            plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
            source = plan.render(plan.designs[0])  # with TMA loads
            for policy in ("fp32", "tf32"):
                apply_policy(Precision(policy))  # the wrapper reads allow_tf32 per call
                for r in compile_check(source, path, "full", keep_ptx=True):
                    rows.append([path, policy, r.kernel, r.ok, r.constexprs, r.error[:300],
                                 sorted(set(re.findall({WGMMA!r}, r.ptx))),
                                 r.ptx.count("st.shared.b32"),
                                 r.ptx.count("wgmma.wait_group.sync.aligned 1")])
        print(json.dumps(rows))
        """
    )
    assert {(Path(p).stem, policy) for p, policy, *_ in rows} == {
        (Path(t).name, policy) for t in TASKS for policy in ("fp32", "tf32")
    }
    for path, policy, kernel, ok, consts, error, mma, scalar_stores, overlapped in rows:
        where = (Path(path).stem, policy, kernel)
        assert ok, (*where, error)
        assert kernel == "gemm_0_tma_kernel", where
        assert "LHS_T=False, RHS_T=True" in consts, (*where, consts)  # both K-major
        assert mma == ["tf32"], (*where, mma)
        assert scalar_stores == 0, (*where, scalar_stores)  # no transposes through registers
        if policy == "tf32":  # one wgmma group in flight while the next is issued
            assert overlapped > 0, where
