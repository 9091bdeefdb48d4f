"""Offsets past 2**31 - 1: the element-wise, reduction, scan, top-k and GEMM kernels take
INDEX_64 and then index in 64 bits (program ids, sizes and strides widened; a GEMM's strides
only). Tensors that large do not fit a CPU test, so the 64-bit path is forced on every launch at
small, odd shapes and checked against PyTorch under the interpreter; the wrapper's decision is
checked on meta tensors of the real sizes; tests/integration/test_index_64_compile.py compiles
it for sm_90 at such a size."""

from __future__ import annotations

from typing import Any

import pytest
from design_checks import forward_task, softmax_rows_task

# (what, task, skills a design must hold (none: every ranked design), parameters)
CASES: list[tuple[str, str, tuple[str, ...], dict[str, Any]]] = [
    ("flat", forward_task("return torch.relu(x) * 2.0", "torch.randn(37, 45)"),
     ("elementwise-flat",), {}),
    ("rows", forward_task("return x * y + 1.0", "torch.randn(37, 45), torch.randn(45)",
                          params="x, y"), ("elementwise-rows",), {}),
    ("softmax", forward_task("return torch.softmax(x, dim=-1)", "torch.randn(37, 45)"), (), {}),
    ("middle-axis", forward_task("return x.sum(dim=1)", "torch.randn(5, 37, 7)"), (), {}),
    # an index accumulator carried through the loop: its type follows the sweep's
    ("argmax-middle", forward_task("return x.argmax(dim=1)", "torch.randn(5, 37, 7)"), (), {}),
    ("argmin-rows", forward_task("return x.argmin(dim=-1)", "torch.randn(37, 45)"), (), {}),
    ("split", forward_task("return ((x - y) ** 2).mean()",
                           "torch.randn(64, 200), torch.randn(64, 200)", params="x, y"),
     ("split-reduction",), {"LOOP_BLOCK": 32, "LOOP_COLS": 8, "SPLIT_PROGRAMS": 8}),
    ("team", softmax_rows_task("(2, 33000)"), ("row-team",),
     {"TEAM_SLICE": 4096, "TEAM_WARPS": 4}),
    ("split-stats", softmax_rows_task("(2, 70001)"), ("row-split-stats",),
     {"SLICE": 32768, "LOOP_BLOCK": 1024, "LOOP_WARPS": 4}),
    ("cumsum", forward_task("return torch.cumsum(x, dim=-1)", "torch.randn(37, 45)"), (), {}),
    ("cumsum-column", forward_task("return torch.cumsum(x, dim=0)", "torch.randn(37, 45)"),
     (), {}),
    ("topk", forward_task("return torch.topk(x, 3, dim=-1)[0]", "torch.randn(37, 20)"), (), {}),
    # a GEMM widens its strides only (TMA tile coordinates stay 32-bit): pointer and TMA loads
    ("gemm", forward_task("return torch.relu(a @ b) + 1.0",
                          "torch.randn(37, 48), torch.randn(48, 40)", params="a, b"),
     ("gemm-tiled",), {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_64_bit_path_matches_pytorch(check, case) -> None:  # type: ignore[no-untyped-def]
    _, task, skills, params = case
    check(task, skills=skills, params=params, index_64=True)


def test_the_launch_indexes_in_64_bits_near_2_31_elements_or_a_slice_spanning_them() -> None:
    import torch

    from kernelwright.design.kernel.common import WRAPPER_HELPERS, index_64_test
    from kernelwright.design.kernel.emitter import KernelArgs

    args = KernelArgs(index_64=True)
    args.pointer("x"), args.pointer("y")
    args.strided.add("y")  # a slice: its span is checked, a plain tensor's element count
    test = "\n".join(index_64_test(args))
    assert "x.numel() >= 2**31 - 2**17 or _span_64(y)" in test
    scope: dict[str, object] = {}
    exec(WRAPPER_HELPERS["_span_64"], scope)

    def index_64(x: torch.Tensor, y: torch.Tensor) -> bool:
        found = {**scope, "x": x, "y": y}
        exec(test, found)
        return bool(found["INDEX_64"])

    meta = {"device": "meta"}
    small = torch.empty(3, **meta)
    assert not index_64(small, small)
    # the last block's indices run past the end: a block's margin below 2**31
    assert index_64(torch.empty(2**31 - 2**16, **meta), small)
    # KernelBench's middle-axis reductions (128 x 4096 x 4095) index in 32 bits
    assert not index_64(torch.empty(128, 4096, 4095, **meta), small)
    # 3072 elements 2**20 apart: a slice whose strides reach past 2**31
    assert index_64(small, torch.empty(3 * 2**30, **meta)[:: 2**20])
    assert not index_64(small, torch.empty(2**20, 8, **meta).t())
