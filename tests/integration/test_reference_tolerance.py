"""A long float32 scan without a task atol, through the real harness (Triton's interpreter on the
CPU): an honest reordering is correct because the judge widens atol to the reference's own
rounding error, a wrong scan is still incorrect, and an explicit --atol applies exactly."""

from dataclasses import replace

import pytest

from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.harness import EvalSession
from kernelwright.records import Candidate, Status

pytestmark = pytest.mark.interpreter

# Trials: task, task, scaled x64; the scaled trial's rounding errors exceed the strict 1e-4.
OPTS = EvalOptions(device="cpu", timeout_s=60, trials=3, baselines=False, timing=False, seed=7)


def judge(fixtures, executor, options, *solutions):
    sols = fixtures / "solutions"
    with EvalSession(fixtures / "tasks" / "long_scan.py", options, executor=executor) as session:
        return [session.evaluate(Candidate((sols / f"{s}.py").read_text())) for s in solutions]


def test_honest_scan_passes_through_the_widened_atol_and_a_wrong_one_does_not(
        fixtures, shared_executor):
    honest, wrong = judge(fixtures, shared_executor, OPTS, "long_scan__honest",
                          "long_scan__wrong")
    assert honest.status is Status.CORRECT, honest.message
    assert honest.tolerance.atol > 1e-4 and honest.tolerance.rtol == 1e-4
    assert any("atol widened from 0.0001" in label for label in honest.labels)
    assert wrong.status is Status.INCORRECT
    assert "elements differ" in wrong.message and "widened from 0.0001" in wrong.message


def test_an_explicit_atol_applies_exactly(fixtures, shared_executor):
    (honest,) = judge(fixtures, shared_executor, replace(OPTS, atol=1e-4), "long_scan__honest")
    assert honest.status is Status.INCORRECT and "(atol=0.0001, rtol=0.0001)" in honest.message
    assert honest.tolerance.atol == 1e-4 and honest.labels == ()
