"""Which of KernelBench's 100 level-1 tasks get a design at their own sizes (docs/design.md,
Known gaps): all but six bare convolutions that cuDNN alone serves (too narrow for tensor-core
tiles, or grouped and transposed). A task newly without a design is a regression of a rule
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
# bare convolutions cuDNN alone serves: grouped and transposed with 8 output channels a group
# (72), too few for a tensor-core tile
WITHOUT_DESIGN = {72}


@pytest.mark.parametrize("path", TASKS, ids=[p.stem.split("_")[0] for p in TASKS])
def test_a_level1_task_gets_a_design_unless_listed(path: Path) -> None:
    plan = plan_task(load_task(str(path), "full"), "cuda", "full", isolate=False)
    number = int(path.stem.split("_")[0])
    assert bool(plan.designs) == (number not in WITHOUT_DESIGN), path.stem
