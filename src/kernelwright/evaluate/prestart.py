"""Pre-started workers: the next job's process does its imports while the current job runs.

A worker whose ``__main__`` is :func:`run_worker` can be started two ways:

    python -m WORKER WORKDIR              cold: run the job in WORKDIR
    python -m WORKER --prestart DEVICE    warm: run ``warm_up(DEVICE)``, then block on stdin

``warm_up`` does only what depends on neither the job nor its request (imports, one-time
initialisation), and a cold start runs it too, first thing, so both processes reach the job in
the same state. The warm one then reads one line from stdin, the hand-over (the job's workdir
and cwd, its own warm-up log), turns itself into what a cold start for that job would be (cwd,
``sys.path[0]``, ``sys.argv``, stdin on /dev/null, stdout and stderr into the job's
``stderr.log``), writes :data:`ACCEPTED_FILE` into the workdir and runs the job exactly as a
cold start would.

The parent (:class:`~kernelwright.evaluate.executor.SubprocessExecutor`) keys a spare on
everything fixed when a process starts (:class:`SpareKey`) and uses it for one job at most. A
spare that does not acknowledge its job (it died, or hangs in its warm-up) is killed and the job
starts cold: a spare can cost time, never a verdict. A spare whose parent disappears reads the
end of its stdin, removes its start-up folder and exits.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwright.errors import ConfigError

PRESTART_FLAG = "--prestart"
PRESTART_ENV = "KERNELWRIGHT_PRESTART"
ACCEPTED_FILE = "accepted"
# A spare normally acknowledges within milliseconds; one still warming up gets this long to
# finish (a cold start would spend the same time importing) before it is replaced.
ACCEPT_TIMEOUT_S = 60.0


def prestart_count() -> int:
    """How many spares to keep: ``KERNELWRIGHT_PRESTART`` (0 turns pre-starting off), else 1."""
    value = os.environ.get(PRESTART_ENV, "1")
    try:
        count = int(value)
    except ValueError:
        count = -1
    if count < 0:
        raise ConfigError(
            f"{PRESTART_ENV}={value!r}: give the number of candidate processes to pre-start "
            "(0 turns pre-starting off, 1 is the default)"
        )
    return count


# --- parent side ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpareKey:
    """What a process fixes when it starts; a spare serves only a job with an equal key."""

    python: str
    worker: str
    device: str
    env: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, python: str, worker: str, device: str, env: Mapping[str, str]) -> SpareKey:
        """The key of a process started with exactly this environment."""
        return cls(python, worker, device, tuple(sorted(env.items())))


class Spare:
    """One pre-started worker process waiting for its job, in its own process group.

    It is killed when discarded, when it is garbage-collected and at interpreter exit, unless
    it was handed a job, after which it belongs to that job's runner.
    """

    def __init__(self, key: SpareKey) -> None:
        self.key = key
        # Its start-up folder (sys.path[0] while it imports) and its warm-up log.
        self.dir = Path(tempfile.mkdtemp(prefix="kw-spare-"))
        self.log = self.dir / "stderr.log"
        try:
            with open(self.log, "wb") as log:
                self.proc = subprocess.Popen(
                    [key.python, "-m", key.worker, PRESTART_FLAG, key.device],
                    cwd=str(self.dir),
                    env=dict(key.env),
                    stdin=subprocess.PIPE,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
        except OSError:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self._finalizer = weakref.finalize(self, _discard, self.proc, self.dir)

    def hand_over(
        self, workdir: Path, cwd: Path, poll_s: float, timeout_s: float = ACCEPT_TIMEOUT_S
    ) -> subprocess.Popen[bytes] | None:
        """Give the spare its job: its process once it took the job, else None (it is killed).

        The job's workdir must be ready (request written, stale files gone).
        """
        handover = {"workdir": str(workdir), "cwd": str(cwd), "warm_log": str(self.log)}
        if self._send(handover) and self._accepted(workdir / ACCEPTED_FILE, poll_s, timeout_s):
            self._finalizer.detach()
            shutil.rmtree(self.dir, ignore_errors=True)
            return self.proc
        self.discard()
        return None

    def discard(self) -> None:
        """Kill the spare and remove its folder (idempotent)."""
        self._finalizer()

    def _send(self, handover: dict[str, str]) -> bool:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(handover).encode() + b"\n")
            self.proc.stdin.close()  # the spare reads one line; nothing else ever comes
        except OSError:  # a broken pipe: the spare is gone
            return False
        return True

    def _accepted(self, ack: Path, poll_s: float, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not ack.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                return ack.exists()
            time.sleep(min(poll_s, 0.01))
        return True


def _discard(proc: subprocess.Popen[bytes], directory: Path) -> None:
    if proc.stdin is not None and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except OSError:
            pass
    kill_group(proc)
    shutil.rmtree(directory, ignore_errors=True)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill a child started with ``start_new_session`` and everything in its group; reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


# --- child side -------------------------------------------------------------------------------


def run_worker(main: Callable[[str], None], warm_up: Callable[[str], None]) -> None:
    """A worker's ``__main__``: a cold start runs ``main(WORKDIR)``; a spare warms up first."""
    args = sys.argv[1:]
    if args[:1] != [PRESTART_FLAG]:
        main(args[0])
        return
    warm_up(args[1])
    handover = _read_handover()
    if handover is None:  # discarded before it got a job, or its parent is gone
        shutil.rmtree(os.getcwd(), ignore_errors=True)  # the folder made for this spare alone
        return
    _become_cold_start(handover)
    (Path(handover["workdir"]) / ACCEPTED_FILE).touch()
    main(handover["workdir"])


def _read_handover() -> dict[str, Any] | None:
    """One JSON line from stdin (read from the descriptor: no buffer keeps bytes back)."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(0, 65536)
        if not chunk:
            return None
        data += chunk
    handover: dict[str, Any] = json.loads(data)
    return handover


def _become_cold_start(handover: dict[str, Any]) -> None:
    """Make this process what ``python -m WORKER WORKDIR`` started in the job's cwd would be."""
    start_dir = os.getcwd()
    os.chdir(handover["cwd"])
    if sys.path and sys.path[0] == start_dir:  # ``-m`` put the start-up folder first
        sys.path[0] = os.getcwd()
    sys.argv[1:] = [handover["workdir"]]
    sys.stdout.flush()
    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_RDWR)  # what subprocess.DEVNULL gives a cold start
    os.dup2(devnull, 0)
    os.close(devnull)
    log_path = Path(handover["workdir"]) / "stderr.log"
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # as open("wb")
    # What the warm-up printed comes first, as in a cold start's log.
    os.write(log, Path(handover["warm_log"]).read_bytes())
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
