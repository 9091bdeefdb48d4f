"""Which of KernelBench's 100 level-1 tasks get a design at their own sizes (docs/design.md,
Known gaps): every one. A task newly without a design is a regression of a rule
(each has its own interpreter tests: integer ranges, masked tiles, 1-D and dilated transposed
convolutions, wide attention). Each task is captured at full size under fake tensors, in this
process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.design.plan import plan_task
from kernelwright.skills.library import SkillLibrary
from kernelwright.task import load_task

ROOT = Path(__file__).resolve().parents[3]
TASKS = sorted((ROOT / "kernelbench" / "level1").glob("*.py"),
               key=lambda p: int(p.stem.split("_")[0]))


@pytest.fixture(scope="module")
def library() -> SkillLibrary:
    """The built-in skills, read once: plan_task's own default, which it reads every call."""
    return SkillLibrary.builtin()


@pytest.mark.parametrize("path", TASKS, ids=[p.stem.split("_")[0] for p in TASKS])
def test_every_level1_task_gets_a_design(path: Path, library: SkillLibrary) -> None:
    plan = plan_task(load_task(str(path), "full"), "cuda", "full", isolate=False, library=library)
    assert plan.designs, path.stem
