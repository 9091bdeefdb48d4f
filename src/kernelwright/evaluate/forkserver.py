"""A warm parent for the harness's processes: it imports once and forks one child per process.

    python -m kernelwright.evaluate.forkserver CONTROL_FD RUN_DIR ROLE

Imports (Python, torch, Triton) are most of what starting a candidate's process costs: seconds
of CPU each time. The executor starts one fork server per kind of launch (its environment is
the launch's, allow-listed like any candidate's), and judges have one of their own; a server
imports what every child needs, runs no tensor operation (no thread pool, no CUDA context:
those belong to each child), then answers requests until its parent closes the control socket:

    fork    header ``{"op": "fork", "spec": ..., "env": ...}`` with two descriptors attached
            (the child's end of its channel, its log file); reply ``{"pid": N}``
    exit    sent unasked when a child ends: ``{"exit": N, "code": C}``, C as
            ``subprocess.Popen.returncode`` gives it (-s for a death by signal s)

A server has one ``ROLE``: ``candidate`` children run
:mod:`~kernelwright.evaluate.candidate_worker` with ``spec``; ``judge`` children run
:mod:`~kernelwright.evaluate.judge_worker` (trusted, on the parent's side of the harness). It
imports only what its role needs: a candidate's process holds no judge code it did not import
itself.

Each child is single-threaded (a fork copies only the forking thread), so it confines itself as
a cold-started process does (:mod:`~kernelwright.evaluate.candidate_worker`): its own session,
its environment replaced by the candidate's, every other descriptor closed, then the sandbox.
The server runs no candidate code and keeps nothing a candidate could use; it is not dumpable
(no ptrace, no ``/proc/PID/mem``: a child cannot reach into the parent of the next candidates);
it dies with its parent, and its children with it. ``RUN_DIR`` (the executor's folder) is only
named on the command line, which the children inherit: a process left behind is found by it
like a cold-started one.

:class:`ForkServer` is the parent's end and :class:`ForkedProcess` its handle on one child,
used like ``subprocess.Popen`` (``pid``, ``poll``, ``wait``).
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernelwright.evaluate.channel import Channel, ChannelError, pair
from kernelwright.evaluate.spawn import is_running, kill_tree, remember_spawn, tail

MODULE = "kernelwright.evaluate.forkserver"
ENV = "KERNELWRIGHT_FORKSERVER"


# What each role's worker would import while warming up; imported once for all its children.
_COMMON = ("torch", "torch.utils._python_dispatch", "torch.utils.cpp_extension", "torch.profiler",
           "triton", "triton.language", "triton.testing", "kernelwright.evaluate.transport",
           "kernelwright.evaluate.runs", "kernelwright.evaluate.precision")
PRELOAD = {
    "candidate": (*_COMMON, "kernelwright.evaluate.candidate_worker",
                  "kernelwright.evaluate.guard.observer", "kernelwright.evaluate.guard.integrity",
                  "kernelwright.evaluate.guard.monitor", "kernelwright.evaluate.guard.sandbox"),
    "judge": (*_COMMON, "kernelwright.evaluate.judge_worker", "kernelwright.evaluate.referee"),
}


def enabled(device: str) -> bool:
    """Whether processes for ``device`` are forked: ``KERNELWRIGHT_FORKSERVER=0|1`` decides, by
    default the CPU's are and a GPU's start from scratch (how a forked process's CUDA start-up
    behaves on every driver is not established yet)."""
    setting = os.environ.get(ENV)
    if setting is not None:
        return setting != "0"
    return device == "cpu"


def main(argv: list[str]) -> None:
    """Entry point; see the module docstring."""
    pdeathsig()
    control = Channel.from_fd(int(argv[0]))
    role = argv[2]
    _preload(PRELOAD[role])
    _dumpable(False)  # no ptrace of the server and no /proc/PID/mem, its children's included
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the select below
    while True:
        try:
            ready, _, _ = select.select([control.fileno(), wake_r], [], [])
        except InterruptedError:
            ready = []
        if wake_r in ready:
            _drain(wake_r)
        if not _report_exits(control):
            break
        if control.fileno() in ready and not _serve_one(control, role, (wake_r, wake_w)):
            break
    os._exit(0)  # the parent is gone; the children die with this process


def _preload(names: tuple[str, ...]) -> None:
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # Triton is optional; the child reports what it lacks


def _serve_one(control: Channel, role: str, wake: tuple[int, int]) -> bool:
    """Answer one request; False when the parent has gone away."""
    try:
        header, _ = control.recv(time.monotonic() + 30.0, max_payload=0)
        channel_fd, log_fd = control.take_fds(2)
    except ChannelError:
        return False
    if header.get("op") != "fork":
        os.close(channel_fd)
        os.close(log_fd)
        return _send(control, {"error": f"unknown request {header.get('op')!r}"})
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError as exc:
        os.close(channel_fd)
        os.close(log_fd)
        return _send(control, {"error": f"fork failed: {exc}"})
    if pid == 0:
        _become_child(role, header, channel_fd, log_fd, (control.fileno(), *wake))
    os.close(channel_fd)
    os.close(log_fd)
    return _send(control, {"pid": pid})


def _become_child(role: str, header: dict[str, Any], channel_fd: int, log_fd: int,
                  server_fds: tuple[int, ...]) -> None:
    """In the child: shed the server (signals, descriptors, environment), run the worker of its
    role, and never return into the server's loop."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _dumpable(True)  # as a cold-started process is: the executor reads its /proc entries
        for fd in server_fds:
            os.close(fd)
        os.setsid()
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        _close_all_but(0, 1, 2, channel_fd)
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(header["env"]).items()})
        import tempfile

        tempfile.tempdir = None  # TMPDIR is the child's now
        if role == "judge":
            from kernelwright.evaluate import judge_worker

            os.chdir(str(header["spec"]["cwd"]))
            sys.argv = [judge_worker.__file__, str(channel_fd)]
            judge_worker.main(sys.argv[1:])
        else:
            spec = dict(header["spec"])
            spec["channel_fd"] = channel_fd
            from kernelwright.evaluate import candidate_worker

            # The arguments a cold-started worker gets: the candidate sees the same process
            # either way.
            sys.argv = [candidate_worker.__file__, json.dumps(spec)]
            candidate_worker.main(sys.argv[1:])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # the worker itself failed (a candidate's failures are its replies)
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _dumpable(on: bool) -> None:
    if _prctl is not None:
        _prctl(4, int(on), 0, 0, 0)  # PR_SET_DUMPABLE


def _close_all_but(*keep: int) -> None:
    try:
        fds = sorted(int(n) for n in os.listdir("/proc/self/fd"))
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _report_exits(control: Channel) -> bool:
    """Reap every child that ended and tell the parent; False when the parent is gone."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return True
        code = os.waitstatus_to_exitcode(status)  # -s for a death by signal s
        if not _send(control, {"exit": pid, "code": code}):
            return False


def _send(control: Channel, header: dict[str, Any]) -> bool:
    try:
        control.send(header)
    except ChannelError:
        return False
    return True


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


# -- the parent's end ---------------------------------------------------------------------------


class ForkServer:
    """Start a fork server; ask it for children; learn how they ended. Thread-safe."""

    def __init__(self, python: str, env: Mapping[str, str], run_dir: Path, log: Path,
                 role: str = "candidate", cleanup: bool = False) -> None:
        """Start a server for children of ``role`` in ``run_dir`` (removed with the server when
        ``cleanup``)."""
        if role not in PRELOAD:
            raise ValueError(f"no fork server role {role!r} (roles: {', '.join(PRELOAD)})")
        mine, theirs = pair()
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                [python, "-m", MODULE, str(theirs.fileno()), str(run_dir), role],
                cwd=str(run_dir),
                env=dict(env), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, pass_fds=(theirs.fileno(),), preexec_fn=pdeathsig,
            )
        remember_spawn(self.proc.pid)
        theirs.close()
        self._channel = Channel(mine)
        self._ended: dict[int, int] = {}  # exit codes reported and not yet claimed
        self._gone = False
        self._lock = threading.Lock()
        self._owner = os.getpid()
        self._finalizer = weakref.finalize(self, _stop, self.proc, mine,
                                           run_dir if cleanup else None, self._owner)

    @property
    def alive(self) -> bool:
        """Running, and this process's child (a copy inherited through a fork is not)."""
        return not self._gone and os.getpid() == self._owner and self.proc.poll() is None

    def fork(self, spec: Mapping[str, Any], env: Mapping[str, str], channel_fd: int,
             log_fd: int, timeout_s: float) -> ForkedProcess:
        """A new child running the worker of the server's role with ``spec`` and ``env``.
        OSError when the server cannot make one (it died, or did not answer within
        ``timeout_s``: its first answer waits for its imports)."""
        with self._lock:
            try:
                self._channel.send({"op": "fork", "spec": dict(spec), "env": dict(env)},
                                   fds=(channel_fd, log_fd))
                deadline = time.monotonic() + timeout_s
                while True:
                    header = self._next(deadline)
                    if "pid" in header:
                        pid = int(header["pid"])
                        self._ended.pop(pid, None)  # reported before the reply: an older child's
                        break
                    if "error" in header:
                        raise OSError(str(header["error"]))
            except ChannelError as exc:
                self._gone = True
                raise OSError(f"the fork server did not answer ({exc}); its output:\n"
                              f"{tail(self.log, 2000)}") from None
        remember_spawn(pid)
        return ForkedProcess(self, pid)

    def returncode(self, pid: int, wait_s: float = 0.0) -> int | None:
        """How child ``pid`` ended, None while it runs (or if its end is not reported within
        ``wait_s``)."""
        deadline = time.monotonic() + wait_s
        with self._lock:
            while not self._gone and pid not in self._ended:
                timeout = max(0.0, deadline - time.monotonic())
                try:
                    if not select.select([self._channel.fileno()], [], [], timeout)[0]:
                        break
                    self._next(time.monotonic() + 5.0)
                except (ChannelError, OSError, ValueError):
                    self._gone = True
            if pid in self._ended:
                return self._ended.pop(pid)
        if self._gone and not is_running(pid):
            return -signal.SIGKILL  # the server died, and its children with it
        return None

    def close(self) -> None:
        """Stop the server and every child it made (idempotent)."""
        self._gone = True
        self._finalizer()

    def _next(self, deadline: float) -> dict[str, Any]:
        header, _ = self._channel.recv(deadline, max_payload=0)
        if "exit" in header:
            self._ended[int(header["exit"])] = int(header["code"])
        return header


class ForkedProcess:
    """A fork server's child, with the part of ``subprocess.Popen``'s interface the executor
    uses."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.returncode(self.pid)
        if self.returncode is None and not is_running(self.pid):
            # It ended and the server has yet to reap it: its report is a moment away (and a
            # process ended is never taken for a live one, a spare above all).
            self.returncode = self.server.returncode(self.pid, wait_s=5.0)
            if self.returncode is None:
                self.returncode = -signal.SIGKILL
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"process {self.pid}", timeout or 0.0)
            time.sleep(0.005)
        return code


def _stop(proc: subprocess.Popen[bytes], sock: Any, folder: Path | None, owner: int) -> None:
    try:
        sock.close()
    except OSError:
        pass
    if os.getpid() != owner:
        return  # a copy inherited through a fork: the server is the original's to stop
    kill_tree(proc)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def pdeathsig() -> None:
    """SIGKILL this process when the thread that started it ends (Linux). Safe between fork and
    exec: it takes no Python lock."""
    if _prctl is not None:
        _prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG


if __name__ == "__main__":
    # Serve from the imported module, the one the children's code refers to by name.
    from kernelwright.evaluate.forkserver import main as _main

    _main(sys.argv[1:])
