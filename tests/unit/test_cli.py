"""The command line: bad input exits 2 with one line and no traceback; results exit 0 or 1."""

import json

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app

runner = CliRunner()


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


def test_help_lists_the_commands():
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("eval", "archive", "check-task"):
        assert command in result.output


@pytest.mark.parametrize(
    ("task", "solution", "message"),
    [
        ("tasks/missing.py", "solutions/softmax_rows__honest.py", "no such task file"),
        ("tasks/no_model.py", "solutions/softmax_rows__honest.py", "does not define Model"),
        ("tasks/softmax_rows.py", "solutions/missing.py", "no such solution file"),
        ("tasks", "solutions/softmax_rows__honest.py", "is a directory"),
    ],
)
def test_bad_input_exits_2(fixtures, task, solution, message):
    result = invoke("eval", fixtures / task, fixtures / solution, "--device", "cpu", "--no-archive")
    assert result.exit_code == 2
    assert message in result.output


def test_bad_options_exit_2(fixtures):
    task, sol = fixtures / "tasks/softmax_rows.py", fixtures / "solutions/softmax_rows__honest.py"
    assert "--precision 'fp8'" in invoke("eval", task, sol, "--precision", "fp8").output
    assert invoke("eval", task, sol, "--precision", "fp8").exit_code == 2
    assert invoke("eval", task, sol, "--trials", "0", "--device", "cpu").exit_code == 2


def test_rejected_candidate_exits_1_with_json(fixtures, tmp_path):
    out = tmp_path / "v.json"
    result = invoke(
        "eval",
        fixtures / "tasks/softmax_rows.py",
        fixtures / "solutions/softmax_rows__hack_patch_torch.py",
        "--device",
        "cpu",
        "--json",
        out,
        "--archive",
        tmp_path / "a.sqlite",
    )
    assert result.exit_code == 1
    data = json.loads(out.read_text())
    assert data["status"] == "rejected" and data["violations"][0]["check"] == "monkey-patching"
    listing = invoke("archive", "list", "--archive", tmp_path / "a.sqlite")
    assert listing.exit_code == 0 and "rejected" in listing.output
    shown = invoke("archive", "show", "1", "--archive", tmp_path / "a.sqlite")
    assert shown.exit_code == 0 and "torch.softmax = _fast_softmax" in shown.output
    missing = invoke("archive", "show", "9", "--archive", tmp_path / "a.sqlite")
    assert missing.exit_code == 2 and "no evaluation with id 9" in missing.output
    exported = tmp_path / "e.jsonl"
    assert (
        invoke(
            "archive", "export", "--jsonl", exported, "--archive", tmp_path / "a.sqlite"
        ).exit_code
        == 0
    )
    assert json.loads(exported.read_text().splitlines()[0])["verdict"]["status"] == "rejected"


@pytest.mark.interpreter
def test_correct_candidate_exits_0(fixtures, tmp_path):
    result = invoke(
        "eval",
        fixtures / "tasks/scale_bias.py",
        fixtures / "solutions/scale_bias__honest.py",
        "--device",
        "cpu",
        "--trials",
        "2",
        "--no-baselines",  # the exit code and the verdict are checked here, not timings
        "--json",
        "-",
        "--archive",
        tmp_path / "a.sqlite",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{") :])
    assert data["status"] == "correct" and data["correct"] is True


def test_check_task_flags_degenerate_tasks(fixtures):
    bad = invoke("check-task", fixtures / "tasks/degenerate_tiny.py")
    assert bad.exit_code == 1 and "near-zero" in bad.output
    good = invoke("check-task", fixtures / "tasks/scale_bias.py")
    assert good.exit_code == 0 and "ok" in good.output


def test_version():
    from kernelwright import __version__

    result = invoke("--version")
    assert result.exit_code == 0
    assert result.output.strip() == f"kernelwright {__version__}"


@pytest.mark.parametrize(
    "command",
    [
        ("eval", "tasks/softmax_rows.py", "solutions/softmax_rows__honest.py", "--device", "cpu"),
        ("optimize", "tasks/softmax_rows.py", "--device", "cpu"),
        ("bench", "tasks", "--solutions", "solutions", "--device", "cpu"),
        ("archive", "list"),
    ],
    ids=lambda c: c[0],
)
def test_archive_in_a_missing_folder_is_refused(fixtures, tmp_path, command):
    args = [fixtures / a if a.startswith(("tasks", "solutions")) else a for a in command]
    result = invoke(*args, "--archive", tmp_path / "no" / "such" / "a.sqlite")
    assert result.exit_code == 2
    assert "the folder" in result.output and "does not exist" in result.output
    assert not (tmp_path / "no").exists()


def test_reading_a_missing_archive_is_refused(tmp_path):
    for command in (("archive", "list"), ("archive", "show", "1"), ("skills", "stats")):
        result = invoke(*command, "--archive", tmp_path / "typo.sqlite")
        assert result.exit_code == 2 and "no such archive" in result.output
    assert not (tmp_path / "typo.sqlite").exists()


def test_a_task_py_is_named_after_its_folder_in_the_verdict_and_the_archive(fixtures, tmp_path):
    folder = tmp_path / "softmax"
    folder.mkdir()
    (folder / "task.py").write_text((fixtures / "tasks/softmax_rows.py").read_text())
    archive = tmp_path / "a.sqlite"
    result = invoke(
        "eval",
        folder / "task.py",
        fixtures / "solutions/softmax_rows__syntax.py",
        "--device",
        "cpu",
        "--no-baselines",  # the candidate fails to import: no speed-up to compare
        "--archive",
        archive,
    )
    assert result.exit_code == 1
    assert "softmax ← softmax_rows__syntax.py" in result.output
    listing = invoke("archive", "list", "--archive", archive, "--task", "softmax")
    assert listing.exit_code == 0 and "│ softmax " in listing.output


def test_the_task_table_keeps_every_number_on_a_narrow_terminal():
    """A long task name folds; the numbers keep their width (Rich squeezed them to an ellipsis
    when every column refused to wrap)."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from kernelwright.cli.bench_cmd import _task_table

    row = SimpleNamespace(
        task_id="72_conv_transposed_3D_asymmetric_input_asymmetric_kernel___strided_padded_grouped_",
        correct=True, status="correct", candidate_ms=1.3375, sol_fraction=0.0317,
        baseline_ms=lambda kind: {"eager": 3.0585, "compile": 2.9956}[kind],
        speedup=lambda kind: {"eager": 2.29, "compile": 2.24}[kind],
    )
    console = Console(file=io.StringIO(), width=80)
    console.print(_task_table({"run": {"precision": "fp32", "baselines": ["eager", "compile"]}},
                              [row]))
    text = console.file.getvalue()
    for value in ("correct", "1.337", "3.058", "2.996", "2.29x", "2.24x", "3.2%"):
        assert value in text, (value, text)
    assert "…" not in text


def test_output_to_a_file_or_pipe_is_wide(monkeypatch):
    """Written to a log (not a terminal), tables get LOG_WIDTH columns unless COLUMNS says."""
    from kernelwright.cli import common

    monkeypatch.delenv("COLUMNS", raising=False)
    assert common._console().width == common.LOG_WIDTH
    monkeypatch.setenv("COLUMNS", "90")
    assert common._console().width == 90


@pytest.mark.parametrize(
    "command",
    [
        ("optimize", "tasks/softmax_rows.py", "--device", "cpu"),
        ("bench", "tasks/softmax_rows.py", "--optimize", "--device", "cpu"),
        ("bench", "baselines", "tasks/softmax_rows.py", "--device", "cpu"),
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_an_output_folder_that_cannot_be_written_is_refused_before_any_work(fixtures, tmp_path,
                                                                            command):
    args = [fixtures / a if a.startswith("tasks") else a for a in command]
    a_file = tmp_path / "results.txt"
    a_file.write_text("kept")
    result = invoke(*args, "--out", a_file)
    assert result.exit_code == 2 and "is a file; pass a folder" in result.output
    result = invoke(*args, "--out", a_file / "under")
    assert result.exit_code == 2 and "cannot create the folder" in result.output
    assert a_file.read_text() == "kept"


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (("eval", "tasks/softmax_rows.py", "solutions/softmax_rows__honest.py", "--device",
          "cpu"), "--json"),
        (("optimize", "tasks/softmax_rows.py", "--device", "cpu"), "--json"),
        (("bench", "tasks/softmax_rows.py", "--optimize", "--device", "cpu"), "--json"),
        (("constraints", "formulate", "fp32 only"), "--output"),
    ],
    ids=lambda c: " ".join(c[:2]) if isinstance(c, tuple) else c,
)
def test_an_output_file_that_cannot_be_written_is_refused_before_any_work(fixtures, tmp_path,
                                                                          command, option):
    args = [fixtures / a if a.startswith(("tasks", "solutions")) else a for a in command]
    result = invoke(*args, option, tmp_path)
    assert result.exit_code == 2 and "is a folder; pass a file path" in result.output
    a_file = tmp_path / "notes.txt"
    a_file.write_text("kept")
    result = invoke(*args, option, a_file / "out.json")
    assert result.exit_code == 2 and "is a file, not a folder" in result.output
    assert a_file.read_text() == "kept"


def test_an_archive_export_to_an_unwritable_place_is_refused(fixtures, tmp_path):
    archive = tmp_path / "a.sqlite"
    assert invoke("eval", fixtures / "tasks/softmax_rows.py",
                  fixtures / "solutions/softmax_rows__honest.py", "--device", "cpu",
                  "--archive", archive).exit_code == 0
    a_file = tmp_path / "notes.txt"
    a_file.write_text("kept")
    for command, message in ((("export", "--jsonl", a_file / "x.jsonl"), "is a file, not a folder"),
                             (("runs", "--json", tmp_path), "is a folder; pass a file path")):
        result = invoke("archive", *command, "--archive", archive)
        assert result.exit_code == 2 and message in result.output
