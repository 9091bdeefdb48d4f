"""The parent's handle on the judge process (see ``judge_worker``).

The judge is kernelwright's own trusted code running the task's reference. The parent starts it
with a control channel, waits for its summary, then hands it one process socket at a time to
judge (the socket travels as a file descriptor, so the judge and that process talk directly).
Anything that goes wrong with the judge itself is a :class:`~kernelwright.errors.HarnessError`:
the harness failed, not the candidate. Where processes are forked (see
:mod:`~kernelwright.evaluate.forkserver`) the judge comes from a fork server kept for judges.
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from kernelwright.errors import EvalError, HarnessError
from kernelwright.evaluate.channel import Channel, ChannelClosed, ChannelTimeout, pair
from kernelwright.evaluate.forkserver import ForkedProcess, ForkServer
from kernelwright.evaluate.forkserver import enabled as forks_for
from kernelwright.evaluate.request import JudgeRequest
from kernelwright.evaluate.spawn import (
    Process,
    child_env,
    child_pythonpath,
    new_run_dir,
    remember_spawn,
    tail,
)

ProgressFn = Callable[[str], None]
WatchFn = Callable[[], str | None]
# The judge's own steps after a process's time limit (reading outputs, comparing) get this long.
GRACE_S = 120.0
READY_S = 180.0  # the judges' server answers its first fork once it has imported torch


class JudgeProcess:
    """Start the judge, wait for its summary, ask it to judge processes."""

    def __init__(self, request: JudgeRequest, workdir: Path, env: dict[str, str]) -> None:
        self.request = request
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        mine, theirs = pair()
        full_env = child_env(os.environ, env)
        full_env["PYTHONPATH"] = child_pythonpath()
        self._log_path = workdir / "stderr.log"
        self.proc: Process
        with open(self._log_path, "wb") as log:
            self.proc = _forked(full_env, request.device, workdir, theirs, log) or subprocess.Popen(
                [sys.executable, "-m", "kernelwright.evaluate.judge_worker", str(theirs.fileno())],
                cwd=str(workdir),
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
            )
        remember_spawn(self.proc.pid)
        theirs.close()
        self.ch = Channel(mine)
        self.ch.send({"op": "prepare"}, pickle.dumps(request))
        self.last = ""

    def wait_prepared(self, timeout_s: float, on_progress: ProgressFn | None) -> dict[str, Any]:
        """The judge's summary of the reference (``ok`` False: the task or reference failed)."""
        try:
            header = self._until("prepared", time.monotonic() + timeout_s, on_progress, None)
        except HarnessError as exc:  # before any candidate: the task's own code took it down
            raise EvalError(f"the task's reference could not be run: {exc}") from None
        summary: dict[str, Any] = header["prepared"]
        return summary

    def judge(
        self,
        process: socket.socket,
        command: dict[str, Any],
        timeout_s: float,
        on_progress: ProgressFn | None,
        watch: WatchFn | None = None,
    ) -> dict[str, Any]:
        """Hand ``process`` to the judge with ``command`` (role, timing, guard...); its report."""
        self.ch.send({"op": "judge", "timeout_s": timeout_s} | command, fds=[process.fileno()])
        deadline = time.monotonic() + timeout_s + GRACE_S
        header = self._until("report", deadline, on_progress, watch)
        report: dict[str, Any] = header["report"]
        if "harness_error" in report:
            raise HarnessError(
                f"the judge failed while judging ({report['harness_error']}); this is a "
                f"kernelwright bug, not the candidate's fault:\n{report.get('traceback', '')}"
            )
        return report

    def _until(
        self, key: str, deadline: float, on_progress: ProgressFn | None, watch: WatchFn | None
    ) -> dict[str, Any]:
        while True:
            try:
                header, _ = self.ch.recv(min(deadline, time.monotonic() + 0.25), max_payload=0)
            except ChannelTimeout:
                if time.monotonic() > deadline:
                    self.close()
                    raise HarnessError(
                        f"the judge did not answer in time (last phase: {self.last or 'start'})"
                    ) from None
                if watch is not None:
                    watch()
                continue
            except ChannelClosed:
                raise HarnessError(
                    f"the judge process ended ({_exit(self.proc)}) during "
                    f"'{self.last or 'start-up'}':\n{tail(self._log_path, 1500)}"
                ) from None
            if "progress" in header:
                self.last = str(header["progress"])
                if on_progress is not None:
                    on_progress(self.last)
                continue
            if key in header:
                return header

    def close(self) -> None:
        """Stop the judge (it holds nothing worth a graceful exit)."""
        self.ch.close()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()

    def __enter__(self) -> JudgeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Judges are forked from a server of their own per environment (never a candidates' server):
# a judge costs a fork instead of seconds of imports, the first one of a process excepted.
_servers: dict[tuple[tuple[str, str], ...], ForkServer] = {}
_servers_lock = threading.Lock()
# A process forked from this one starts its own servers (these are not its children).
os.register_at_fork(after_in_child=_servers.clear)


def server_pids() -> tuple[int, ...]:
    """The judges' fork servers of this process (they live as long as it does)."""
    return tuple(server.proc.pid for server in _servers.values())


def _forked(env: dict[str, str], device: str, workdir: Path, channel: socket.socket,
            log: BinaryIO) -> ForkedProcess | None:
    """A judge forked from this process's judge server for ``env``; None where judges are not
    forked or the server cannot make one (the judge then starts from scratch)."""
    if not forks_for(device):
        return None
    key = tuple(sorted(env.items()))
    with _servers_lock:
        server = _servers.get(key)
        if server is not None and not server.alive:
            server.close()
            server = None
        if server is None:
            home = new_run_dir()
            try:
                server = ForkServer(sys.executable, env, home, home / "stderr.log",
                                    role="judge", cleanup=True)
            except OSError:  # no process to be had: the judge's own start will say so
                shutil.rmtree(home, ignore_errors=True)
                return None
            _servers[key] = server
    try:
        return server.fork({"cwd": str(workdir)}, env, channel.fileno(), log.fileno(), READY_S)
    except OSError:
        with _servers_lock:
            if _servers.get(key) is server:
                del _servers[key]
        server.close()
        return None


def _exit(proc: Process) -> str:
    code = proc.poll()
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
