"""Executors run one harness job (a worker module on a request) somewhere, with a timeout.

The harness never assumes where it runs: it hands an executor a :class:`Job` and reads back a
:class:`JobResult`. ``SubprocessExecutor`` is the production one: a fresh Python process in its
own session, killed with its whole process group on timeout, so a hang or a crash of the
candidate is a result, never a hang or crash of kernelwright. Test doubles live in
``kernelwright.testing.fakes``; a pool over several GPUs or a Ray cluster plugs in here later.

The wire protocol is files in the job's directory: ``request.pkl`` in (a picklable request,
never a tensor), ``progress.log`` (one phase per line, for progress displays and crash
reports) and ``result.json`` out.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import kernelwright

ProgressFn = Callable[[str], None]
ResultFn = Callable[[dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Job:
    """One worker run: ``python -m <worker> <workdir>`` with ``request`` pickled into workdir.

    ``cwd`` is where the child starts (an empty sandbox folder for candidates, so a relative path
    finds nothing of the user's); ``env`` adds or overrides environment variables. A child given
    a ``release_path`` writes its result and then waits for that file before exiting, so memory it
    published (CUDA IPC) stays alive while ``on_result`` reads it.
    """

    worker: str
    workdir: Path
    request: Any
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    release_path: Path | None = None


@dataclass(frozen=True, slots=True)
class JobResult:
    """What came back: the result dict if the worker wrote one, else how it died."""

    result: dict[str, Any] | None
    returncode: int | None
    timed_out: bool
    last_phase: str
    stderr_tail: str
    duration_s: float

    @property
    def crashed(self) -> bool:
        """The child ended without writing a result (signal, ``os._exit``, interpreter abort)."""
        return self.result is None and not self.timed_out

    def describe_exit(self) -> str:
        """``'killed by SIGSEGV'`` or ``'exited with code 3'``, for messages."""
        code = self.returncode
        if code is None:
            return "did not exit"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with code {code}"


class Executor(Protocol):
    """Runs harness jobs. Implementations must never raise for a failing child."""

    def run(
        self,
        job: Job,
        timeout_s: float,
        on_progress: ProgressFn | None = None,
        on_result: ResultFn | None = None,
    ) -> JobResult:
        """Run ``job`` to completion or ``timeout_s``; report phases through ``on_progress``.

        ``on_result`` is called with the result while the child still waits for its release.
        """
        ...


def child_pythonpath() -> str:
    """PYTHONPATH that lets a child import this very kernelwright (installed or from source)."""
    package_root = str(Path(kernelwright.__file__).resolve().parent.parent)
    existing = os.environ.get("PYTHONPATH", "")
    return package_root + (os.pathsep + existing if existing else "")


class SubprocessExecutor:
    """Run each job in a fresh ``python -m`` child in its own process group."""

    def __init__(self, python: str | None = None, poll_s: float = 0.05) -> None:
        self.python = python or sys.executable
        self.poll_s = poll_s

    def run(
        self,
        job: Job,
        timeout_s: float,
        on_progress: ProgressFn | None = None,
        on_result: ResultFn | None = None,
    ) -> JobResult:
        """See :class:`Executor`."""
        job.workdir.mkdir(parents=True, exist_ok=True)
        (job.workdir / "request.pkl").write_bytes(pickle.dumps(job.request))
        progress = job.workdir / "progress.log"
        result_path = job.workdir / "result.json"
        for stale in (progress, result_path, job.release_path):
            if stale is not None:
                stale.unlink(missing_ok=True)
        env = dict(os.environ)
        env.update(job.env)
        env["PYTHONPATH"] = child_pythonpath()
        env["PYTHONUNBUFFERED"] = "1"
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        stderr_path = job.workdir / "stderr.log"
        start = time.monotonic()
        result: dict[str, Any] | None = None
        timed_out = False
        with open(stderr_path, "wb") as stderr_file:
            proc = subprocess.Popen(
                [self.python, "-m", job.worker, str(job.workdir)],
                cwd=str(job.cwd or job.workdir),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stderr_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            seen_lines, last_phase = 0, ""
            deadline = start + timeout_s
            while True:
                try:
                    proc.wait(timeout=self.poll_s)
                    break
                except subprocess.TimeoutExpired:
                    pass
                seen_lines, last_phase = _report_progress(
                    progress, seen_lines, last_phase, on_progress
                )
                if job.release_path is not None and result_path.exists():
                    result = _read_result(result_path)
                    if result is not None:
                        if on_result is not None:
                            on_result(result)
                        # Done: the child only waits to be released. Ending it here skips its
                        # interpreter's slow teardown (torch, CUDA), which is seconds per job.
                        job.release_path.touch()
                        break
                if time.monotonic() > deadline:
                    timed_out = True
                    break
            _kill_group(proc)  # reap anything the child left behind in its group
        seen_lines, last_phase = _report_progress(progress, seen_lines, last_phase, on_progress)
        if result is None and not timed_out and result_path.exists():
            result = _read_result(result_path)
            if result is not None and on_result is not None:
                on_result(result)
        return JobResult(
            result=result,
            returncode=proc.returncode,
            timed_out=timed_out,
            last_phase=last_phase,
            stderr_tail=_tail(stderr_path),
            duration_s=time.monotonic() - start,
        )


def _read_result(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _report_progress(
    path: Path, seen: int, last: str, on_progress: ProgressFn | None
) -> tuple[int, str]:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return seen, last
    for line in lines[seen:]:
        last = line
        if on_progress is not None:
            on_progress(line)
    return len(lines), last


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", errors="replace")


# --- child side -------------------------------------------------------------------------------


class ChildIO:
    """The child's half of the protocol: read the request, report phases, write the result."""

    def __init__(self, workdir: str | Path) -> None:
        self.workdir = Path(workdir)
        self._progress = open(self.workdir / "progress.log", "a", buffering=1)  # noqa: SIM115

    def request(self) -> Any:
        """The unpickled request."""
        return pickle.loads((self.workdir / "request.pkl").read_bytes())

    def phase(self, text: str) -> None:
        """Record a phase; the parent shows it and names it if the child dies here."""
        self._progress.write(text.replace("\n", " ") + "\n")
        self._progress.flush()

    def finish(self, result: Mapping[str, Any]) -> None:
        """Write the result atomically (a reader never sees half a file)."""
        tmp = self.workdir / "result.json.tmp"
        tmp.write_text(json.dumps(result, default=_json_default))
        tmp.replace(self.workdir / "result.json")


def _json_default(value: Any) -> Any:
    if isinstance(value, float | int | str | bool) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    return repr(value)
