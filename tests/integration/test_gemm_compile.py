"""The GEMM kernels of the suite compile for sm_90 at full size: Hopper tensor cores (wgmma) with
the math the policy asks for, within an SM's shared memory, without spilling.

Every default design's kernels (the TMA kernel and its pointer-load fallback, split-K's partial
and combine kernels) are compiled with compile_check for fp32 operands (3xTF32); the square
product is compiled for bf16 operands too. Runs in a child without the interpreter.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_child import PLAN_IMPORTS, run_compile_script

ROOT = Path(__file__).resolve().parents[2]
TASKS = [
    "level1/31_gemm_square",
    "level1/32_gemm_tall_skinny",
    "level1/33_bmm",
    "level1/39_gemm_split_k",
    "level2/02_gemm_scale_residual_clamp",
    "level1/46_gemm_upper_triangular",  # a K loop that ends early where the mask rejects a tile
]
SMEM = 227 * 1024  # an H200 SM's shared memory a block may take
# a Hopper tensor-core instruction and its operands' type: wgmma.mma_async...f32.tf32.tf32
WGMMA = r"wgmma\.mma_async[\w.]*?\.f32\.(\w+)\.\w+"


@pytest.mark.sm90
def test_gemm_kernels_compile_for_hopper_without_spills(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    paths = [str(ROOT / "benchmarks" / f"{t}.py") for t in TASKS]
    bf16 = tmp_path / "square_bf16.py"
    square = (ROOT / "benchmarks" / "level1" / "31_gemm_square.py").read_text()
    bf16.write_text(square.replace("torch.randn(n, n)", "torch.randn(n, n, dtype=torch.bfloat16)"))
    script = f"""
        import json, re
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.task import load_task
        rows = []
        for path in {[*paths, str(bf16)]!r}:
            plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
            for design in plan.designs[:2]:  # with TMA loads, and with pointer loads only
                for r in compile_check(plan.render(design), path, "full", keep_ptx=True):
                    mma = sorted(set(re.findall({WGMMA!r}, r.ptx)))
                    rows.append([path, r.kernel, r.ok, r.spill_bytes, r.shared_bytes, mma,
                                 r.error[:300]])
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=900)
    kernels = {(Path(p).stem, k) for p, k, *_ in rows}
    assert ("31_gemm_square", "gemm_0_tma_kernel") in kernels
    assert ("31_gemm_square", "gemm_0_kernel") in kernels
    assert ("39_gemm_split_k", "gemm_0_partial_tma_kernel") in kernels
    assert ("46_gemm_upper_triangular", "gemm_0_tma_kernel") in kernels
    for path, kernel, ok, spill, shared, mma, error in rows:
        assert ok, (path, kernel, error)
        assert spill in (0, None), (path, kernel, spill)
        assert shared <= SMEM, (path, kernel, shared)
        if "combine" not in kernel:  # the products run on Hopper's tensor cores
            want = "bf16" if "bf16" in path else "tf32"
            assert mma == [want], (path, kernel, mma)


# (task, its inputs' dtype, policy, GEMM parameters): variants the H200 refused with
# OutOfResources (shared memory, Required 262168 and 278552 > 232448) before the wrapper took
# only the pipeline stages that fit
OVERSIZED = [
    ("level2/02_gemm_scale_residual_clamp", "float32", "tf32", {"BLOCK_K": 64, "STAGES": 3}),
    ("level1/39_gemm_split_k", "bfloat16", "bf16", {"BLOCK_N": 256, "STAGES": 3}),
    ("level1/31_gemm_square", "float32", "fp32", {"BLOCK_N": 256, "STAGES": 5}),
]


@pytest.mark.sm90
def test_variants_take_only_the_stages_that_fit_in_shared_memory(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    cases = []
    for task, dtype, policy, params in OVERSIZED:
        path = ROOT / "benchmarks" / f"{task}.py"
        if dtype != "float32":  # the task at the policy's dtype, as the harness casts it
            text = path.read_text().replace(
                "torch.randn(m, k), torch.randn(k, n)",
                "torch.randn(m, k).bfloat16(), torch.randn(k, n).bfloat16()",
            )
            path = tmp_path / path.name
            path.write_text(text)
        cases.append((str(path), policy, params))
    rows = run_compile_script(
        f"""
        import json
        from kernelwright.design.choices import Design
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.evaluate.precision import apply_policy
        from kernelwright.records import Precision
        from kernelwright.task import load_task
        rows = []
        for path, policy, params in {cases!r}:
            plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
            top = plan.designs[0]
            design = Design(tuple(c.with_params({{**c.params, **params}}) for c in top.choices))
            apply_policy(Precision(policy))
            for r in compile_check(plan.render(design), path, "full"):
                rows.append([path, r.kernel, r.ok, r.shared_bytes, r.error[:300]])
        print(json.dumps(rows))
        """
    )
    assert {Path(p).stem for p, *_ in rows} == {Path(t).name for t, *_ in OVERSIZED}
    for path, kernel, ok, shared, error in rows:
        assert ok, (path, kernel, error)
        assert shared <= SMEM, (path, kernel, shared)


@pytest.mark.sm90
def test_an_output_width_that_is_no_multiple_of_16_keeps_vector_stores() -> None:
    """The suite's MLP ends in a product 1000 wide: N is hinted with its value at capture, so
    the epilogue's column mask is known constant over runs of 8 columns, and its stores and
    bias loads stay vectors (before, each of 128 values a thread was stored alone)."""
    pytest.importorskip("triton")
    path = str(ROOT / "benchmarks" / "level3" / "01_mlp.py")
    script = f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check, global_loads, global_stores
        from kernelwright.task import load_task
        plan = plan_task(load_task({path!r}, "full"), "cuda", "full", isolate=False)
        rows = [[r.kernel, r.ok, r.constexprs, global_loads(r.ptx), global_stores(r.ptx)]
                for r in compile_check(plan.render(plan.designs[0]), {path!r}, "full",
                                       keep_ptx=True)]
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=600)
    (last,) = [r for r in rows if "N_ALIGN=8" in r[2].split(", ")]
    kernel, ok, _consts, loads, stores = last
    assert ok, kernel
    assert stores and all(".v" in form for form in stores), stores
    assert all(".v" in form for form in loads), loads


@pytest.mark.sm90
def test_bf16_tiles_widen_to_256_columns_only_on_aligned_output_rows() -> None:
    """Under bf16 the TMA kernel takes 256 output columns where the output's rows are 16-byte
    aligned (the suite's GEMM + bias + GELU, 4096 wide: vector stores, no spills); with an odd
    N (held-out level-2 36, 4099 wide) every value is stored alone, and at 256 columns the
    store addresses spilled 150 bytes a thread: there it keeps 128, and spills nothing."""
    pytest.importorskip("triton")
    paths = [str(ROOT / "benchmarks" / "level2" / "01_gemm_bias_gelu.py"),
             str(ROOT / "heldout" / "level2" / "36_linear_odd_features_gelu.py")]
    script = PLAN_IMPORTS + f"""
        rows = []
        for path, plan in bf16_plans({paths!r}):
            rows += [[path.rsplit("/", 1)[-1], r.kernel, r.ok, r.spill_bytes, r.constexprs,
                      global_stores(r.ptx)]
                     for r in compile_check(plan.render(plan.designs[0]), path, "full",
                                            keep_ptx=True, precision="bf16")
                     if r.kernel == "gemm_0_tma_kernel"]
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=600)
    by = {r[0]: r for r in rows}
    aligned, odd = by["01_gemm_bias_gelu.py"], by["36_linear_odd_features_gelu.py"]
    for _, kernel, ok, spill, _, _ in (aligned, odd):
        assert ok and spill in (0, None), (kernel, spill)
    assert "BLOCK_N=256" in aligned[4].split(", ") and "BLOCK_N=128" in odd[4].split(", ")
    assert all(".v" in form for form in aligned[5]), aligned[5]


@pytest.mark.sm90
def test_the_vendor_products_epilogue_kernel_compiles_for_hopper_with_vector_access() -> None:
    """Under tf32 PyTorch's product with our epilogue kernel ranks first (cuBLAS's TF32
    products outrun the tiled kernel's): the kernel reads the product's tiles and the residual
    and writes the output in 16-byte vectors (32 values a thread: 8 of them a tensor), the bias
    row once a thread, without spills, at the suite's GEMM + epilogue task's size."""
    pytest.importorskip("triton")
    path = str(ROOT / "benchmarks" / "level2" / "02_gemm_scale_residual_clamp.py")
    script = f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check, global_loads, global_stores
        from kernelwright.evaluate.precision import apply_policy
        from kernelwright.records import Precision
        from kernelwright.task import load_task
        plan = plan_task(load_task({path!r}, "full"), "cuda", "full", isolate=False,
                         precision="tf32")
        apply_policy(Precision("tf32"))
        first = plan.designs[0]
        rows = [[list(first.skills), r.kernel, r.ok, r.spill_bytes, global_loads(r.ptx),
                 global_stores(r.ptx), r.error[:300]]
                for r in compile_check(plan.render(first), {path!r}, "full", keep_ptx=True,
                                       precision="tf32")]
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=600)
    (row,) = rows
    skills, kernel, ok, spill, loads, stores, error = row
    assert skills == ["gemm-vendor"] and kernel == "gemm_0_kernel", row
    assert ok, error
    assert spill in (0, None), spill
    scalar = sum(n for form, n in loads.items() if ".v" not in form)
    assert loads.get("ld.global.v4.b32") == 16 and scalar <= 1, loads
    assert stores == {"st.global.v4.b32": 8}, stores
