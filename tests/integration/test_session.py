"""One judge, several candidates: the reference is computed once, verdicts stay independent,
and candidates run in processes started ahead of them."""

import os
import signal

import pytest

from kernelwright.errors import HarnessError
from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.executor import JobResult, SubprocessExecutor
from kernelwright.evaluate.harness import EvalSession
from kernelwright.records import Candidate, Status

pytestmark = pytest.mark.interpreter


class Recording:
    """An executor that remembers every JobResult of the one it wraps."""

    def __init__(self, inner):
        self.inner = inner
        self.results = []

    def run(self, launch, files, drive, *, share_kernels=False):
        result = self.inner.run(launch, files, drive, share_kernels=share_kernels)
        self.results.append(result)
        return result

    def warm(self, launch, count=1):
        self.inner.warm(launch, count)

    def close(self):
        self.inner.close()


@pytest.fixture
def executor(shared_executor):
    """For the tests whose property is the session's, not its executor's: the test process's
    shared executor, whose one fork server imports torch and Triton for all of them (seconds of
    CPU each)."""
    return shared_executor


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def test_session_candidates_run_in_prestarted_processes(fixtures):
    sols = fixtures / "solutions"
    options = EvalOptions(device="cpu", trials=2, seed=7, baselines=False)
    with SubprocessExecutor(prestart=1) as inner:
        executor = Recording(inner)
        with EvalSession(fixtures / "tasks" / "softmax_rows.py", options, executor=executor) as s:
            verdicts = [
                s.evaluate(Candidate((sols / f"softmax_rows__{name}.py").read_text()))
                for name in ("honest", "crash", "wrong", "hack_torch_only", "multi_kernel")
            ]
            # A spare killed behind the executor's back: the next candidate starts cold.
            os.killpg(inner.spare_pids[0], signal.SIGKILL)
            after_kill = s.evaluate(Candidate((sols / "softmax_rows__honest.py").read_text()))
        (spare,) = inner.spare_pids
    assert [v.status for v in verdicts] == [
        Status.CORRECT,
        Status.RUNTIME_ERROR,
        Status.INCORRECT,
        Status.REJECTED,
        Status.CORRECT,
    ]
    assert verdicts[0].seed == verdicts[-1].seed  # one session, the same inputs for all
    assert after_kill.status is Status.CORRECT and after_kill.timing.candidate is not None
    # the first process started while the judge prepared; the one after the kill starts cold
    assert [r.prestarted for r in executor.results] == [True, True, True, True, True, False]
    assert not _alive(spare)  # closing the executor killed the last spare
    # Every process is confined, cold starts and spares alike (checked on the prestarted session's
    # processes: a session of its own would start another judge for the same facts).
    from kernelwright.evaluate.containment import landlock_abi

    if landlock_abi():
        for result, v in zip(executor.results, (*verdicts, after_kill), strict=True):
            contained = result.containment
            assert contained["landlock_abi"] >= 1 and contained["seccomp"]
            assert contained["pid_namespace"]
            # sealed before the checked calls, which only a correct candidate reaches
            assert contained["sealed"] or v.status is not Status.CORRECT
            assert not [label for label in v.labels if label.startswith("containment")]


def test_a_single_evaluation_s_first_process_starts_while_the_judge_prepares(fixtures, monkeypatch):
    """An executor that keeps no spares (one evaluation's) still starts the first process
    asked for beside the judge; KERNELWRIGHT_PRESTART=0 turns that off too."""
    options = EvalOptions(device="cpu", trials=1, timing=False, baselines=False)
    source = (fixtures / "solutions" / "softmax_rows__honest.py").read_text()
    for setting, expected in ((None, True), ("0", False)):
        if setting is not None:
            monkeypatch.setenv("KERNELWRIGHT_PRESTART", setting)
        with SubprocessExecutor(prestart=0) as inner:
            executor = Recording(inner)
            with EvalSession(fixtures / "tasks" / "softmax_rows.py", options,
                             executor=executor) as s:
                assert s.evaluate(Candidate(source)).status is Status.CORRECT
            assert inner.spare_pids == ()  # none kept after it
        assert [r.prestarted for r in executor.results] == [expected]


@pytest.mark.parametrize(("prestart", "baselines", "started"), [
    (2, False, 2),  # the executor keeps two spares (a GPU's default): both start now
    (0, True, 2),  # one evaluation with the eager baseline: its process and the candidate's
    (0, False, 1),  # one evaluation, no baseline: the candidate's
])
def test_the_processes_a_session_will_run_start_beside_the_judge(fixtures, prestart, baselines,
                                                                 started):
    options = EvalOptions(device="cpu", trials=1, baselines=baselines, compile_baseline=False,
                          cache_baselines=False)
    task = fixtures / "tasks" / "softmax_rows.py"
    with (SubprocessExecutor(prestart=prestart) as inner,
          EvalSession(task, options, executor=inner) as s):
        s._start_judge()
        assert len(inner.spare_pids) == started


def test_session_closes_the_executor_it_started(fixtures):
    options = EvalOptions(device="cpu", trials=1, timing=False, baselines=False)
    source = (fixtures / "solutions" / "softmax_rows__honest.py").read_text()
    with EvalSession(fixtures / "tasks" / "softmax_rows.py", options) as session:
        assert session.evaluate(Candidate(source)).status is Status.CORRECT
        (spare,) = session.executor.spare_pids
        assert _alive(spare)
    assert not _alive(spare)


def test_the_first_verdict_carries_the_set_up_it_waited_for(fixtures, executor):
    """Starting the judge and measuring the baselines are the session's, paid once: the first
    verdict says how long each took (its duration holds them), later verdicts carry none."""
    options = EvalOptions(device="cpu", trials=1, seed=7, compile_baseline=False,
                          cache_baselines=False)
    source = (fixtures / "solutions" / "softmax_rows__honest.py").read_text()
    with EvalSession(fixtures / "tasks" / "softmax_rows.py", options,
                     executor=executor) as session:
        first, second = (session.evaluate(Candidate(source)) for _ in range(2))
    assert first.status is Status.CORRECT and second.status is Status.CORRECT
    assert [p.name for p in first.setup] == ["starting the judge (the reference)",
                                             "eager baseline"]
    assert all(p.seconds > 0 for p in first.setup)
    assert first.duration_s >= sum(p.seconds for p in first.setup)
    assert second.setup == ()
    assert first.timing.eager is not None and second.timing.eager is not None


class ProtocolRefusing:
    """An executor under which every process's report is a protocol refusal (as when the
    harness's own processes make tensors the protocol cannot read)."""

    def run(self, launch, files, drive, *, share_kernels=False):
        failure = {"status": "rejected", "check": "protocol",
                   "message": "the process sent a malformed tensor: a CUDA IPC handle"}
        return JobResult({"failure": failure}, 0, "", 0.1)

    def warm(self, launch, count=1):
        pass

    def close(self):
        pass


def test_a_protocol_refusal_of_the_tasks_own_model_is_the_harness_fault(fixtures):
    """The eager baseline runs the task's own model: refused by the protocol, it says the
    harness is at fault (a HarnessError) instead of refusing every candidate as hostile."""
    options = EvalOptions(device="cpu", trials=1, seed=7, compile_baseline=False,
                          cache_baselines=False)
    with EvalSession(fixtures / "tasks" / "softmax_rows.py", options,
                     executor=ProtocolRefusing()) as session:
        session._start_judge()
        with pytest.raises(HarnessError, match="refused the task's own model"):
            session._ensure_baselines()


def test_a_begun_session_judges_with_the_judge_it_started(fixtures, executor):
    """``begin`` starts the judge and returns without waiting for its reference; the first
    evaluation waits for what is left and judges with that judge."""
    options = EvalOptions(device="cpu", trials=1, timing=False, baselines=False)
    source = (fixtures / "solutions" / "softmax_rows__honest.py").read_text()
    with EvalSession(fixtures / "tasks" / "softmax_rows.py", options,
                     executor=executor) as session:
        session.begin()
        judge = session._judge
        assert judge is not None and not session._prepared
        session.begin()  # a second call starts nothing
        assert session._judge is judge
        verdict = session.evaluate(Candidate(source))
        assert session._judge is judge
    assert verdict.status is Status.CORRECT
    assert [p.name for p in verdict.setup] == ["starting the judge (the reference)"]
