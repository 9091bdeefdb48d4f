"""Executors run one harness job (a worker module on a request) somewhere, with a timeout.

The harness never assumes where it runs: it hands an executor a :class:`Job` and reads back a
:class:`JobResult`. ``SubprocessExecutor`` is the production one: a fresh Python process in its
own session, killed with its whole process group on timeout, so a hang or a crash of the
candidate is a result, never a hang or crash of kernelwright. Test doubles live in
``kernelwright.testing.fakes``; a pool over several GPUs or a Ray cluster plugs in here later.

The wire protocol is files in the job's directory: ``request.pkl`` in (a picklable request,
never a tensor), ``progress.log`` (one phase per line, for progress displays and crash
reports) and ``result.json`` out.

Start-up (Python, torch, Triton, TorchDynamo, CUDA) costs seconds per job, so a job whose worker
can be pre-started (``Job.prestart_device``) makes ``SubprocessExecutor`` start the next job's
process while this one runs; see :mod:`kernelwright.evaluate.prestart`.
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
from kernelwright.evaluate.prestart import (
    ACCEPT_TIMEOUT_S,
    ACCEPTED_FILE,
    Spare,
    SpareKey,
    kill_group,
    prestart_count,
)

ProgressFn = Callable[[str], None]
ResultFn = Callable[[dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Job:
    """One worker run: ``python -m <worker> <workdir>`` with ``request`` pickled into workdir.

    ``cwd`` is where the child starts (an empty sandbox folder for candidates, so a relative path
    finds nothing of the user's); ``env`` adds or overrides environment variables. A child given
    a ``release_path`` writes its result and then waits for that file before exiting, so memory it
    published (CUDA IPC) stays alive while ``on_result`` reads it. ``prestart_device`` says the
    worker runs through :func:`~kernelwright.evaluate.prestart.run_worker` and more jobs like
    this one follow: an executor may start the next one's process ahead, warmed up for that
    device (``cpu``, ``cuda``); None never pre-starts.
    """

    worker: str
    workdir: Path
    request: Any
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    release_path: Path | None = None
    prestart_device: str | None = None


@dataclass(frozen=True, slots=True)
class JobResult:
    """What came back: the result dict if the worker wrote one, else how it died.

    ``prestarted``: the job ran in a process started (and warmed up) before the job came.
    """

    result: dict[str, Any] | None
    returncode: int | None
    timed_out: bool
    last_phase: str
    stderr_tail: str
    duration_s: float
    prestarted: bool = False

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
    """Run each job in a fresh ``python -m`` child in its own process group.

    A job with a ``prestart_device`` also starts ``prestart`` spare processes (default: 1, or
    ``KERNELWRIGHT_PRESTART``; 0 turns it off) for the jobs after it, which import and warm up
    while this job runs. The next job with the same Python, worker, device and environment takes
    the oldest spare over; any other job kills them all and starts cold. Each process still
    serves one job. Close the executor (or use it as a context manager) to kill spares nobody
    will use; forgotten ones die at interpreter exit.
    """

    def __init__(
        self,
        python: str | None = None,
        poll_s: float = 0.05,
        *,
        prestart: int | None = None,
        accept_timeout_s: float = ACCEPT_TIMEOUT_S,
    ) -> None:
        self.python = python or sys.executable
        self.poll_s = poll_s
        self.prestart = prestart_count() if prestart is None else int(prestart)
        self.accept_timeout_s = accept_timeout_s
        self._spares: list[Spare] = []  # oldest first

    @property
    def spare_pids(self) -> tuple[int, ...]:
        """The processes waiting for the next jobs, oldest first."""
        return tuple(spare.proc.pid for spare in self._spares)

    def close(self) -> None:
        """Kill the spares (idempotent; the executor stays usable)."""
        spares, self._spares = self._spares, []
        for spare in spares:
            spare.discard()

    def __enter__(self) -> SubprocessExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        job: Job,
        timeout_s: float,
        on_progress: ProgressFn | None = None,
        on_result: ResultFn | None = None,
    ) -> JobResult:
        """See :class:`Executor`."""
        _prepare_workdir(job)
        env = self._child_env(job)
        key = self._key(job, env)
        spare = self._pop_spare(key)
        if key is not None:
            self._top_up(key)  # before waiting on ``spare``: the next job's warm up starts now
        start = time.monotonic()  # a spare still warming up spends the job's time, as a cold one
        proc = None
        if spare is not None:
            cwd = job.cwd or job.workdir
            proc = spare.hand_over(job.workdir, cwd, self.poll_s, self.accept_timeout_s)
        prestarted = proc is not None
        if proc is None:
            start = time.monotonic()
            proc = self._start_cold(job, env)
        outcome = _follow(proc, job, start + timeout_s, self.poll_s, on_progress, on_result)
        return JobResult(
            result=outcome.result,
            returncode=proc.returncode,
            timed_out=outcome.timed_out,
            last_phase=outcome.last_phase,
            stderr_tail=_tail(job.workdir / "stderr.log"),
            duration_s=time.monotonic() - start,
            prestarted=prestarted,
        )

    def _key(self, job: Job, env: dict[str, str]) -> SpareKey | None:
        if job.prestart_device is None:
            return None
        return SpareKey.of(self.python, job.worker, job.prestart_device, env)

    def _top_up(self, key: SpareKey) -> None:
        """Start spares for the jobs after this one (while it runs)."""
        try:
            while len(self._spares) < self.prestart:
                self._spares.append(Spare(key))
        except OSError:
            pass  # no spare (no processes or disk left): the next job starts cold, as without

    def _pop_spare(self, key: SpareKey | None) -> Spare | None:
        """The oldest spare if it fits the job's key; on a different key, none are kept."""
        if self._spares and self._spares[0].key != key:
            self.close()  # the spares were all started for one key
        return self._spares.pop(0) if self._spares else None

    def _child_env(self, job: Job) -> dict[str, str]:
        env = dict(os.environ)
        env.update(job.env)
        env["PYTHONPATH"] = child_pythonpath()
        env["PYTHONUNBUFFERED"] = "1"
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        return env

    def _start_cold(self, job: Job, env: dict[str, str]) -> subprocess.Popen[bytes]:
        with open(job.workdir / "stderr.log", "wb") as stderr_file:
            return subprocess.Popen(
                [self.python, "-m", job.worker, str(job.workdir)],
                cwd=str(job.cwd or job.workdir),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stderr_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )


@dataclass(frozen=True, slots=True)
class _Outcome:
    result: dict[str, Any] | None
    timed_out: bool
    last_phase: str


def _prepare_workdir(job: Job) -> None:
    job.workdir.mkdir(parents=True, exist_ok=True)
    (job.workdir / "request.pkl").write_bytes(pickle.dumps(job.request))
    for stale in ("progress.log", "result.json", ACCEPTED_FILE):
        (job.workdir / stale).unlink(missing_ok=True)
    if job.release_path is not None:
        job.release_path.unlink(missing_ok=True)


def _follow(
    proc: subprocess.Popen[bytes],
    job: Job,
    deadline: float,
    poll_s: float,
    on_progress: ProgressFn | None,
    on_result: ResultFn | None,
) -> _Outcome:
    """Report the child's phases until it exits, is released or runs out of time; kill it."""
    progress = job.workdir / "progress.log"
    result_path = job.workdir / "result.json"
    result: dict[str, Any] | None = None
    timed_out = False
    seen_lines, last_phase = 0, ""
    while True:
        try:
            proc.wait(timeout=poll_s)
            break
        except subprocess.TimeoutExpired:
            pass
        seen_lines, last_phase = _report_progress(progress, seen_lines, last_phase, on_progress)
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
    kill_group(proc)  # reap anything the child left behind in its group
    seen_lines, last_phase = _report_progress(progress, seen_lines, last_phase, on_progress)
    if result is None and not timed_out and result_path.exists():
        result = _read_result(result_path)
        if result is not None and on_result is not None:
            on_result(result)
    return _Outcome(result, timed_out, last_phase)


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
