"""`kernelwright bench` through Typer's CliRunner, with the harness replaced by a fake."""

import importlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.records import Status

MINI = Path(__file__).parents[2] / "fixtures" / "bench"
# `kernelwright.evaluate` the attribute is the function; the module is reached by its name.
harness = importlib.import_module("kernelwright.evaluate.harness")


@pytest.fixture
def mini(tmp_path):
    shutil.copytree(MINI, tmp_path / "mini")
    return tmp_path / "mini"


@pytest.fixture
def calls(monkeypatch, make_verdict):
    seen = []

    def fake(task, solution, options=None, *, on_progress=None, **_):
        seen.append(task.name)
        if task.name == "row_sum":
            return make_verdict(Status.INCORRECT)
        return make_verdict(eager=4.0, sol=0.5)

    monkeypatch.setattr(harness, "evaluate", fake)
    return seen


def bench(mini, tmp_path, *extra):
    args = [
        "bench",
        str(mini / "tasks"),
        "--solutions",
        str(mini / "solutions"),
        "--device",
        "cpu",
        "--archive",
        str(tmp_path / "a.sqlite"),
        *extra,
    ]
    return CliRunner().invoke(app, args)


def test_table_summary_and_json(mini, tmp_path, calls):
    result = bench(mini, tmp_path, "--json", str(tmp_path / "out.json"))
    assert result.exit_code == 0, result.output
    assert sorted(calls) == ["row_sum", "scale_bias", "softmax_rows"]
    for text in (
        "softmax_rows",
        "missing",
        "incorrect",
        "fast_1 vs eager (fp32)",
        "4.00x",
        "speedups under the fp32 precision policy",
    ):
        assert text in result.output
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["summary"]["fast_1"] == 0.5
    assert doc["summary"]["geomean_speedup"] == pytest.approx(2.0)
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 4  # the journal


def test_json_to_stdout_is_parseable(mini, tmp_path, calls):
    result = bench(mini, tmp_path, "--json", "-", "-q")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["summary"]["n_tasks"] == 4


def test_resume_skips_what_is_done(mini, tmp_path, calls):
    assert (
        bench(mini, tmp_path, "--json", str(tmp_path / "o.json"), "--only", "scale_bias").exit_code
        == 0
    )
    assert calls == ["scale_bias"]
    result = bench(mini, tmp_path, "--json", str(tmp_path / "o.json"), "--resume")
    assert result.exit_code == 0, result.output
    assert calls == ["scale_bias", "row_sum", "softmax_rows"]
    assert "1 task(s) taken from the journal" in result.output


def test_interrupt_says_how_to_resume(mini, tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(harness, "evaluate", interrupted)
    result = bench(mini, tmp_path, "--journal", str(tmp_path / "j.jsonl"))
    assert result.exit_code == 130
    assert "--resume" in result.output


def test_bad_input_exits_2(mini, tmp_path, calls):
    no_solutions = CliRunner().invoke(app, ["bench", str(mini / "tasks"), "--device", "cpu"])
    assert no_solutions.exit_code == 2 and "--solutions is required" in no_solutions.output
    assert bench(mini, tmp_path, "--precision", "fp8").exit_code == 2
    assert bench(mini, tmp_path, "--only", "nope").exit_code == 2
    assert calls == []


def test_report_and_bench_report(mini, tmp_path, calls):
    result = bench(
        mini, tmp_path, "--json", str(tmp_path / "b.json"), "--report", str(tmp_path / "rep")
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "rep" / "report.html").exists()
    again = CliRunner().invoke(
        app, ["bench-report", str(tmp_path / "b.json"), "--out", str(tmp_path / "rep2")]
    )
    assert again.exit_code == 0, again.output
    assert (tmp_path / "rep2" / "report.md").read_text() == (
        tmp_path / "rep" / "report.md"
    ).read_text()
    missing = CliRunner().invoke(app, ["bench-report", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2


def test_optimize_drives_the_optimizer(mini, tmp_path, monkeypatch, make_verdict):
    import types

    from kernelwright.records import Candidate
    from kernelwright.search.proposer import Trial

    optimize = importlib.import_module("kernelwright.optimize")
    budgets = []

    def fake(task, options, budget, out_dir, archive, *, on_event=None, on_phase=None):
        budgets.append(budget.candidates)
        best = Trial(1, Candidate(f"# {task.name}"), make_verdict(eager=2.0))
        return types.SimpleNamespace(best=best, trials=[best], search=None)

    monkeypatch.setattr(optimize, "optimize_task", fake)
    result = CliRunner().invoke(
        app,
        [
            "bench",
            str(mini / "tasks"),
            "--optimize",
            "--device",
            "cpu",
            "--budget-candidates",
            "3",
            "--no-archive",
            "--json",
            str(tmp_path / "o.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert budgets == [3, 3, 3, 3]
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["run"]["step"] == "optimize" and doc["summary"]["fast_1"] == 1.0
    wrong = bench(mini, tmp_path, "--budget-candidates", "3")
    assert wrong.exit_code == 2 and "need --optimize" in wrong.output
