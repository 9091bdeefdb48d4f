"""`kernelwright eval`'s verdicts on solutions that fail in every way, through the real harness
(two child processes, Triton's interpreter on the CPU).

``evaluate`` is a session of one candidate: the statuses are judged in one shared session (each
candidate still runs in a process of its own), and the tests after them call ``evaluate`` (with
the test process's shared executor: its fork server starts once)."""

import pytest

from kernelwright.errors import EvalError, TaskError
from kernelwright.evaluate import EvalOptions, evaluate
from kernelwright.records import Candidate, Status

pytestmark = pytest.mark.interpreter

# Baselines are not what these tests are about (test_correct_verdict_is_complete has them).
OPTS = EvalOptions(device="cpu", timeout_s=30, trials=3, baselines=False)

CASES = [
    ("softmax_rows__honest", Status.CORRECT, "correct on 3"),
    ("softmax_rows__wrong", Status.INCORRECT, "elements differ"),
    ("softmax_rows__misshaped", Status.INCORRECT, "has shape (9, 99), expected (9, 100)"),
    ("softmax_rows__crash", Status.RUNTIME_ERROR, "SIGABRT"),
    ("softmax_rows__raises", Status.RUNTIME_ERROR, "ValueError during forward"),
    ("softmax_rows__fails_to_compile_after_threads", Status.RUNTIME_ERROR,
     "RuntimeError during forward"),
    ("softmax_rows__bad_constructor", Status.RUNTIME_ERROR, "during construct"),
    ("softmax_rows__syntax", Status.COMPILE_ERROR, "SyntaxError"),
    ("softmax_rows__import_error", Status.COMPILE_ERROR, "ModuleNotFoundError"),
    ("softmax_rows__no_modelnew", Status.COMPILE_ERROR, "defines no ModelNew"),
]


@pytest.mark.parametrize(("solution", "status", "message"), CASES, ids=[c[0] for c in CASES])
def test_status(fixtures, session_for, solution, status, message):
    task = solution.split("__")[0]
    session = session_for(fixtures / "tasks" / f"{task}.py", OPTS)
    v = session.evaluate(Candidate((fixtures / "solutions" / f"{solution}.py").read_text()))
    assert v.status is status, v.message
    assert message in v.message
    assert v.correct is (status is Status.CORRECT)


def test_hang_is_a_timeout(fixtures, shared_executor):
    v = evaluate(
        fixtures / "tasks" / "softmax_rows.py",
        fixtures / "solutions" / "softmax_rows__hang.py",
        # 4 s: the hang is in the first warm-up call, reached about a second after the import
        # (the message names the phase, so a deadline hit any earlier would fail the test)
        EvalOptions(device="cpu", timeout_s=4, trials=1, baselines=False),
        executor=shared_executor,
    )
    assert v.status is Status.TIMEOUT and "warm-up" in v.message


def test_correct_verdict_is_complete(fixtures, shared_executor):
    v = evaluate(
        fixtures / "tasks" / "scale_bias.py",
        fixtures / "solutions" / "scale_bias__honest.py",
        EvalOptions(device="cpu"),
        executor=shared_executor,
    )
    assert v.status is Status.CORRECT and v.trials == v.trials_passed == 5
    assert v.max_abs_err is not None and v.max_abs_err < 1e-5
    assert v.timing.candidate is not None and v.timing.eager is not None
    assert v.timing.compile is None  # not on the CPU by default
    assert not v.timing.representative
    assert v.sol is not None and v.sol.bytes > 0
    assert v.device is not None and v.device.interpreter
    assert len(v.task_sha256) == len(v.solution_sha256) == 64


def test_broken_reference_is_not_the_candidates_fault(fixtures, shared_executor):
    with pytest.raises(EvalError, match="the task's reference failed"):
        evaluate(
            fixtures / "tasks" / "broken_reference.py",
            fixtures / "solutions" / "softmax_rows__honest.py",
            OPTS,
            executor=shared_executor,
        )


def test_task_without_model_is_bad_input(fixtures, shared_executor):
    with pytest.raises(TaskError, match="does not define Model"):
        evaluate(
            fixtures / "tasks" / "no_model.py",
            fixtures / "solutions" / "softmax_rows__honest.py",
            OPTS,
            executor=shared_executor,
        )
