"""The chained column scan on a real GPU: chunks that wait for the chunks before them
(design/kernel/scan.py, skill ``scan-chained``). The interpreter runs one program at a time, so
only these tests vouch for the look-back's synchronisation. Skipped without a GPU (conftest)."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "design"))

from design_checks import designs_for, with_params, write_task  # noqa: E402

BODY = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x{extra_arg}):
        return {expr}
def get_inputs():
    return [{inputs}]
def get_init_inputs():
    return []
"""

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


def _chained_module(tmp: Path, body: str, params: dict[str, int]) -> tuple[types.ModuleType, Path]:
    from kernelwright.design.emit import emit

    path = write_task(tmp, body)
    part, designs = designs_for(path)
    (design,) = [d for d in designs if "scan-chained" in d.skills][:1]
    source = emit(part, with_params(design, params), path.read_text(), task_name="t", size="small")
    file = tmp / "candidate.py"  # @triton.jit reads its source from a file
    file.write_text(source)
    spec = importlib.util.spec_from_file_location(f"candidate_{id(file)}", file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("block_s, cols, warps", [(16, 32, 1), (64, 128, 4), (256, 64, 8)])
def test_chained_scan_matches_torch(
    tmp_path: Path, case: str, block_s: int, cols: int, warps: int
) -> None:
    import torch

    from kernelwright.task.module import import_task_module

    expr, extra_arg, inputs = CASES[case]
    body = BODY.format(expr=expr, extra_arg=extra_arg, inputs=inputs)
    params = {"BLOCK_S": block_s, "COLS": cols, "WARPS": warps}
    module, path = _chained_module(tmp_path, body, params)
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
