"""Discovering a suite and pairing each task with SOLS/<stem>.py."""

import pytest

from kernelwright.bench import discover_tasks, pair_solutions, plan
from kernelwright.errors import ConfigError

TASK = """
import torch
KERNELWRIGHT = {"family": "%s"}
class Model(torch.nn.Module):
    def forward(self, x):
        return x
def get_inputs():
    return [torch.randn(3)]
"""


def write(path, family="elementwise"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TASK % family)
    return path


def test_folders_are_searched_recursively_in_path_order(tmp_path):
    write(tmp_path / "suite" / "level2" / "01_b.py")
    write(tmp_path / "suite" / "level1" / "02_a.py")
    write(tmp_path / "suite" / "level1" / "__init__.py")
    write(tmp_path / "suite" / "level1" / "_helper.py")
    write(tmp_path / "suite" / "__pycache__" / "x.py")
    found = discover_tasks([tmp_path / "suite"])
    assert [p.stem for p in found] == ["02_a", "01_b"]


def test_files_and_folders_mix_without_duplicates(tmp_path):
    a = write(tmp_path / "s" / "a.py")
    write(tmp_path / "s" / "b.py")
    assert [p.stem for p in discover_tasks([a, tmp_path / "s"])] == ["a", "b"]


def test_duplicate_stems_are_refused(tmp_path):
    write(tmp_path / "s" / "l1" / "01_x.py")
    write(tmp_path / "s" / "l2" / "01_x.py")
    with pytest.raises(ConfigError, match="01_x"):
        discover_tasks([tmp_path / "s"])


def test_missing_paths_and_empty_folders(tmp_path):
    with pytest.raises(ConfigError, match="no such task"):
        discover_tasks([tmp_path / "nope.py"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no task"):
        discover_tasks([tmp_path / "empty"])


def test_pairing_keeps_tasks_without_a_solution(tmp_path):
    write(tmp_path / "s" / "a.py", family="softmax")
    write(tmp_path / "s" / "b.py")
    sols = tmp_path / "sols"
    sols.mkdir()
    (sols / "a.py").write_text("class ModelNew: ...")
    items = pair_solutions(discover_tasks([tmp_path / "s"]), sols)
    assert [(i.task_id, i.family, i.group) for i in items] == [
        ("a", "softmax", "s"),
        ("b", "elementwise", "s"),
    ]
    assert items[0].solution_path == str((sols / "a.py").resolve())
    assert items[1].solution_path is None
    with pytest.raises(ConfigError, match="must be a folder"):
        pair_solutions([], tmp_path / "s" / "a.py")


def test_plan_filters_by_id(tmp_path):
    write(tmp_path / "s" / "a.py")
    write(tmp_path / "s" / "b.py")
    assert [i.task_id for i in plan([tmp_path / "s"], None, ["b"])] == ["b"]
    with pytest.raises(ConfigError, match="unknown task ids"):
        plan([tmp_path / "s"], None, ["zz"])


def test_the_real_suite_pairs_every_task(tmp_path):
    from pathlib import Path

    root = Path(__file__).parents[3] / "benchmarks"
    items = plan([root], tmp_path)
    assert len(items) >= 45
    assert all(i.solution_path is None for i in items)
    assert {i.group for i in items} == {"level1", "level2", "level3", "serving"}
    assert "other" not in {i.family for i in items}
