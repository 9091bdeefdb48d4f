"""Shared memory of the GEMM kernels: the wrapper's pipeline depth (``_stages``) against what
the H200 asked for, and the skills' constraint on every tile the defaults and the tuner give."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from kernelwright.design.families.gemm import defaults  # noqa: F401 (registers the heuristics)
from kernelwright.design.families.gemm.helpers import PY_HELPERS
from kernelwright.design.families.gemm.spec import SMEM_BYTES
from kernelwright.skills.conditions import GemmShape, GroupFacts
from kernelwright.skills.heuristics import defaults_for
from kernelwright.skills.library import SkillLibrary

torch = pytest.importorskip("torch")

H200_BLOCK = 232448  # the shared memory an H200 block may take


def stages_helper() -> Any:  # the helper as the emitted file holds it
    scope = {"torch": torch}
    exec(PY_HELPERS["_stages"], scope)
    return scope["_stages"]


def operands(
    dtype: Any, k_major: bool = True
) -> tuple[Any, Any]:  # 1 x 1 views with the strides that matter
    lhs = torch.empty(8, 8, dtype=dtype)
    rhs = torch.empty(8, 8, dtype=dtype)
    return lhs, (rhs.T if k_major else rhs)


def asked(stages: int, bm: int, bn: int, bk: int, item: int, out: int) -> int:
    """The bytes Triton asked for on the H200 (less its 24 bytes of barriers)."""
    return stages * (bm + bn) * bk * item + bm * bn * out


def test_the_depths_that_failed_on_the_h200_are_cut_to_what_fits() -> None:
    stages = stages_helper()
    # linear + epilogue, tf32, BLOCK_K 64, 3 stages: asked 262168 (fp32 output tile)
    assert asked(3, 128, 128, 64, 4, 4) + 24 == 262168
    fp32 = operands(torch.float32)
    assert stages(3, 128, 128, 64, *fp32, 4, SMEM_BYTES) == 2
    # split-K's partial products, bf16, BLOCK_N 256 (TMA: 64 values of K), 3 stages: 278552
    assert asked(3, 128, 256, 64, 2, 4) + 24 == 278552
    bf16 = operands(torch.bfloat16)
    assert stages(3, 128, 256, 64, *bf16, 4, SMEM_BYTES) == 2
    # the tiled kernel with the same tile stores a bf16 output: 3 stages ran (0.188 ms)
    assert stages(3, 128, 256, 64, *bf16, 2, SMEM_BYTES) == 3


def test_a_32_bit_operand_not_k_major_keeps_a_block_for_its_transpose() -> None:
    stages = stages_helper()
    k_major = stages(8, 128, 128, 32, *operands(torch.float32), 4, SMEM_BYTES)
    row_major = stages(8, 128, 128, 32, *operands(torch.float32, k_major=False), 4, SMEM_BYTES)
    assert (k_major, row_major) == (5, 4)
    assert stages(16, 128, 128, 32, *operands(torch.bfloat16, k_major=False), 2, SMEM_BYTES) == 12


TILES = list(itertools.product([16, 32, 64, 128, 256], [16, 32, 64, 128, 256], [16, 32, 64, 128]))


@pytest.mark.parametrize("skill", ["gemm-tiled", "gemm-tall-skinny", "gemm-split-k"])
def test_every_tile_the_constraint_allows_fits_at_the_depth_the_wrapper_takes(skill: str) -> None:
    """For fp32 and 2-byte operands, K-major or not, and any output dtype: what the wrapper
    asks for stays within an H200 block's shared memory."""
    stages = stages_helper()
    spec = SkillLibrary.builtin().get(skill)
    allowed = 0
    for bm, bn, bk in TILES:
        if not spec.satisfies({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "WARPS": 8}):
            continue
        allowed += 1
        for dtype, k_major, out in itertools.product(
            (torch.float32, torch.bfloat16), (True, False), (2, 4)
        ):
            item = torch.empty((), dtype=dtype).element_size()
            k = bk * 4 // item  # TMA loads of 2-byte operands: twice the K values
            depth = stages(5, bm, bn, k, *operands(dtype, k_major), out, SMEM_BYTES)
            scratch = (bm + bn) * k * item if item == 4 and not k_major else 0
            total = asked(depth, bm, bn, k, item, out) + scratch
            assert depth >= 1 and total <= H200_BLOCK - 1024, (bm, bn, bk, dtype, k_major, out)
    assert allowed > 20


SHAPES = [(4096, 4096, 4096), (65536, 256, 4096), (512, 512, 131072), (100, 3000, 70)]


@pytest.mark.parametrize(
    ("skill", "heuristic"),
    [
        ("gemm-tiled", "gemm_tiled"),
        ("gemm-tall-skinny", "gemm_tall_skinny"),
        ("gemm-split-k", "gemm_split_k"),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_the_defaults_meet_their_skills_constraints(skill: str, heuristic: str, dtype: str) -> None:
    spec = SkillLibrary.builtin().get(skill)
    for m, n, k in SHAPES:
        facts = GroupFacts("gemm", dtypes=(dtype,), gemm=GemmShape(m, n, k))
        params = defaults_for(heuristic, facts)
        assert spec.satisfies(params), (m, n, k, params)
