"""The harness end to end with a FakeExecutor: statuses decided from the judge's report alone."""

from pathlib import Path

import pytest
from doubles.executors import FakeExecutor, failure

from kernelwright.evaluate import EvalOptions, evaluate
from kernelwright.evaluate.harness import EvalSession
from kernelwright.records import Candidate, Status

OPTS = EvalOptions(device="cpu", trials=1, baselines=False, timing=False, timeout_s=5.0)
FIXTURES = Path(__file__).parents[2] / "fixtures"


class Switch:
    """An executor that hands each launch to the fake of the test running now."""

    def __init__(self) -> None:
        self.fake: FakeExecutor | None = None

    def run(self, launch, files, drive, *, share_kernels=False):
        assert self.fake is not None
        return self.fake.run(launch, files, drive, share_kernels=share_kernels)

    def warm(self, launch, count=1):
        pass

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def session():
    """One session (one judge, one reference) for the scripted reports: what differs between
    them is the candidate's side, which never reaches the judge."""
    switch = Switch()
    with EvalSession(FIXTURES / "tasks" / "softmax_rows.py", OPTS, executor=switch) as session:
        yield session, switch


@pytest.mark.parametrize(
    ("fake", "status", "fragment"),
    [
        (FakeExecutor(failure("crashed"), returncode=-11), Status.RUNTIME_ERROR, "SIGSEGV"),
        (FakeExecutor(failure("timeout")), Status.TIMEOUT, "no answer within 5s"),
        (FakeExecutor(failure("compile_error", "SyntaxError: x")), Status.COMPILE_ERROR,
         "SyntaxError"),
        (FakeExecutor(failure("crashed"), killed="its processes held 9.0 GB"),
         Status.RUNTIME_ERROR, "9.0 GB"),
        (FakeExecutor(failure("rejected", "output 0 is a Foo")), Status.REJECTED, "Foo"),
    ],
)
def test_statuses_from_the_report(session, fake, status, fragment):
    judge, switch = session
    switch.fake = fake
    v = judge.evaluate(Candidate((FIXTURES / "solutions" / "softmax_rows__honest.py").read_text()))
    assert v.status is status
    assert fragment in v.message
    launch, files = fake.launches[0]
    # What the process gets never names the task: its solution file and its device.
    assert set(files) == {"solution.py"} and launch.device == "cpu"
    assert "softmax_rows.py" not in repr(launch)


def test_a_report_without_runs_is_not_correct(fixtures):
    fake = FakeExecutor({"failure": None, "runs": [], "observed": {}, "observations": {}})
    v = evaluate(fixtures / "tasks" / "softmax_rows.py",
                 fixtures / "solutions" / "softmax_rows__honest.py", OPTS, executor=fake)
    assert v.status is Status.INCORRECT and not v.correct


@pytest.mark.parametrize(("origin", "shared"), [("template", True), ("user", False),
                                                 ("llm", False)])
def test_only_candidates_kernelwright_wrote_share_compiled_kernels(session, origin, shared):
    """A process starts with earlier candidates' compiled kernels, and leaves its own, only
    where kernelwright's templates wrote the candidate (evaluate.kernel_cache)."""
    judge, switch = session
    switch.fake = fake = FakeExecutor(failure("compile_error", "SyntaxError: x"))
    source = (FIXTURES / "solutions" / "softmax_rows__honest.py").read_text()
    judge.evaluate(Candidate(source, origin=origin))
    assert fake.shared == [shared]
