"""The shape-range clause: a correct candidate is also checked with the task's size constant at
each end of the range (the real harness, Triton's interpreter on the CPU)."""

import pytest

from kernelwright.constraints import Constraints
from kernelwright.constraints.properties import Properties, ShapeRange
from kernelwright.errors import TaskError
from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.harness import EvalSession
from kernelwright.records import Candidate, Status

QUICK = EvalOptions(device="cpu", timeout_s=60, trials=1, timing=False, baselines=False)


def _evaluate(fixtures, ranges, names):
    options = Constraints(properties=Properties(shape_ranges=ranges)).apply(QUICK)
    solutions = fixtures / "solutions"
    with EvalSession(fixtures / "tasks" / "scale_bias.py", options) as session:
        return [session.evaluate(Candidate((solutions / f"scale_bias__{n}.py").read_text()))
                for n in names]


@pytest.mark.interpreter
def test_a_kernel_sized_for_the_tasks_batch_breaks_the_range(fixtures):
    # batch_size is 7 in the task: both kernels are right there, only one beyond it
    honest, fixed = _evaluate(fixtures, (ShapeRange("batch", 1, 20),), ["honest", "fixed_batch"])
    assert honest.status is Status.CORRECT, honest.message
    assert fixed.status is Status.REJECTED, fixed.message
    clause = [v for v in fixed.violations if v.check == "constraint-shape-range"]
    assert clause and "batch_size = 20 (20, 33)" in clause[0].reason, fixed.violations


@pytest.mark.interpreter
def test_a_range_naming_no_size_constant_is_a_task_error_not_a_pass(fixtures):
    options = Constraints(properties=Properties(
        shape_ranges=(ShapeRange("sequence_length", 1, 8),))).apply(QUICK)
    honest = Candidate((fixtures / "solutions" / "scale_bias__honest.py").read_text())
    with (EvalSession(fixtures / "tasks" / "scale_bias.py", options) as session,
          pytest.raises(TaskError, match="no module-level integer sequence_length")):
        session.evaluate(honest)


def test_without_ranges_the_clause_adds_no_runs():
    assert Constraints().apply(QUICK).shape_ranges == ()
    ranged = Constraints(properties=Properties(shape_ranges=(ShapeRange("batch", 1, 4),)))
    assert ranged.apply(QUICK).shape_ranges == (("batch", 1, 4),)
