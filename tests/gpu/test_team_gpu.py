"""Team reductions on a real GPU: rows held by teams of several programs that wait for each
other (design/families/reduction/team.py). The interpreter runs one program at a time and
cannot run such a team, so only these tests vouch for its synchronisation. Skipped without a
GPU (conftest)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "design"))

from design_checks import load_design, norm_task, softmax_rows_task  # noqa: E402

# rows of 40200 (instance: 200 x 201), 34560 (group: 4 channels x 96 x 90) and 50000 (softmax)
# elements: 3 to 40 slices a row, the last one masked
TASKS = {
    "instance": (
        norm_task("InstanceNorm2d(16, affine=True)", "(3, 16, 200, 201)"),
        (3, 16, 200, 201),
    ),
    "group": (norm_task("GroupNorm(8, 32)", "(6, 32, 96, 90)"), (6, 32, 96, 90)),
    "softmax": (softmax_rows_task("(300, 50000)"), (300, 50000)),
}


@pytest.mark.parametrize("name", sorted(TASKS))
@pytest.mark.parametrize("slice_, warps", [(1024, 2), (4096, 4), (8192, 8)])
def test_team_of_several_programs_matches_torch(
    tmp_path: Path, name: str, slice_: int, warps: int
) -> None:
    import torch

    from kernelwright.task.module import import_task_module

    body, shape = TASKS[name]
    params = {"TEAM_SLICE": slice_, "TEAM_WARPS": warps}
    module, path = load_design(tmp_path, body, "row-team", params)
    assert "_team_kernel, " in Path(module.__file__).read_text()
    task = import_task_module(path, "small")
    torch.manual_seed(3)
    ref = task.Model().cuda().eval()
    torch.manual_seed(3)
    new = module.ModelNew().cuda().eval()
    # several draws, one far from zero (Welford's partials must not cancel), each run twice
    # (the arrival counts are zeroed on every call)
    for k, (scale, shift) in enumerate([(1.0, 0.0), (3.0, 1000.0), (0.5, -7.0)]):
        torch.manual_seed(100 + k)
        x = torch.randn(shape, device="cuda") * scale + shift
        with torch.no_grad():
            want = ref(x)
            for _ in range(2):
                got = new(x)
                torch.cuda.synchronize()
                err = (got - want).abs().max().item()
                assert torch.allclose(got, want, atol=1e-4, rtol=1e-4), (
                    f"{name} TEAM_SLICE={slice_} draw {k}: max abs error {err:.3g}"
                )
