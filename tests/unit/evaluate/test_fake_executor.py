"""The harness end to end with the FakeExecutor: statuses from the parent's side only."""

import pytest

from kernelwright.evaluate import EvalOptions, evaluate
from kernelwright.records import Status
from kernelwright.testing import FakeExecutor

OPTS = EvalOptions(device="cpu", trials=1, baselines=False, timing=False, timeout_s=1.0)


@pytest.mark.parametrize(
    ("fake", "status"),
    [
        (FakeExecutor(crash=True), Status.RUNTIME_ERROR),
        (FakeExecutor(sleep=2.0), Status.TIMEOUT),
        (FakeExecutor({"status": "compile_error", "message": "SyntaxError"}), Status.COMPILE_ERROR),
    ],
)
def test_statuses_from_the_executor(fixtures, fake, status):
    v = evaluate(
        fixtures / "tasks" / "softmax_rows.py",
        fixtures / "solutions" / "softmax_rows__honest.py",
        OPTS,
        executor=fake,
    )
    assert v.status is status
    assert fake.jobs and fake.jobs[0].worker == "kernelwright.evaluate.candidate_worker"
    # The request the child would get never names the task.
    request = fake.jobs[0].request
    assert "softmax_rows.py" not in repr(request.solution_path)
    assert "tasks" not in repr(request.inputs_path)
