"""Process replay (tinygrad's habit): the emitted source of fixed (task, design, params) must match
the checked-in snapshot, so any change to what kernelwright writes is seen in review.

Refresh the snapshots after an intended change with::

    KERNELWRIGHT_UPDATE_GOLDEN=1 python -m pytest tests/golden

Snapshots are made with the CPU test environment's torch (node names come from torch.export).
"""

from __future__ import annotations

import difflib
import functools
import os
from pathlib import Path

import pytest

from kernelwright.design.capture import capture_path
from kernelwright.design.choices import Design
from kernelwright.design.emit import emit
from kernelwright.design.fusion import fuse
from kernelwright.design.lower import lower
from kernelwright.design.recognise_attention import recognise_attention
from kernelwright.design.structures import group_options, rank_designs
from kernelwright.skills.library import SkillLibrary

HERE = Path(__file__).parent
UPDATE = os.environ.get("KERNELWRIGHT_UPDATE_GOLDEN") == "1"  # read at import: fixtures clear it

# task -> (its kernel family, skills the design must hold, fixed parameters for every group);
# snapshots live in snapshots/<family>/<task>.py.snap
CASES = {
    "softmax": ("reduction", ("row-onepass", "online-softmax"), {"ROWS": 1, "WARPS": 4}),
    "softmax_looped": (
        "reduction",
        ("row-looped", "online-softmax"),
        {"LOOP_BLOCK": 1024, "LOOP_ROWS": 1, "LOOP_WARPS": 8},
    ),
    "layer_norm": (
        "reduction",
        ("row-looped", "welford"),
        {"LOOP_BLOCK": 256, "LOOP_ROWS": 1, "LOOP_WARPS": 4},
    ),
    "cumsum_reverse": (
        "scan",
        ("scan-rows",),
        {"BLOCK_N": 256, "ROWS": 1, "WARPS": 4, "STAGES": 3},
    ),
    "max_pool2d": ("pool", ("pool-window",), {"BLOCK_W": 32, "ROWS": 4, "STEPS": 2, "WARPS": 4}),
    "mse_loss": (
        "reduction",
        ("split-reduction",),
        {"LOOP_BLOCK": 1024, "SPLIT_PROGRAMS": 64, "LOOP_WARPS": 8},
    ),
    "prelu": ("pointwise", ("elementwise-rows",), {"BLOCK_N": 256, "TILE": 1024, "WARPS": 4}),
    "moe_topk": ("topk", ("topk-rounds",), {"ROWS": 16, "TILE": 2048, "WARPS": 4}),
    "cross_entropy": (
        "reduction",
        ("row-looped", "online-softmax"),
        {"LOOP_BLOCK": 1024, "LOOP_ROWS": 1, "LOOP_WARPS": 8},
    ),
    "linear_residual": ("gemm", ("gemm-tiled", "gemm-tma-loads"), {"STAGES": 3, "WARPS": 8}),
    "gemm_split_k": ("gemm", ("gemm-split-k", "gemm-tma-loads"), {"SPLIT_PROGRAMS": 264}),
    "conv_relu_bias": ("conv", ("conv-implicit-gemm",), {"STAGES": 3, "WARPS": 8}),
    "conv_depthwise": ("conv", ("conv-direct",), {"BLOCK_M": 128, "BLOCK_N": 16, "WARPS": 4}),
    "conv_transpose_upsample": (
        "conv",
        ("conv-transposed-implicit-gemm",),
        {"STAGES": 3, "WARPS": 8},
    ),
    "causal_attention": ("attention", ("attention-flash",), {"BLOCK_M": 128, "BLOCK_N": 64}),
    "written_attention": ("attention", ("attention-flash",), {"BLOCK_M": 64, "BLOCK_N": 32}),
    "attention_decode": (
        "attention",
        ("attention-decode",),
        {"BLOCK_N": 64, "SPLIT_PROGRAMS": 528, "WARPS": 4},
    ),
}


@functools.cache
def render(case: str) -> str:
    """The emitted source of ``case``, made once a test process: both tests below read it (a
    capture at full size, seconds for the attention tasks)."""
    _, skills, params = CASES[case]
    task = HERE / "tasks" / f"{case.removesuffix('_looped')}.py"
    part = fuse(lower(recognise_attention(capture_path(task, "full"))))
    library = SkillLibrary.builtin()
    designs = rank_designs([group_options(part, g, library) for g in part.fused], 30)
    design = next(d for d in designs if all(s in d.skills for s in skills))
    fixed = Design(tuple(c.with_params({**c.params, **params}) for c in design.choices))
    return emit(part, fixed, task.read_text(), task_name=task.stem, size="full")


@pytest.mark.parametrize("case", sorted(CASES))
def test_emitted_source_matches_snapshot(case: str) -> None:
    got = render(case)
    snap = HERE / "snapshots" / CASES[case][0] / f"{case}.py.snap"
    if UPDATE or not snap.exists():
        snap.write_text(got)
        if not UPDATE:
            pytest.fail(f"wrote a new snapshot {snap.name}; check it in")
        return
    want = snap.read_text()
    if got != want:
        diff = "".join(
            difflib.unified_diff(
                want.splitlines(True), got.splitlines(True), "snapshot", "emitted", n=2
            )
        )
        pytest.fail(
            f"{case}: the emitted source changed (KERNELWRIGHT_UPDATE_GOLDEN=1 to accept):\n"
            f"{diff[:6000]}"
        )


@pytest.mark.parametrize("case", sorted(CASES))
def test_emitted_source_passes_the_guards_static_checks(case: str) -> None:
    """What kernelwright writes is judged by the same guard as any candidate: a helper rendered
    into its designs that the guard refuses (a call it reserves for hostile code) would have
    every design that uses it rejected before it runs."""
    import ast

    from kernelwright.evaluate.guard.registry import GuardContext, run_checks

    source = render(case)
    violations = run_checks("static", GuardContext(source, ast.parse(source), "cuda"))
    assert violations == [], [f"{v.check}: {v.reason}" for v in violations]
