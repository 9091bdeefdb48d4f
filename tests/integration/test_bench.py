"""`kernelwright bench` on a mini suite through the real harness (Triton's interpreter, CPU).

Four tasks: two known-correct Triton solutions, one known-wrong one, one missing. The suite runs
once per module (three real evaluations, ~10-20 s each here); the tests read its outputs.
"""

import importlib
import json
import math
import os
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.archive import Archive
from kernelwright.cli import app

pytestmark = pytest.mark.interpreter

MINI = Path(__file__).parents[1] / "fixtures" / "bench"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith(("TRITON_", "KERNELWRIGHT_")):
                mp.delenv(name)
        mp.setenv("KERNELWRIGHT_HOME", str(out / "home"))
        result = CliRunner().invoke(
            app,
            [
                "bench",
                str(MINI / "tasks"),
                "--solutions",
                str(MINI / "solutions"),
                "--device",
                "cpu",
                "--trials",
                "2",
                "--timeout",
                "120",
                "--json",
                str(out / "bench.json"),
                "--report",
                str(out / "report"),
                "--archive",
                str(out / "archive.sqlite"),
            ],
        )
    assert result.exit_code == 0, result.output
    return out, result, json.loads((out / "bench.json").read_text())


def test_statuses(run):
    _, _, doc = run
    assert [(t["task"], t["status"]) for t in doc["tasks"]] == [
        ("relu", "missing"),
        ("row_sum", "incorrect"),
        ("scale_bias", "correct"),
        ("softmax_rows", "correct"),
    ]
    assert doc["run"]["counts"] == {"missing": 1, "incorrect": 1, "correct": 2}
    assert doc["run"]["representative"] is False and doc["run"]["baselines"] == ["eager"]


def test_fast_0_and_geomeans_are_exact(run):
    _, _, doc = run
    s = doc["summary"]
    speedups = [t["speedup_vs_eager"] for t in doc["tasks"] if t["correct"]]
    assert len(speedups) == 2 and all(x > 0 for x in speedups)
    assert s["n_tasks"] == 4
    assert s["fast_0"] == 0.5  # 2 correct of 4; the missing and the wrong stay in the denominator
    assert s["fast_1"] == sum(x > 1 for x in speedups) / 4
    # failures count 1.0: (s1 * s2 * 1 * 1) ** (1/4); correct only: (s1 * s2) ** (1/2)
    assert s["geomean_speedup"] == pytest.approx(math.prod(speedups) ** 0.25, rel=1e-12)
    assert s["geomean_speedup_correct_only"] == pytest.approx(
        math.sqrt(math.prod(speedups)), rel=1e-12
    )
    assert s["fast_1_vs_compile"] is None and s["geomean_speedup_vs_compile"] is None
    fractions = [t["sol_fraction"] for t in doc["tasks"] if t["correct"]]
    assert s["median_sol_fraction"] == pytest.approx(statistics.median(fractions))
    fam = doc["families"]
    assert (fam["elementwise"]["fast_0"], fam["softmax"]["fast_0"], fam["reduction"]["fast_0"]) == (
        0.5,
        1.0,
        0.0,
    )


def test_output_journal_archive_and_report(run):
    out, result, doc = run
    assert "fast_0 vs eager (fp32)" in result.output and "50.0%" in result.output
    assert "relu: no solution file relu.py" in result.output
    lines = (out / "bench.jsonl").read_text().splitlines()
    assert [json.loads(x)["result"]["task"] for x in lines] == [t["task"] for t in doc["tasks"]]
    with Archive(out / "archive.sqlite") as archive:
        records = archive.history(run_id=doc["run"]["run_id"])
    assert sorted(r.task_name for r in records) == ["row_sum", "scale_bias", "softmax_rows"]
    page = (out / "report" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 3
    assert "CPU (Triton&#39;s interpreter)" in page or "CPU (Triton's interpreter)" in page


def test_resume_evaluates_nothing_again(run, monkeypatch):
    out, _, doc = run
    harness = importlib.import_module("kernelwright.evaluate.harness")

    def must_not_run(*args, **kwargs):
        raise AssertionError("a finished task was evaluated again")

    monkeypatch.setattr(harness, "evaluate", must_not_run)
    result = CliRunner().invoke(
        app,
        [
            "bench",
            str(MINI / "tasks"),
            "--solutions",
            str(MINI / "solutions"),
            "--device",
            "cpu",
            "--trials",
            "2",
            "--timeout",
            "120",
            "--json",
            str(out / "bench.json"),
            "--resume",
            "--no-archive",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "4 task(s) taken from the journal" in result.output
    again = json.loads((out / "bench.json").read_text())
    assert again["summary"] == doc["summary"]


# slow: tests/unit/bench/test_bench_workers.py checks two workers against one (results, order,
# timed_on, the archive) with a scripted step
@pytest.mark.slow
def test_two_workers_reach_the_verdicts_of_one(run, tmp_path, monkeypatch):
    out, _, doc = run
    for name in list(os.environ):
        if name.startswith(("TRITON_", "KERNELWRIGHT_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KERNELWRIGHT_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(
        app,
        [
            "bench",
            str(MINI / "tasks"),
            "--solutions",
            str(MINI / "solutions"),
            "--device",
            "cpu",
            "--trials",
            "1",  # statuses, not timings, are compared: the least work that reaches them
            "--no-baselines",
            "--timeout",
            "120",
            "--workers",
            "2",
            "--out",
            str(tmp_path / "two"),
            "--archive",
            str(tmp_path / "archive.sqlite"),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    two = json.loads((tmp_path / "two" / "results.json").read_text())
    fields = ("task", "status", "correct")  # messages quote values of fresh seeds
    assert [{k: t[k] for k in fields} for t in two["tasks"]] == [
        {k: t[k] for k in fields} for t in doc["tasks"]
    ]
    assert [t.get("timed_on") for t in two["tasks"]] == [None, "cpu", "cpu", "cpu"]
    with Archive(tmp_path / "archive.sqlite") as archive:
        records = archive.history(run_id=two["run"]["run_id"])
    assert sorted(r.task_name for r in records) == ["row_sum", "scale_bias", "softmax_rows"]
