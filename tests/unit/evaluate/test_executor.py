import os
import time

import pytest

from kernelwright.evaluate.executor import Job, SubprocessExecutor

WORKER = "kernelwright.testing.double_worker"


def run(tmp_path, request, timeout=20.0):
    phases = []
    result = SubprocessExecutor().run(Job(WORKER, tmp_path, request), timeout, phases.append)
    return result, phases


def test_answer(tmp_path):
    result, phases = run(tmp_path, {"action": "answer", "value": 42})
    assert result.result == {"value": 42} and not result.timed_out and result.returncode == 0
    assert phases == ["double: answer"]


def test_timeout_kills_the_child(tmp_path):
    start = time.monotonic()
    result, _ = run(tmp_path, {"action": "sleep"}, timeout=1.5)
    assert result.timed_out and result.result is None
    assert time.monotonic() - start < 15


def test_crash_is_a_result_not_an_exception(tmp_path):
    result, _ = run(tmp_path, {"action": "crash"})
    assert result.crashed and result.describe_exit() == "killed by SIGSEGV"
    assert result.last_phase == "double: crash"


def test_early_exit(tmp_path):
    result, _ = run(tmp_path, {"action": "exit"})
    assert result.crashed and result.describe_exit() == "exited with code 3"


def test_grandchildren_die_with_the_group(tmp_path):
    result, phases = run(tmp_path, {"action": "spawn_sleeper"}, timeout=3)
    assert result.timed_out
    pid = int(next(p for p in phases if "grandchild" in p).split()[-1])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        try:  # reap it if it became our child's zombie
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    else:
        pytest.fail(f"grandchild {pid} survived the timeout")
