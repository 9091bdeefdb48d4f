"""Products whose epilogue masks positions (``torch.triu``/``tril``, a ``masked_fill`` by
position ranges): tiles the mask replaces entirely skip their K loop (``masked_tiles.py``), as
the file's header says.

The tile test is checked against every position of the tile it bounds, and the kernels against
PyTorch under the interpreter with 16 x 16 tiles, so that both skipped and computed tiles (and
edge tiles past M and N) occur."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from design_checks import forward_task, write_task

from kernelwright.design.capture import capture_path
from kernelwright.design.families.gemm.masked_tiles import product_gates, tile_live_test
from kernelwright.design.fusion import fuse
from kernelwright.design.lower import lower

SMALL = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}
SKIPS = "k_end = tl.where("  # the loop end of a tile the mask may replace

MASKED = {
    "triu": ("torch.triu(a @ b)", "torch.randn(70, 45), torch.randn(45, 61)"),
    "tril-offset-then-add": (
        "torch.tril(a @ b, diagonal=-3) + 1.0",
        "torch.randn(53, 20), torch.randn(20, 77)",
    ),
    "triu-above-the-diagonal": (
        "torch.triu(a @ b, 18)",
        "torch.randn(64, 33), torch.randn(33, 64)",
    ),
    "batched-tril": (
        "torch.tril(torch.bmm(a, b))",
        "torch.randn(3, 40, 17), torch.randn(3, 17, 35)",
    ),
    "masked-fill-by-position": (
        "(a @ b).masked_fill(torch.arange(b.shape[1], device=a.device)"
        " > 2 * torch.arange(a.shape[0], device=a.device).unsqueeze(1) + 5, -2.0)",
        "torch.randn(50, 24), torch.randn(24, 70)",
    ),
    "product-in-the-false-branch": (
        "torch.where(torch.arange(a.shape[0], device=a.device).unsqueeze(1)"
        " < torch.arange(b.shape[1], device=a.device) - 7, 0.5, torch.relu(a @ b))",
        "torch.randn(45, 31), torch.randn(31, 52)",
    ),
}


UNGATED = {  # x = a @ b
    # the product itself is an output too: every tile computes it
    "the-product-too": ("torch.triu(x), x", "torch.randn(40, 24), torch.randn(24, 40)"),
    # a test on the product's values, not on positions
    "a-value-test": ("torch.where(x > 0, x, 0.0)", "torch.randn(40, 24), torch.randn(24, 40)"),
    # the product in both branches
    "both-branches": (
        "torch.where(torch.arange(a.shape[0], device=a.device).unsqueeze(1) > 3, x, 2 * x)",
        "torch.randn(40, 24), torch.randn(24, 40)",
    ),
}


@pytest.mark.parametrize("case", sorted(MASKED) + sorted(UNGATED))
def test_masked_products_skip_masked_tiles_and_others_run_every_tile(check, case: str) -> None:
    """Both match PyTorch; only a product every output reads through a position mask has
    tiles that end their K loop early."""
    expr, inputs = MASKED.get(case) or UNGATED[case]
    body = forward_task(f"x = a @ b\n        return {expr}", inputs, params="a, b")
    for src in check(body, skills=("gemm-tiled",), params=SMALL):
        assert (SKIPS in src) == (case in MASKED)
        # the file's header says so
        assert ("position mask: output tiles it replaces" in src) == (case in MASKED)


def _gemm_group(tmp_path: Path, expr: str, inputs: str):  # type: ignore[no-untyped-def]
    path = write_task(tmp_path, forward_task(f"return {expr}", inputs, params="a, b"))
    part = fuse(lower(capture_path(path, "full")))
    (group,) = [g for g in part.groups if g.kind == "gemm"]
    (product,) = [n for n in group.nodes if part.graph.node(n).target == "aten.mm.default"]
    return part.graph, group, product


@pytest.mark.parametrize("diagonal", [-37, -5, 0, 3, 16, 40])
@pytest.mark.parametrize("which", ["triu", "tril"])
def test_the_tile_test_holds_exactly_where_some_position_of_the_tile_passes(
    tmp_path: Path, which: str, diagonal: int
) -> None:
    graph, group, product = _gemm_group(
        tmp_path, f"torch.{which}(a @ b, {diagonal})", "torch.randn(60, 8), torch.randn(8, 44)"
    )
    corners = {0: ("r0", "r1"), 1: ("c0", "c1")}
    live = tile_live_test(graph, group, product, corners)
    assert live is not None
    for bm, bn in itertools.product((16, 32), (16, 64)):
        for pm, pn in itertools.product(range(60 // bm + 1), range(44 // bn + 1)):
            r0, c0 = pm * bm, pn * bn
            scope = {"r0": r0, "r1": r0 + bm - 1, "c0": c0, "c1": c0 + bn - 1}
            passes = any(
                (c - r >= diagonal) if which == "triu" else (c - r <= diagonal)
                for r in range(r0, r0 + bm)
                for c in range(c0, c0 + bn)
            )
            assert eval(live, {}, scope) == passes, (which, diagonal, bm, bn, pm, pn, live)


def test_the_gate_of_a_triu_is_columns_less_rows(tmp_path: Path) -> None:
    graph, group, product = _gemm_group(
        tmp_path, "torch.triu(a @ b, 2) * 3.0", "torch.randn(30, 8), torch.randn(8, 30)"
    )
    (gate,) = product_gates(graph, group, product) or ()
    assert dict(gate.affine.coef) == {0: -1, 1: 1} and gate.affine.const == -2 and gate.op == ">="
