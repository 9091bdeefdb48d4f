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


def test_rerunning_the_command_resumes(mini, tmp_path, calls):
    assert (
        bench(mini, tmp_path, "--json", str(tmp_path / "o.json"), "--only", "scale_bias").exit_code
        == 0
    )
    assert calls == ["scale_bias"]
    result = bench(mini, tmp_path, "--json", str(tmp_path / "o.json"))
    assert result.exit_code == 0, result.output
    assert calls == ["scale_bias", "row_sum", "softmax_rows"]
    assert "1 task(s) taken from the journal" in result.output
    again = bench(mini, tmp_path, "--json", str(tmp_path / "o.json"), "--fresh")
    assert again.exit_code == 0, again.output
    assert calls[3:] == ["row_sum", "scale_bias", "softmax_rows"]
    assert "ran again" not in again.output  # asked for with --fresh
    other = bench(mini, tmp_path, "--json", str(tmp_path / "o.json"), "--trials", "2")
    assert other.exit_code == 0, other.output
    assert calls[6:] == ["row_sum", "scale_bias", "softmax_rows"]
    assert "4 task(s) ran again" in other.output and "other options" in other.output
    (note,) = json.loads((tmp_path / "o.json").read_text())["run"]["notes"]
    assert note.startswith("4 task(s) ran again")


def test_interrupt_keeps_what_is_done_in_out_and_says_how_to_resume(
    mini, tmp_path, monkeypatch, make_verdict
):
    seen = []

    def evaluate(task, solution, options=None, *, on_progress=None, **_):
        seen.append(task.name)
        if task.name == "scale_bias":
            raise KeyboardInterrupt
        return make_verdict(eager=2.0)

    monkeypatch.setattr(harness, "evaluate", evaluate)
    out = tmp_path / "run"
    result = bench(mini, tmp_path, "--out", str(out))
    assert result.exit_code == 130
    assert "rerun the same command to continue" in result.output
    assert str(out / "results.json") in result.output
    doc = json.loads((out / "results.json").read_text())
    assert [t["task"] for t in doc["tasks"]] == ["relu", "row_sum"]
    assert doc["run"]["not_run"] == ["scale_bias", "softmax_rows"]
    assert len((out / "journal.jsonl").read_text().splitlines()) == 2

    monkeypatch.setattr(
        harness, "evaluate", lambda task, *a, **k: seen.append(task.name) or make_verdict(eager=2.0)
    )
    result = bench(mini, tmp_path, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert seen == ["row_sum", "scale_bias", "scale_bias", "softmax_rows"]
    doc = json.loads((out / "results.json").read_text())
    assert len(doc["tasks"]) == 4 and doc["run"]["not_run"] == []


def test_bad_input_exits_2(mini, tmp_path, calls):
    no_solutions = CliRunner().invoke(app, ["bench", str(mini / "tasks"), "--device", "cpu"])
    assert no_solutions.exit_code == 2 and "no solutions" in no_solutions.output
    assert bench(mini, tmp_path, "--precision", "fp8").exit_code == 2
    assert bench(mini, tmp_path, "--only", "nope").exit_code == 2
    assert bench(mini, tmp_path, "--family", "nope").exit_code == 2
    assert bench(mini, tmp_path, "--shard", "3/2").exit_code == 2
    assert bench(mini, tmp_path, "--deadline", "0").exit_code == 2
    assert bench(mini, tmp_path, "--workers", "0").exit_code == 2
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


def test_a_folder_per_task_with_task_py_and_solution_py(tmp_path, calls):
    for name in ("scale_bias", "softmax_rows"):
        folder = tmp_path / "examples" / name
        folder.mkdir(parents=True)
        shutil.copy(MINI / "tasks" / f"{name}.py", folder / "task.py")
        shutil.copy(MINI / "solutions" / f"{name}.py", folder / "solution.py")
    result = CliRunner().invoke(
        app,
        ["bench", str(tmp_path / "examples"), "--device", "cpu", "--no-archive", "--json", "-"],
    )
    assert result.exit_code == 0, result.output
    assert calls == ["scale_bias", "softmax_rows"]  # tasks named after their folders
    doc = json.loads(result.stdout)
    assert [t["task"] for t in doc["tasks"]] == ["scale_bias", "softmax_rows"]
    assert all(t["solution_path"].endswith("solution.py") for t in doc["tasks"])


def test_run_is_the_default_command_of_the_bench_group(mini, tmp_path, calls):
    direct = bench(mini, tmp_path, "--only", "scale_bias", "--fresh")
    named = CliRunner().invoke(
        app,
        ["bench", "run", str(mini / "tasks"), "--solutions", str(mini / "solutions")]
        + ["--device", "cpu", "--only", "scale_bias", "--no-archive", "--fresh"],
    )
    assert direct.exit_code == named.exit_code == 0, named.output
    assert calls == ["scale_bias", "scale_bias"]
    help_text = CliRunner().invoke(app, ["bench", "--help"]).output
    assert "baselines" in help_text and "run" in help_text


def test_shards_sharing_out_end_with_the_whole_suite(mini, tmp_path, calls):
    out = tmp_path / "run"
    first = bench(mini, tmp_path, "--out", str(out), "--shard", "1/2")
    assert first.exit_code == 0, first.output
    assert "2 task(s) not run yet" in first.output
    second = bench(mini, tmp_path, "--out", str(out), "--shard", "2/2")
    assert second.exit_code == 0, second.output
    assert sorted(calls) == ["row_sum", "scale_bias", "softmax_rows"]
    doc = json.loads((out / "results.json").read_text())
    assert doc["summary"]["n_tasks"] == 4 and doc["run"]["not_run"] == []


def test_an_interrupt_before_any_task_finished_names_no_file_it_did_not_write(
    mini, tmp_path, monkeypatch
):
    def evaluate(task, solution, options=None, *, on_progress=None, **_):
        raise KeyboardInterrupt

    monkeypatch.setattr(harness, "evaluate", evaluate)
    out = tmp_path / "run"
    result = bench(mini, tmp_path, "--out", str(out), "--only", "row_sum")
    assert result.exit_code == 130
    assert "after 0 finished task(s), none kept" in result.output
    assert "results.json" not in result.output and not (out / "results.json").exists()
