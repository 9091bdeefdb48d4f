"""The parent's handle on the judge process (see ``judge_worker``).

The judge is kernelwright's own trusted code running the task's reference. The parent starts it
with a control channel, waits for its summary, then hands it one process socket at a time to
judge (the socket travels as a file descriptor, so the judge and that process talk directly).
Anything that goes wrong with the judge itself is a :class:`~kernelwright.errors.HarnessError`:
the harness failed, not the candidate.
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelwright.errors import EvalError, HarnessError
from kernelwright.evaluate.channel import Channel, ChannelClosed, ChannelTimeout, pair
from kernelwright.evaluate.request import JudgeRequest
from kernelwright.evaluate.spawn import child_env, child_pythonpath, remember_spawn, tail

ProgressFn = Callable[[str], None]
WatchFn = Callable[[], str | None]
# The judge's own steps after a process's time limit (reading outputs, comparing) get this long.
GRACE_S = 120.0


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
        with open(self._log_path, "wb") as log:
            self.proc = subprocess.Popen(
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


def _exit(proc: subprocess.Popen[bytes]) -> str:
    code = proc.poll()
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
