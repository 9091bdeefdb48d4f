"""`kernelwright check-task` on folders: solution files are skipped, ``task.py`` files are named
after their folder, and ``--suite`` runs the suite checks in child processes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app

BENCH = Path(__file__).parents[1] / "fixtures" / "bench"

NEAR_ZERO = (
    (BENCH / "tasks" / "scale_bias.py")
    .read_text()
    .replace("def forward(self, x):", "def forward(self, x):\n        return x * 0\n")
)


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    """An examples-style folder: <name>/task.py and <name>/solution.py."""
    for name in ("scale_bias", "softmax_rows"):
        folder = tmp_path / "examples" / name
        folder.mkdir(parents=True)
        shutil.copy(BENCH / "tasks" / f"{name}.py", folder / "task.py")
        shutil.copy(BENCH / "solutions" / f"{name}.py", folder / "solution.py")
    return tmp_path / "examples"


def test_check_task_skips_solutions_and_names_tasks_after_their_folder(examples: Path) -> None:
    result = CliRunner().invoke(app, ["check-task", str(examples)])
    assert result.exit_code == 0, result.output
    assert "scale_bias" in result.output and "softmax_rows" in result.output
    assert "task.py" not in result.output and "ModelNew" not in result.output


def test_suite_checks_pass_good_tasks_and_flag_a_bad_one(examples: Path) -> None:
    bad_folder = examples / "zeros"
    bad_folder.mkdir()
    (bad_folder / "task.py").write_text(NEAR_ZERO)
    result = CliRunner().invoke(app, ["check-task", "--suite", str(examples)])
    assert result.exit_code == 1, result.output
    assert "3 tasks; families: elementwise 2, softmax 1" in result.output
    assert "zeros: outputs: output 0 is near zero everywhere" in result.output
    assert "1 task(s) failed a check" in result.output
    assert "scale_bias:" not in result.output and "softmax_rows:" not in result.output


def test_suite_markdown_table_and_bad_options(examples: Path) -> None:
    # A summary with indices in brackets is printed as written, not read as console markup
    task = examples / "softmax_rows" / "task.py"
    source = task.read_text()
    doc = source.split('"""')[1]
    summary = "Softmax over rows: y[i, j] = exp(x[i, j]) / sum_k exp(x[i, k])."
    task.write_text(source.replace(doc, summary, 1))
    table = CliRunner().invoke(app, ["check-task", "--suite", "--markdown", str(examples)])
    assert table.exit_code == 0, table.output
    assert "| `scale_bias` | scale_bias | elementwise |" in table.output
    assert "y[i, j] = exp(x[i, j]) / sum_k exp(x[i, k])." in table.output
    alone = CliRunner().invoke(app, ["check-task", "--markdown", str(examples)])
    assert alone.exit_code == 2 and "--markdown needs --suite" in alone.output
