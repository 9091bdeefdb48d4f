"""The property clauses the harness checks (the real harness, Triton's interpreter on the CPU):
shape ranges, where a correct candidate is also checked with the task's size constant at each end
of the range, and the memory ceiling, measured on a GPU only."""

import dataclasses
import json
import shutil

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.constraints import Constraints
from kernelwright.constraints.properties import Properties, ShapeRange
from kernelwright.errors import TaskError
from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.harness import EvalSession, memory_violations
from kernelwright.records import Candidate, Status

QUICK = EvalOptions(device="cpu", timeout_s=60, trials=1, timing=False, baselines=False)


def _evaluate(fixtures, executor, ranges, names):
    options = Constraints(properties=Properties(shape_ranges=ranges)).apply(QUICK)
    solutions = fixtures / "solutions"
    with EvalSession(fixtures / "tasks" / "scale_bias.py", options, executor=executor) as session:
        return [session.evaluate(Candidate((solutions / f"scale_bias__{n}.py").read_text()))
                for n in names]


@pytest.mark.interpreter
def test_a_kernel_sized_for_the_tasks_batch_breaks_the_range(fixtures, shared_executor):
    # batch_size is 7 in the task: both kernels are right there, only one beyond it
    honest, fixed = _evaluate(fixtures, shared_executor, (ShapeRange("batch", 1, 20),),
                              ["honest", "fixed_batch"])
    assert honest.status is Status.CORRECT, honest.message
    assert fixed.status is Status.REJECTED, fixed.message
    clause = [v for v in fixed.violations if v.check == "constraint-shape-range"]
    assert clause and "batch_size = 20 (20, 33)" in clause[0].reason, fixed.violations


@pytest.mark.interpreter
def test_a_range_naming_no_size_constant_is_a_task_error_not_a_pass(fixtures, shared_executor):
    options = Constraints(properties=Properties(
        shape_ranges=(ShapeRange("sequence_length", 1, 8),))).apply(QUICK)
    honest = Candidate((fixtures / "solutions" / "scale_bias__honest.py").read_text())
    with (EvalSession(fixtures / "tasks" / "scale_bias.py", options,
                      executor=shared_executor) as session,
          pytest.raises(TaskError, match="no module-level integer sequence_length")):
        session.evaluate(honest)


def test_without_ranges_the_clause_adds_no_runs():
    assert Constraints().apply(QUICK).shape_ranges == ()
    ranged = Constraints(properties=Properties(shape_ranges=(ShapeRange("batch", 1, 4),)))
    assert ranged.apply(QUICK).shape_ranges == (("batch", 1, 4),)


@pytest.mark.interpreter
def test_on_the_cpu_a_memory_ceiling_is_said_to_be_unchecked(fixtures, shared_executor):
    options = Constraints(properties=Properties(memory_ceiling_bytes=1)).apply(QUICK)
    assert options.memory_ceiling_bytes == 1
    honest = Candidate((fixtures / "solutions" / "scale_bias__honest.py").read_text())
    with EvalSession(fixtures / "tasks" / "scale_bias.py", options,
                     executor=shared_executor) as session:
        verdict = session.evaluate(honest)
    assert verdict.status is Status.CORRECT, verdict.message
    assert any("memory ceiling not checked" in label for label in verdict.labels)


def test_a_peak_over_the_ceiling_refuses_and_the_tighter_ceiling_applies():
    over = memory_violations({"observed": {"peak_extra_bytes": 2048}}, 1024)
    assert [v.check for v in over] == ["constraint-memory"] and "2048 bytes" in over[0].reason
    assert memory_violations({"observed": {"peak_extra_bytes": 1024}}, 1024) == []
    assert memory_violations({"observed": {}}, 1024) == []  # not measured (the CPU)
    assert memory_violations({"observed": {"peak_extra_bytes": 2048}}, None) == []
    loose = dataclasses.replace(QUICK, memory_ceiling_bytes=4096)
    tight = Constraints(properties=Properties(memory_ceiling_bytes=1024))
    assert tight.apply(loose).memory_ceiling_bytes == 1024


@pytest.mark.interpreter
def test_bench_enforces_constraints_stated_in_words(fixtures, tmp_path):
    sols = tmp_path / "sols"
    sols.mkdir()
    shutil.copy(fixtures / "solutions" / "scale_bias__fixed_batch.py", sols / "scale_bias.py")
    args = ["bench", str(fixtures / "bench" / "tasks"), "--only", "scale_bias", "--solutions",
            str(sols), "--device", "cpu", "--trials", "1", "--no-baselines", "--no-timing",
            "--no-archive", "--json", str(tmp_path / "bench.json"), "-q",
            "--constraints-text", "must work for any batch size from 1 to 20"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "batch in [1, 20]" in result.output  # the formal model is shown before the run
    (row,) = json.loads((tmp_path / "bench.json").read_text())["tasks"]
    assert row["status"] == "rejected" and "constraint-shape-range" in json.dumps(row)
