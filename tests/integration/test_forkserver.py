"""Candidates' processes forked from a fork server: confined like cold starts, holding nothing of
the server's, their ends reported; a server that dies is replaced and one that cannot fork costs
a cold start, never a result. Judges are forked too, from a server of their own."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kernelwright.evaluate.executor import CandidateProcess, Launch, SubprocessExecutor
from kernelwright.evaluate.spawn import SANDBOX_MARK, descendants, is_running

pytestmark = pytest.mark.interpreter

LAUNCH = Launch(device="cpu", extra_env={"TRITON_INTERPRET": "1"})
SECRET = "KERNELWRIGHT_TEST_SECRET"


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _environ(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as f:
        entries = [e.decode(errors="replace") for e in f.read().split(b"\0") if e]
    return dict(e.split("=", 1) for e in entries if "=" in e)


def _open_fds(pid: int) -> set[int]:
    return {int(n) for n in os.listdir(f"/proc/{pid}/fd")}


def test_a_forked_process_is_confined_and_holds_nothing_of_the_server(monkeypatch) -> None:
    monkeypatch.setenv(SECRET, "do-not-leak")
    seen: dict[str, Any] = {}

    def drive(process: CandidateProcess) -> dict[str, Any]:
        pid = process.proc.pid
        seen["parent"] = _ppid(pid)
        seen["fds"] = _open_fds(pid)
        seen["environs"] = [_environ(p) for p in (pid, *descendants(pid)) if is_running(p)]
        return {}

    with SubprocessExecutor(prestart=0, fork_server=True) as executor:
        result = executor.run(LAUNCH, {}, drive)
        (server,) = executor.server_pids
    assert seen["parent"] == server
    # the standard streams (its log) and its channel: the server's control socket, its
    # wake-up pipe and any file it had open stayed behind
    assert len(seen["fds"]) == 4, seen["fds"]
    assert seen["environs"] and all(SECRET not in env for env in seen["environs"])
    from kernelwright.evaluate.containment import landlock_abi

    if landlock_abi():
        contained = result.containment
        assert contained["landlock_abi"] >= 1 and contained["seccomp"]


def test_its_end_is_reported_and_a_dead_server_is_replaced() -> None:
    codes: list[int | None] = []

    def killed(process: CandidateProcess) -> dict[str, Any]:
        os.kill(process.proc.pid, signal.SIGKILL)
        codes.append(process.proc.wait(timeout=10))
        return {}

    with SubprocessExecutor(prestart=0, fork_server=True) as executor:
        executor.run(LAUNCH, {}, killed)
        (server,) = executor.server_pids
        os.kill(server, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while is_running(server) and time.monotonic() < deadline:
            time.sleep(0.01)
        parents: list[int] = []
        result = executor.run(LAUNCH, {}, lambda p: parents.append(_ppid(p.proc.pid)) or {})
        restarted = executor.server_pids
    assert codes == [-signal.SIGKILL]
    assert result.result == {"extra_processes": []}
    # a new server replaced the dead one, and the process came from it
    assert restarted and restarted[0] != server and parents == [restarted[0]]


def test_a_server_that_cannot_fork_costs_a_cold_start(monkeypatch) -> None:
    from kernelwright.evaluate.forkserver import ForkServer

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError("the fork server did not answer")

    monkeypatch.setattr(ForkServer, "fork", refuse)
    parents: list[int] = []
    with SubprocessExecutor(prestart=0, fork_server=True) as executor:
        result = executor.run(LAUNCH, {}, lambda p: parents.append(_ppid(p.proc.pid)) or {})
    assert parents == [os.getpid()] and result.result == {"extra_processes": []}


def test_without_a_fork_server_each_process_starts_from_scratch() -> None:
    parents: list[int] = []
    with SubprocessExecutor(prestart=0, fork_server=False) as executor:
        executor.run(LAUNCH, {}, lambda p: parents.append(_ppid(p.proc.pid)) or {})
        assert executor.server_pids == ()
    assert parents == [os.getpid()]


def test_judges_are_forked_from_a_server_of_their_own(fixtures) -> None:
    from kernelwright.evaluate import EvalOptions
    from kernelwright.evaluate.harness import EvalSession
    from kernelwright.evaluate.judge import server_pids
    from kernelwright.records import Candidate, Status

    options = EvalOptions(device="cpu", trials=1, timing=False, baselines=False)
    source = (fixtures / "solutions" / "softmax_rows__honest.py").read_text()
    parents = []
    for _ in range(2):
        with EvalSession(fixtures / "tasks" / "softmax_rows.py", options) as session:
            assert session.evaluate(Candidate(source)).status is Status.CORRECT
            judge = session._judge
            assert judge is not None
            parents.append(_ppid(judge.proc.pid))
            (candidates_server,) = session.executor.server_pids
            marked = SANDBOX_MARK in _environ(candidates_server)
    # both sessions' judges came from one server, which is not the candidates'
    assert parents[0] == parents[1] and parents[0] in server_pids()
    assert parents[0] != candidates_server
    # each server has its children's environment: a candidate's mark, or none for judges
    assert marked and SANDBOX_MARK not in _environ(parents[0])


def test_a_server_serves_one_known_role(tmp_path: Path) -> None:
    from kernelwright.evaluate.forkserver import PRELOAD, ForkServer

    with pytest.raises(ValueError, match="roles: candidate, judge"):
        ForkServer(sys.executable, {}, tmp_path, tmp_path / "log", role="reference")
    # a candidate's process is forked from a server that never imported the judge's code
    assert not any("judge" in name or "referee" in name for name in PRELOAD["candidate"])
