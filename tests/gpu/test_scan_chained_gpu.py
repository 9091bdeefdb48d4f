"""The chained column scan on a real GPU: chunks that wait for the chunks before them
(design/families/scan/template.py, skill ``scan-chained``). The interpreter runs one program at
a time, so only these tests vouch for the look-back's synchronisation. Skipped without a GPU
(conftest)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "design"))

from design_checks import load_design, scan_task  # noqa: E402

# (expression, extra argument, inputs): thousands of steps over a few hundred positions, so the
# grid holds many more chunks than the GPU runs at once and look-backs really wait
CASES = {
    "masked-sum": (
        "torch.cumsum(x * mask.unsqueeze(-1), dim=1)",
        ", mask",
        "torch.randn(3, 5000, 300), torch.rand(3, 5000) < 0.7",
    ),
    "reverse-sum": (
        "torch.flip(torch.cumsum(torch.flip(x, dims=[1]), dim=1), dims=[1])",
        "",
        "torch.randn(8, 3001, 100)",
    ),
    "product": ("torch.cumprod(x, dim=1)", "", "torch.rand(4, 2000, 64) * 0.002 + 0.999"),
    "integer-sum": ("torch.cumsum(x, dim=1)", "", "torch.randint(-9, 10, (4, 3000, 50))"),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("block_s, cols, warps", [(16, 32, 1), (64, 128, 4), (256, 64, 8)])
def test_chained_scan_matches_torch(
    tmp_path: Path, case: str, block_s: int, cols: int, warps: int
) -> None:
    import torch

    from kernelwright.task.module import import_task_module

    expr, extra_arg, inputs = CASES[case]
    params = {"BLOCK_S": block_s, "COLS": cols, "WARPS": warps}
    module, path = load_design(tmp_path, scan_task(expr, extra_arg, inputs), "scan-chained", params)
    task = import_task_module(path, "small")
    ref, new = task.Model().cuda(), module.ModelNew().cuda()
    for draw in range(3):  # each draw run twice: the flags and tickets are zeroed every call
        torch.manual_seed(200 + draw)
        xs = [x.cuda() for x in task.get_inputs()]
        want = ref(*xs)
        for _ in range(2):
            got = new(*xs)
            torch.cuda.synchronize()
            if not want.is_floating_point():
                assert torch.equal(got, want), f"{case} {params} draw {draw}: integers differ"
                continue
            err = (got - want).abs().max().item()
            # sums over thousands of steps in another order: ~1e-4 of running sums near 70
            assert torch.allclose(got, want, atol=2e-3, rtol=1e-4), (
                f"{case} {params} draw {draw}: max abs error {err:.3g}"
            )
