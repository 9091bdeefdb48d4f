"""The parent's handle on the judge process (see ``judge_worker``).

The judge is kernelwright's own trusted code running the task's reference, so it is driven
directly (stdin commands, files back) rather than through an ``Executor``: it lives for the
whole evaluation, holding the expected outputs while the candidate runs.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kernelwright.errors import EvalError
from kernelwright.evaluate.executor import ProgressFn, _report_progress, _tail, child_pythonpath
from kernelwright.evaluate.request import JudgeRequest


class JudgeSession:
    """Start the judge, wait until it has prepared the reference, ask it to compare outputs."""

    def __init__(self, request: JudgeRequest, workdir: Path, env: dict[str, str]) -> None:
        self.request = request
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "request.pkl").write_bytes(pickle.dumps(request))
        full_env = dict(os.environ) | env
        full_env["PYTHONPATH"] = child_pythonpath()
        full_env["PYTHONUNBUFFERED"] = "1"
        self._log = open(workdir / "stderr.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kernelwright.evaluate.judge_worker", str(workdir)],
            cwd=str(workdir),
            env=full_env,
            stdin=subprocess.PIPE,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._seen = 0
        self._last = ""
        self._compares = 0

    def wait_prepared(self, timeout_s: float, on_progress: ProgressFn | None) -> dict[str, Any]:
        """The judge's summary of the reference. Raises EvalError if the reference failed."""
        path = self.workdir / "prepared.json"
        deadline = time.monotonic() + timeout_s
        while not path.exists():
            self._seen, self._last = _report_progress(
                self.workdir / "progress.log", self._seen, self._last, on_progress
            )
            if self.proc.poll() is not None and not path.exists():
                raise EvalError(
                    f"the task's reference process died ({_exit(self.proc.returncode)}) during "
                    f"'{self._last or 'start-up'}':\n{_tail(self.workdir / 'stderr.log', 1500)}"
                )
            if time.monotonic() > deadline:
                self.close()
                raise EvalError(
                    f"the task's reference did not finish within {timeout_s:.0f}s "
                    f"(last phase: {self._last or 'start-up'}); is the task too large for "
                    "this device? try --size small"
                )
            time.sleep(0.05)
        self._seen, self._last = _report_progress(
            self.workdir / "progress.log", self._seen, self._last, on_progress
        )
        summary: dict[str, Any] = json.loads(path.read_text())
        return summary

    def compare(self, published_path: str, timeout_s: float = 600.0) -> dict[str, Any]:
        """Ask the judge to compare what the candidate published; returns its report."""
        self._compares += 1
        report = self.workdir / f"report-{self._compares}.json"
        command = {
            "cmd": "compare",
            "path": published_path,
            "transport": self.request.transport,
            "report": str(report),
        }
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(command) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise EvalError("the judge process is gone; cannot compare outputs") from exc
        deadline = time.monotonic() + timeout_s
        while not report.exists():
            if self.proc.poll() is not None:
                raise EvalError(
                    f"the judge died while comparing outputs ({_exit(self.proc.returncode)}):\n"
                    f"{_tail(self.workdir / 'stderr.log', 1500)}"
                )
            if time.monotonic() > deadline:
                raise EvalError(f"the judge did not compare outputs within {timeout_s:.0f}s")
            time.sleep(0.02)
        data: dict[str, Any] = json.loads(report.read_text())
        return data

    def close(self) -> None:
        """Stop the judge. It holds nothing worth a graceful exit, so it is killed at once
        (an interpreter's teardown with torch loaded costs seconds)."""
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self._log.close()

    def __enter__(self) -> JudgeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
