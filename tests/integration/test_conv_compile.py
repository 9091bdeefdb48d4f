"""The convolution kernels compile for sm_90 at KernelBench level-2 sizes: the implicit GEMM on
Hopper tensor cores (wgmma) with the math the policy asks for (3xTF32 under fp32, TF32 under
tf32), within an SM's shared memory, without spilling; the direct kernel of grouped convolutions
and of shallow inputs without spilling. Runs in a child without the interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_child import PLAN_IMPORTS, run_compile_script

ROOT = Path(__file__).resolve().parents[2]
TASKS = [
    "level2/1_Conv2D_ReLU_BiasAdd",  # 3x3, 64 -> 128 channels, 128 x 128 images
    "level2/54_Conv2d_Multiply_LeakyReLU_GELU",  # 3x3, 64 -> 64, a per-channel scale
]
SMEM = 227 * 1024  # an H200 SM's shared memory a block may take
WGMMA = r"wgmma\.mma_async[\w.]*?\.f32\.(\w+)\.\w+"
COPY = r"cp\.async\.c[ag]\.shared\.global \[[^]]*\], \[[^]]*\], (\w+)"  # its bytes


def first_designs(paths: list[str], policies: tuple[str, ...] = ("fp32",),
                  layouts: tuple[int | None, ...] = (None,),
                  params: dict[str, int] | None = None) -> list[dict]:
    """Each task's first design at full size compiled for sm_90 under each policy (and with
    ``CHANNELS_LAST`` set to each layout; None: the design's own; ``params`` set on every
    group): a row a kernel."""
    script = f"""
        import dataclasses, json, re
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.evaluate.precision import apply_policy
        from kernelwright.records import Precision
        from kernelwright.task import load_task
        rows = []
        for path in {paths!r}:
            plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
            design = plan.designs[0]
            for layout in {list(layouts)!r}:
                fixed = {params or {}!r} if layout is None else {{**{params or {}!r},
                                                                  "CHANNELS_LAST": layout}}
                choices = tuple(dataclasses.replace(c, params={{**c.params, **fixed}})
                                for c in design.choices)
                source = plan.render(dataclasses.replace(design, choices=choices))
                for policy in {list(policies)!r}:
                    apply_policy(Precision(policy))  # the wrappers read the flags per call
                    for r in compile_check(source, path, "full", keep_ptx=True):
                        rows.append(dict(
                            task=path.rsplit("/", 1)[-1][:-3], policy=policy, layout=layout,
                            skills=list(design.skills), kernel=r.kernel, ok=r.ok,
                            spill=r.spill_bytes, shared=r.shared_bytes,
                            mma=sorted(set(re.findall({WGMMA!r}, r.ptx))),
                            n_mma=len(re.findall(r"wgmma\\.mma_async", r.ptx)),
                            copies=sorted(set(re.findall({COPY!r}, r.ptx))),
                            error=r.error[:300]))
        print(json.dumps(rows))
        """
    return run_compile_script(script, timeout=900)  # type: ignore[no-any-return]


def assert_compiled(row: dict) -> None:
    """Compiled, without spills, within an SM's shared memory."""
    assert row["ok"], (row["task"], row["kernel"], row["error"])
    assert row["spill"] in (0, None) and row["shared"] <= SMEM, row


@pytest.mark.sm90
def test_implicit_gemm_compiles_for_hopper_without_spills() -> None:
    pytest.importorskip("triton")
    paths = [str(ROOT / "kernelbench" / f"{t}.py") for t in TASKS]
    script = f"""
        import json, re
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.evaluate.precision import apply_policy
        from kernelwright.records import Precision
        from kernelwright.task import load_task
        rows = []
        for path in {paths!r}:
            plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
            design = plan.designs[0]
            for policy in ("fp32", "tf32"):
                apply_policy(Precision(policy))
                for r in compile_check(plan.render(design), path, "full", keep_ptx=True):
                    mma = sorted(set(re.findall({WGMMA!r}, r.ptx)))
                    rows.append([path, policy, design.skills, r.kernel, r.ok, r.registers,
                                 r.spill_bytes, r.shared_bytes, mma, len(re.findall(
                                 r"wgmma\\.mma_async", r.ptx)), r.error[:300],
                                 "max.NaN.f32" in r.ptx])
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=900)
    # the copy of the input to NHWC (the default layout) compiles too; the checks below are
    # the convolution's (its TMA kernel: 2-D, stride 1, channels-last)
    for r in rows:
        assert r[4] and r[6] in (0, None), r
    rows = [r for r in rows if r[3] == "conv_0_tma_kernel"]
    # task 1's ReLU keeps NaN as PyTorch's does (the plain max.f32 would drop it)
    assert all(r[-1] for r in rows if "1_Conv2D_ReLU" in r[0]), rows
    rows = [r[:-1] for r in rows]
    assert {(Path(p).stem, policy) for p, policy, *_ in rows} == {
        (Path(t).name, policy) for t in TASKS for policy in ("fp32", "tf32")
    }
    for path, policy, skills, kernel, ok, _regs, spill, shared, mma, _n_mma, error in rows:
        assert "conv-implicit-gemm" in skills, (path, skills)
        assert ok, (path, policy, kernel, error)
        assert spill in (0, None), (path, policy, kernel, spill)
        assert shared <= SMEM, (path, policy, kernel, shared)
        assert mma == ["tf32"], (path, policy, kernel, mma)
    # 3xTF32 is three tensor-core products a step where TF32 is one
    count = {(Path(p).stem, policy): n for p, policy, *_, n, _ in rows}
    for t in TASKS:
        name = Path(t).name
        assert count[(name, "fp32")] == 3 * count[(name, "tf32")] > 0, count


@pytest.mark.sm90
def test_the_channels_last_implicit_gemm_copies_whole_rows_of_channels() -> None:
    """``CHANNELS_LAST`` 1 at both tasks' full sizes, fp32: compiles without spills within
    shared memory, the same tensor-core products as the NCHW kernel, and every asynchronous
    copy into shared memory 16 bytes (one tap's channels are contiguous), where the NCHW
    kernel gathers its patch block 4 bytes a copy (pointer loads: ``TMA`` 0)."""
    pytest.importorskip("triton")
    rows = first_designs([str(ROOT / "kernelbench" / f"{t}.py") for t in TASKS], layouts=(0, 1),
                         params={"TMA": 0})
    convs = [r for r in rows if r["kernel"] == "conv_0_kernel"]
    assert {(r["task"], r["layout"]) for r in convs} == {
        (Path(t).name, layout) for t in TASKS for layout in (0, 1)
    }
    products = {}
    for r in convs:
        assert_compiled(r)
        products[(r["task"], r["layout"])] = r["n_mma"]
        if r["layout"] == 1:
            assert r["copies"] == ["0x10"], r
        else:
            assert "0x4" in r["copies"], r
    for t in TASKS:
        assert products[(Path(t).name, 0)] == products[(Path(t).name, 1)] > 0, products
    # the copy of the input to NHWC is the channels-last design's second kernel
    assert {r["kernel"] for r in rows if r["layout"] == 1} == {"conv_0_kernel", "_nhwc_copy_kernel"}


@pytest.mark.sm90
def test_the_tma_implicit_gemm_loads_boxes_for_the_tensor_cores() -> None:
    """``TMA`` 1 at both tasks' full sizes, under fp32 (3xTF32) and bf16: the TMA kernel
    compiles without spills within shared memory, loads both operands by tensor-memory-
    accelerator copies (no pointer copies into shared memory), and makes the tensor-core
    products of the pointer-load kernel, scaled by their K blocks' widths."""
    pytest.importorskip("triton")
    paths = [str(ROOT / "kernelbench" / f"{t}.py") for t in TASKS]
    script = f"""
        import dataclasses, json, re
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.evaluate.precision import apply_policy
        from kernelwright.records import Precision
        from kernelwright.task import load_task
        rows = []
        for path in {paths!r}:
            for policy in ("fp32", "bf16"):
                apply_policy(Precision(policy))
                plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False,
                                 precision=policy)
                (design,) = [d for d in plan.designs if "conv-implicit-gemm" in d.skills]
                sources = [plan.render(dataclasses.replace(design, choices=tuple(
                    dataclasses.replace(c, params={{**c.params, "TMA": tma}})
                    for c in design.choices))) for tma in (0, 1)]
                for source in sources:
                    for r in compile_check(source, path, "full", keep_ptx=True,
                                           precision=policy):
                        rows.append(dict(
                            task=path.rsplit("/", 1)[-1][:-3], policy=policy,
                            kernel=r.kernel, ok=r.ok, spill=r.spill_bytes,
                            shared=r.shared_bytes, error=r.error[:300],
                            tma=len(re.findall(r"cp\\.async\\.bulk\\.tensor", r.ptx)),
                            copies=len(re.findall(r"cp\\.async\\.c[ag]", r.ptx)),
                            n_mma=len(re.findall(r"wgmma\\.mma_async", r.ptx)),
                            block_k=re.findall(r"BLOCK_K=(\\d+)", r.constexprs)))
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=900)
    by = {(r["task"], r["policy"], r["kernel"]): r for r in rows}
    for t in TASKS:
        for policy in ("fp32", "bf16"):
            tma = by[(Path(t).name, policy, "conv_0_tma_kernel")]
            assert_compiled(tma)
            assert tma["tma"] > 0 and tma["copies"] == 0, tma
            # the pointer-load kernel (TMA 0, and the wrapper's fallback): K blocks of 128
            # bytes at most, so fp32 TMA steps of 64 values make twice its products a step
            pointers = by[(Path(t).name, policy, "conv_0_kernel")]
            assert_compiled(pointers)
            (tma_k,), (pointer_k,) = tma["block_k"], pointers["block_k"]
            assert int(pointer_k) == min(int(tma_k), 32 if policy == "fp32" else 64), pointers
            assert tma["n_mma"] * int(pointer_k) == pointers["n_mma"] * int(tma_k) > 0, (
                tma, pointers)


@pytest.mark.sm90
def test_the_direct_grouped_kernel_compiles_for_hopper_without_spills() -> None:
    """The suite's depthwise task and the held-out one (a channel multiplier, 5 x 5, stride 2)
    at full size: the conv-direct design compiles, without spills."""
    pytest.importorskip("triton")
    paths = [str(ROOT / "benchmarks" / "level2" / "11_depthwise_conv_bn_relu6.py"),
             str(ROOT / "heldout" / "level2" / "35_depthwise_conv_multiplier_silu.py")]
    script = f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.task import load_task
        rows = []
        for path in {paths!r}:
            plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
            (design,) = [d for d in plan.designs if "conv-direct" in d.skills]
            for r in compile_check(plan.render(design), path, "full"):
                rows.append([path, r.kernel, r.ok, r.spill_bytes, r.error[:300]])
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=600)
    assert {Path(p).stem for p, *_ in rows} == {Path(p).stem for p in paths}
    for path, kernel, ok, spill, error in rows:
        assert ok, (path, kernel, error)
        assert spill in (0, None), (path, kernel, spill)


@pytest.mark.sm90
def test_the_vendor_epilogue_on_channels_last_output_compiles_for_hopper() -> None:
    """Under tf32 and bf16 cuDNN's convolution runs channels-last (under bf16 ranked after the
    implicit GEMM with TMA loads, its measured peer; under tf32 first): its epilogue kernel,
    reading the NHWC output as stored (a unit channel stride, which Triton specialises on) and
    writing NCHW, compiles for sm_90 at level-2 task 1's size without spills; under fp32 it
    reads NCHW. Either way the output is read in vectors and each per-channel operand loaded
    once a thread. PyTorch's meta convolution returns NCHW whatever its input's layout, where
    cuDNN returns a channels-last input's output channels-last: the file's convolution is made
    to do the same here."""
    pytest.importorskip("triton")
    path = str(ROOT / "kernelbench" / f"{TASKS[0]}.py")
    script = f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check, global_loads, global_stores
        from kernelwright.evaluate.precision import apply_policy
        from kernelwright.records import Precision
        from kernelwright.task import load_task
        helper = chr(10).join([
            "def _as_cudnn(x, *args):",
            "    y = torch.ops.aten.convolution.default(x, *args)",
            "    if x.is_contiguous(memory_format=torch.channels_last):",
            "        y = y.contiguous(memory_format=torch.channels_last)",
            "    return y",
        ])
        rows = []
        for policy in ("tf32", "bf16", "fp32"):
            plan = plan_task(load_task({path!r}, "full"), "cuda", "full", isolate=False,
                             precision=policy)
            (design,) = [d for d in plan.designs if list(d.skills) == ["conv-vendor"]]
            apply_policy(Precision(policy))
            source = plan.render(design)
            call = "torch.ops.aten.convolution.default("
            assert call in source
            source = source.replace(call, "_as_cudnn(") + chr(10) + helper + chr(10)
            rows += [[policy, plan.designs.index(design), r.kernel, r.ok, r.spill_bytes,
                      r.constexprs, global_loads(r.ptx), global_stores(r.ptx), r.error[:300]]
                     for r in compile_check(source, {path!r}, "full", keep_ptx=True,
                                            precision=policy)]
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=600)
    assert {policy for policy, *_ in rows} == {"tf32", "bf16", "fp32"}
    # the channels-last copy of the input (tf32 and bf16): 16-byte loads and stores only
    copies = {policy: (loads, stores) for policy, _, kernel, _, _, _, loads, stores, _ in rows
              if kernel == "_nhwc_copy_kernel"}
    assert set(copies) == {"tf32", "bf16"}, copies
    for loads, stores in copies.values():
        assert set(loads) == {"ld.global.v4.b32"} and set(stores) == {"st.global.v4.b32"}
    for policy, rank, kernel, ok, spill, consts, loads, stores, error in rows:
        assert ok, (policy, kernel, error)
        assert spill in (0, None), (policy, kernel, spill)
        if kernel == "_nhwc_copy_kernel":
            continue
        # second under bf16 (the TMA implicit GEMM first), first under tf32, and reading the
        # output as it wrote it: NHWC where cuDNN uses tensor cores (a unit channel stride),
        # NCHW under fp32 (a unit position stride)
        assert rank == {"bf16": 1, "tf32": 0}.get(policy, rank), (policy, rank)
        layout = "sy_c=1" if policy != "fp32" else "sy_p=1"
        assert layout in consts.split(", "), (policy, consts)
        # the output read in vectors; each value of the two per-channel operands a thread uses
        # loaded once: one channel a thread under fp32 (NCHW, 32 positions x 128 channels in
        # 4 warps) and tf32 (16-byte vectors in the read's layout); under bf16 Triton computes
        # in the store's layout, 8 channels a thread (64 over 8 warps), loaded as [N] vectors
        # (ROW_VECTORS), not once per position a thread holds (64 scalar loads)
        scalar = sum(n for form, n in loads.items() if ".v" not in form)
        most = 2 * 8 if policy == "bf16" else 2
        assert scalar <= most and sum(loads.values()) > scalar, (policy, loads)
        # NCHW stores in vectors: an output row of 126 positions breaks no run, since rows and
        # columns are indexed as one run of positions
        assert stores and all(".v" in form for form in stores), (policy, stores)


@pytest.mark.sm90
def test_the_transposed_phase_kernel_compiles_for_hopper_without_spills() -> None:
    """The suite's upsampling task (4 x 4, stride 2, 128 -> 64 channels) and KernelBench level-2
    task 93 (4 x 4, stride 2, no padding, 64 -> 128) at full size under fp32 and tf32: the
    phase kernel compiles without spills within shared memory, on tf32 wgmma (three products
    a step under fp32), every copy into shared memory 16 bytes."""
    pytest.importorskip("triton")
    paths = [str(ROOT / "benchmarks" / "level2" / "09_conv_transpose2d_leaky_scale.py"),
             str(ROOT / "kernelbench" / "level2" / "93_ConvTranspose2d_Add_Min_GELU_Multiply.py")]
    rows = first_designs(paths, policies=("fp32", "tf32"))
    convs = [r for r in rows if r["kernel"] == "conv_0_kernel"]
    assert {(r["task"], r["policy"]) for r in convs} == {
        (Path(p).stem, policy) for p in paths for policy in ("fp32", "tf32")
    }
    count = {}
    for r in convs:
        assert r["skills"] == ["conv-transposed-implicit-gemm"], r
        assert_compiled(r)
        assert r["mma"] == ["tf32"] and r["copies"] == ["0x10"], r
        count[(r["task"], r["policy"])] = r["n_mma"]
    for p in paths:
        assert count[(Path(p).stem, "fp32")] == 3 * count[(Path(p).stem, "tf32")] > 0, count


@pytest.mark.sm90
def test_1d_and_dilated_transposed_convolutions_compile_for_hopper_without_spills() -> None:
    """KernelBench level-1 tasks 67 (a 1-D convolution, lowered to height 1) and 79 (a 1-D
    transposed one of stride 2 and dilation 2, whose phases read every tap) at full size,
    fp32: the implicit GEMM (TMA loads: stride 1) and the phase kernel compile without
    spills, on 3xTF32 wgmma."""
    pytest.importorskip("triton")
    paths = [str(ROOT / "kernelbench" / "level1" / "67_conv_standard_1D.py"),
             str(ROOT / "kernelbench" / "level1" / "79_conv_transposed_1D_asymmetric_input_"
                 "square_kernel___padded____strided____dilated__.py")]
    convs = [r for r in first_designs(paths)
             if r["kernel"] in ("conv_0_kernel", "conv_0_tma_kernel")]
    assert [(r["skills"], r["kernel"]) for r in convs] == [
        (["conv-implicit-gemm"], "conv_0_tma_kernel"),
        (["conv-transposed-implicit-gemm"], "conv_0_kernel")]
    for r in convs:
        assert_compiled(r)
        assert r["mma"] == ["tf32"], r


@pytest.mark.sm90
def test_the_3d_channels_last_kernels_compile_for_hopper_without_spills() -> None:
    """KernelBench level-2 tasks 47 (a 3 x 3 x 3 convolution, 32 -> 64 channels) and 26 (a
    transposed one of stride 2) at full size, fp32: the channels-last implicit GEMM and the
    phase kernel compile without spills within shared memory, on 3xTF32 wgmma, every copy into
    shared memory 16 bytes."""
    pytest.importorskip("triton")
    paths = [str(ROOT / "kernelbench" / "level2" / "47_Conv3d_Mish_Tanh.py"),
             str(ROOT / "kernelbench" / "level2" / "26_ConvTranspose3d_Add_HardSwish.py")]
    convs = [r for r in first_designs(paths) if r["kernel"] == "conv_0_kernel"]
    assert [(r["task"], r["skills"]) for r in convs] == [
        ("47_Conv3d_Mish_Tanh", ["conv-implicit-gemm"]),
        ("26_ConvTranspose3d_Add_HardSwish", ["conv-transposed-implicit-gemm"]),
    ]
    for r in convs:
        assert_compiled(r)
        assert r["mma"] == ["tf32"] and r["copies"] == ["0x10"], r


@pytest.mark.sm90
def test_narrow_shallow_and_grouped_transposed_convolutions_compile_for_hopper() -> None:
    """KernelBench level-1 tasks 58 (16 output channels), 70 (24), 81 (32 taps a phase, stride 5
    past its dilated kernel) and 75 (4 groups of 16 output channels, strided and dilated) at
    full size, fp32: the phase kernel compiles without spills within shared memory, on 3xTF32
    wgmma."""
    pytest.importorskip("triton")
    level1 = ROOT / "kernelbench" / "level1"
    names = ["58_conv_transposed_3D__asymmetric_input__asymmetric_kernel",
             "70_conv_transposed_3D__asymmetric_input__square_kernel",
             "81_conv_transposed_2D_asymmetric_input_square_kernel___dilated____padded____"
             "strided__",
             "75_conv_transposed_2D_asymmetric_input_asymmetric_kernel_strided__grouped____"
             "padded____dilated__"]
    convs = [r for r in first_designs([str(level1 / f"{n}.py") for n in names])
             if r["kernel"] == "conv_0_kernel"]
    assert [r["task"] for r in convs] == names
    for r in convs:
        assert r["skills"] == ["conv-transposed-implicit-gemm"], r
        assert_compiled(r)
        assert r["mma"] == ["tf32"], r


@pytest.mark.sm90
def test_the_direct_kernel_of_shallow_inputs_compiles_for_hopper_without_spills() -> None:
    """KernelBench level-1 task 59 (one group, 3 -> 64 channels, a 3 x 3 x 1 filter over
    NCDHW) and level-2 task 6 (3 -> 16 channels, 3 x 3 x 3) at full size: the direct kernel
    compiles without spills, on CUDA cores (no wgmma)."""
    pytest.importorskip("triton")
    paths = [str(ROOT / "kernelbench" / "level1"
                 / "59_conv_standard_3D__asymmetric_input__square_kernel.py"),
             str(ROOT / "kernelbench" / "level2" / "6_Conv3d_Softmax_MaxPool_MaxPool.py")]
    convs = [r for r in first_designs(paths) if r["kernel"] == "conv_0_kernel"]
    assert {r["task"] for r in convs} == {Path(p).stem for p in paths}
    for r in convs:
        assert "conv-direct" in r["skills"], r
        assert_compiled(r)
        assert r["n_mma"] == 0, r


@pytest.mark.sm90
def test_16_bit_implicit_gemms_take_k_blocks_of_64_and_fit_the_sm() -> None:
    """Under bf16 the implicit GEMM (level-2 task 1, TMA loads) and the phase kernel (task
    93, second behind cuDNN there) default to K blocks of 64 values (128-byte rows, measured
    faster than 32 on the H200): at full size both compile without spills within an SM's
    shared memory (the wrapper takes as many stages as fit), on bf16 wgmma, every pointer copy
    16 bytes (the TMA kernel makes none)."""
    pytest.importorskip("triton")
    paths = [str(ROOT / "kernelbench" / f"{TASKS[0]}.py"),
             str(ROOT / "kernelbench" / "level2" / "93_ConvTranspose2d_Add_Min_GELU_Multiply.py")]
    script = PLAN_IMPORTS + f"""
        rows = []
        for path, plan in bf16_plans({paths!r}):
            design = next(d for d in plan.designs if d.skills[0] != "conv-vendor")
            for r in compile_check(plan.render(design), path, "full", keep_ptx=True,
                                   precision="bf16"):
                if r.kernel in ("conv_0_kernel", "conv_0_tma_kernel"):
                    rows.append(dict(task=path, skills=list(design.skills), kernel=r.kernel,
                                     block_k=design.choices[0].params["BLOCK_K"], ok=r.ok,
                                     spill=r.spill_bytes, shared=r.shared_bytes,
                                     mma=sorted(set(re.findall({WGMMA!r}, r.ptx))),
                                     copies=sorted(set(re.findall({COPY!r}, r.ptx))),
                                     error=r.error[:300]))
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=900)
    skills = [r["skills"] for r in rows]
    assert skills == [["conv-implicit-gemm"], ["conv-transposed-implicit-gemm"]], skills
    assert [r["kernel"] for r in rows] == ["conv_0_tma_kernel", "conv_0_kernel"], rows
    for r in rows:
        assert r["block_k"] == 64, r
        assert_compiled(r)
        copies = [] if r["kernel"] == "conv_0_tma_kernel" else ["0x10"]
        assert r["mma"] == ["bf16"] and r["copies"] == copies, r
