"""One judge, several candidates: the reference is computed once, verdicts stay independent."""

import os
import signal

import pytest

from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.executor import SubprocessExecutor
from kernelwright.evaluate.harness import EvalSession
from kernelwright.records import Candidate, Status

pytestmark = pytest.mark.interpreter


def test_session_judges_each_candidate_in_its_own_process(fixtures):
    sols = fixtures / "solutions"
    options = EvalOptions(device="cpu", trials=2, timing=False, baselines=False)
    with EvalSession(fixtures / "tasks" / "softmax_rows.py", options) as session:
        good = session.evaluate(Candidate((sols / "softmax_rows__honest.py").read_text()))
        bad = session.evaluate(Candidate((sols / "softmax_rows__wrong.py").read_text()))
        hack = session.evaluate(Candidate((sols / "softmax_rows__hack_torch_only.py").read_text()))
        again = session.evaluate(Candidate((sols / "softmax_rows__multi_kernel.py").read_text()))
    assert good.status is Status.CORRECT
    assert bad.status is Status.INCORRECT
    assert hack.status is Status.REJECTED
    assert again.status is Status.CORRECT  # nothing a previous candidate did leaks into this one
    assert good.seed == again.seed  # same inputs for every candidate of a session


class Recording:
    """An executor that remembers every JobResult of the one it wraps."""

    def __init__(self, inner):
        self.inner = inner
        self.results = []

    def run(self, job, timeout_s, on_progress=None, on_result=None):
        result = self.inner.run(job, timeout_s, on_progress, on_result)
        self.results.append(result)
        return result


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_session_candidates_run_in_prestarted_processes(fixtures):
    sols = fixtures / "solutions"
    options = EvalOptions(device="cpu", trials=2, seed=7)
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
    assert after_kill.status is Status.CORRECT and after_kill.timing.candidate is not None
    assert [r.prestarted for r in executor.results] == [False, True, True, True, True, False]
    assert not _alive(spare)  # closing the executor killed the last spare


def test_session_closes_the_executor_it_started(fixtures):
    options = EvalOptions(device="cpu", trials=1, timing=False, baselines=False)
    source = (fixtures / "solutions" / "softmax_rows__honest.py").read_text()
    with EvalSession(fixtures / "tasks" / "softmax_rows.py", options) as session:
        assert session.evaluate(Candidate(source)).status is Status.CORRECT
        (spare,) = session.executor.spare_pids
        assert _alive(spare)
    assert not _alive(spare)
