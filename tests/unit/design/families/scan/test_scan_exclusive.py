"""Exclusive scans (each position gets the scan of the positions before it), written as a scan
of a shifted tensor: lowered to one scan kernel that reads each step's predecessor, checked
against PyTorch under the interpreter; near misses keep their own meaning."""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import designs_for, scan_task, write_task

CAT = "torch.cat([torch.zeros_like(x[:, :1]), torch.cumsum(x[:, :-1], dim=1)], dim=1)"
PAD = "torch.cumsum(F.pad(x, (1, 0))[:, :-1], dim=1)"
EXCLUSIVE = {
    "cat-rows": (CAT, "torch.randn(7, 100)", "torch.randn(3, 33)"),
    "pad-rows": (PAD, "torch.randn(7, 100)", "torch.randn(2, 1)"),
    "narrow-select": (  # KernelBench's spelling: a zero column shaped from x's first one
        "torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), "
        "torch.cumsum(x.narrow(1, 0, x.size(1) - 1), dim=1)), dim=1)",
        "torch.randn(5, 37)",
        "torch.randn(2, 65)",
    ),
    "product": (
        "torch.cumprod(F.pad(x, (1, 0), value=1.0)[:, :-1], dim=1)",
        "torch.rand(7, 100) * 0.5 + 0.75",
        "torch.rand(2, 40) + 0.5",
    ),
    "cat-columns": (CAT, "torch.randn(3, 37, 20)", "torch.randn(2, 9, 5)"),
}
PARAMS = {"BLOCK_N": 16, "BLOCK_S": 4, "COLS": 4, "STAGES": 2}


@pytest.mark.parametrize("case", sorted(EXCLUSIVE))
def test_an_exclusive_scan_is_one_kernel_reading_each_predecessor(check, case: str) -> None:
    expr, inputs, variant = EXCLUSIVE[case]
    (src,) = check(scan_task(expr, "", inputs, variant), params=PARAMS)
    forward = src[src.index("class ModelNew") :]
    # neither the shifted copy nor the concatenation is made: the kernel loads one step back
    assert "torch.cat" not in forward and "constant_pad_nd" not in forward
    assert "prev_mask = " in src


@pytest.mark.parametrize(
    "expr",
    [
        # a fill other than the neutral value: ones before a sum
        "torch.cat([torch.ones_like(x[:, :1]), torch.cumsum(x[:, :-1], dim=1)], dim=1)",
        # the scan's own result also returned: it must be written
        "torch.cat([torch.zeros_like(x[:, :1]), (c := torch.cumsum(x[:, :-1], dim=1))], dim=1)"
        " + c.sum(dim=1, keepdim=True)",
        # padded after, not before: a scan followed by a neutral step
        "torch.cumsum(F.pad(x, (0, 1))[:, 1:], dim=1)",
    ],
    ids=["ones-before-a-sum", "scan-read-twice", "padded-after"],
)
def test_near_misses_are_not_exclusive_scans(tmp_path: Path, check, expr: str) -> None:
    body = scan_task(expr, "", "torch.randn(5, 37)", "torch.randn(2, 9)")
    part, _ = designs_for(write_task(tmp_path, body))
    assert not any(
        n.target == "kw.scan" and len(n.args) > 4 and n.args[4] for n in part.graph.nodes
    )
    check(body, params=PARAMS)  # still computed as written
