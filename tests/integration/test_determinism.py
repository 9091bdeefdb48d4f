"""The determinism clause: a correct candidate runs twice more on the same inputs, and outputs
that differ bit for bit refuse it (the real harness, Triton's interpreter on the CPU)."""

import pytest
import torch

from kernelwright.constraints import Constraints
from kernelwright.constraints.properties import Properties
from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.harness import EvalSession, determinism_violations
from kernelwright.evaluate.referee import same_bits
from kernelwright.records import Candidate, Status

QUICK = EvalOptions(device="cpu", timeout_s=60, trials=1, timing=False, baselines=False)
DETERMINISTIC = Constraints(properties=Properties(deterministic=True))


@pytest.mark.interpreter
def test_outputs_that_change_between_runs_are_refused(fixtures, shared_executor):
    options = DETERMINISTIC.apply(QUICK)
    assert options.determinism and not QUICK.determinism
    solutions = fixtures / "solutions"
    with EvalSession(fixtures / "tasks" / "softmax_rows.py", options,
                     executor=shared_executor) as session:
        honest, drifting = (
            session.evaluate(Candidate((solutions / f"softmax_rows__{name}.py").read_text()))
            for name in ("honest", "nondeterministic")
        )
    assert honest.status is Status.CORRECT, honest.message
    assert drifting.status is Status.REJECTED
    assert [v.check for v in drifting.violations] == ["constraint-determinism"]
    assert "output(s) 0 differ bit for bit between two runs" in drifting.message


def test_bits_are_compared_not_values():
    a = torch.tensor([0.0, float("nan"), 1.0])
    assert same_bits(a, a.clone())
    assert not same_bits(torch.tensor([0.0]), torch.tensor([-0.0]))  # equal values, other bits
    assert not same_bits(a, a.double())
    assert determinism_violations({"repeat": {"identical": True, "outputs": []}}) == []
    assert determinism_violations(None) == []
