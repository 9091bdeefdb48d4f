"""Which of KernelBench's 100 level-1 tasks get a design at their own sizes (docs/design.md,
Known gaps): every one. A task newly without a design is a regression of a rule
(each has its own interpreter tests: integer ranges, masked tiles, 1-D and dilated transposed
convolutions, wide attention). Each task is captured at full size under fake tensors, in this
process: about 20 s for the hundred with two workers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.design.plan import plan_task
from kernelwright.task import load_task

ROOT = Path(__file__).resolve().parents[3]
TASKS = sorted((ROOT / "kernelbench" / "level1").glob("*.py"),
               key=lambda p: int(p.stem.split("_")[0]))


@pytest.mark.parametrize("path", TASKS, ids=[p.stem.split("_")[0] for p in TASKS])
def test_every_level1_task_gets_a_design(path: Path) -> None:
    plan = plan_task(load_task(str(path), "full"), "cuda", "full", isolate=False)
    assert plan.designs, path.stem
