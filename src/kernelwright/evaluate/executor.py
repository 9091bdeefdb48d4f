"""Executors start the candidate's process somewhere and end it, whatever it did.

The harness never assumes where a candidate runs: it hands an executor a :class:`Launch` (the
device and the process's limits), the files to place in the process's scratch folder, and a
``drive`` function; the executor starts a confined process (see ``candidate_worker``), waits until
it is ready, calls ``drive`` with it (the session hands its socket to the judge), then kills it
with everything it started and removes its folder. A crash, a hang or a fork bomb of the
candidate is a result, never a problem of kernelwright's.

Start-up (Python, torch, Triton, TorchDynamo, the CUDA context) costs seconds, so
``SubprocessExecutor`` forks each process (on the CPU, by default) from a fork server that
imported torch and Triton once (:mod:`~kernelwright.evaluate.forkserver`), and keeps
``prestart`` spare processes started for the next candidate while the current one runs. A forked
process and a spare are confined and warmed up exactly as a cold start is, and a spare serves
one candidate at most; a spare that died or is not ready within a minute, or a fork server that
stops answering, is replaced by a cold start: they can cost time, never a verdict.

On the CPU each process also gets its own PID namespace when the machine allows it: it then sees
no other process, and everything it started dies with it. Elsewhere the executor is the
subreaper of whatever the process leaves behind, and kills it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kernelwright.errors import ConfigError, HarnessError
from kernelwright.evaluate.channel import Channel, ChannelError, pair
from kernelwright.evaluate.containment import default_read_roots
from kernelwright.evaluate.forkserver import ForkServer, pdeathsig
from kernelwright.evaluate.forkserver import enabled as forks_for
from kernelwright.evaluate.kernel_cache import KernelCache
from kernelwright.evaluate.launchers import RecentSignatures
from kernelwright.evaluate.spawn import (
    RUN_PREFIX,
    SANDBOX_MARK,
    Process,
    available_memory,
    become_subreaper,
    child_env,
    child_pythonpath,
    descendants,
    is_running,
    kill_tree,
    remember_spawn,
    tail,
    tree_rss,
)

PRESTART_ENV = "KERNELWRIGHT_PRESTART"
PIDNS_ENV = "KERNELWRIGHT_PIDNS"
READY_TIMEOUT_S = 180.0  # a cold start: imports and the CUDA context
SPARE_READY_TIMEOUT_S = 60.0
WORKER = "kernelwright.evaluate.candidate_worker"


@dataclass(frozen=True, slots=True)
class Launch:
    """A candidate's process: where it runs and what it may use.

    ``extra_env`` adds variables (``TRITON_INTERPRET`` on the CPU); ``cpu_seconds`` and
    ``data_bytes`` become rlimits; ``memory_bytes`` is the resident size past which the executor
    kills the process (0: half the host memory available when the process starts).
    """

    device: str
    extra_env: Mapping[str, str] = field(default_factory=dict)
    cpu_seconds: int = 0
    data_bytes: int = 0
    memory_bytes: int = 0

    def key(self) -> tuple[Any, ...]:
        """What a spare must match to serve this launch."""
        return (self.device, tuple(sorted(self.extra_env.items())), self.cpu_seconds,
                self.data_bytes, self.memory_bytes)


@dataclass(slots=True)
class JobResult:
    """How one process ended.

    ``result``: what ``drive`` returned (the judge's report), None if it raised. ``killed``: why
    the executor stopped the process early (its memory), empty otherwise. ``wait_s``: from the
    request to a ready process (a spare still warming up, or a cold start).
    """

    result: dict[str, Any] | None
    returncode: int | None
    stderr_tail: str
    duration_s: float
    prestarted: bool = False
    killed: str = ""
    containment: dict[str, Any] = field(default_factory=dict)
    wait_s: float = 0.0


def triton_cache(home: Path) -> Path:
    """Where the process whose home is ``home`` keeps Triton's compiled kernels."""
    return home / ".cache" / "triton"


def candidate_env(launch: Launch, home: Path, mark: str) -> dict[str, str]:
    """A candidate's environment: the allow-listed part of ours, its own folders under
    ``home``, and ``mark`` under :data:`SANDBOX_MARK` (how its leftovers are known)."""
    cache = home / ".cache"
    return child_env(os.environ, {
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "XDG_CACHE_HOME": str(cache),
        "TRITON_CACHE_DIR": str(triton_cache(home)),
        "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
        "TORCH_EXTENSIONS_DIR": str(cache / "torch_extensions"),
        "CUDA_CACHE_PATH": str(cache / "nv"),
        "PYTHONPATH": child_pythonpath(),
        SANDBOX_MARK: mark,
        "OMP_NUM_THREADS": "1" if launch.device == "cpu" else os.environ.get(
            "OMP_NUM_THREADS", "4"),
        # torch.compile inside a candidate compiles in its own process (no worker pool that
        # would outlive the seal and look like a helper).
        "TORCHINDUCTOR_COMPILE_THREADS": "1",
    } | dict(launch.extra_env))


class CandidateProcess:
    """A started, confined, warmed-up process and the parent's end of its socket."""

    def __init__(self, launch: Launch, base: Path, python: str, pid_namespace: bool,
                 server: ForkServer | None = None,
                 launchers: list[list[str]] | None = None) -> None:
        self.launch = launch
        self.dir = Path(tempfile.mkdtemp(prefix="proc-", dir=base))
        self.scratch = self.dir / "scratch"
        self.scratch.mkdir()
        (self.scratch / "tmp").mkdir()
        self.log = self.dir / "stderr.log"
        mine, theirs = pair()
        spec = {
            "scratch": str(self.scratch),
            "device": launch.device,
            "channel_fd": theirs.fileno(),
            "read_roots": list(default_read_roots()),
            "cpu_seconds": launch.cpu_seconds,
            "data_bytes": launch.data_bytes,
            "pid_namespace": pid_namespace,
            "launchers": launchers or [],  # Triton launchers to build while warming up
        }
        env = candidate_env(launch, self.scratch, self.dir.name)
        self.proc: Process
        try:
            with open(self.log, "wb") as log:
                if server is not None:
                    self.proc = server.fork(spec, env, theirs.fileno(), log.fileno(),
                                            READY_TIMEOUT_S)
                else:
                    self.proc = subprocess.Popen(
                        [python, "-m", WORKER, json.dumps(spec)], cwd=str(self.scratch),
                        env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                        start_new_session=True, pass_fds=(theirs.fileno(),),
                        preexec_fn=pdeathsig,
                    )
                    remember_spawn(self.proc.pid)
        except BaseException:
            mine.close()
            theirs.close()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        theirs.close()
        self.sock = mine
        self.channel = Channel(mine)
        self.started = time.monotonic()
        self.ready: dict[str, Any] | None = None
        self.memory_limit = launch.memory_bytes or available_memory() // 2
        self.killed = ""
        self.pid_namespace = pid_namespace
        self._finalizer = weakref.finalize(self, _discard, self.proc, self.dir, self.sock)

    def answers(self, timeout_s: float) -> bool:
        """Whether the process is ready and still answers (a spare may have been killed since
        it said it was ready)."""
        if not self.wait_ready(timeout_s):
            return False
        try:
            self.channel.send({"op": "ping"})
            header, _ = self.channel.recv(time.monotonic() + timeout_s, max_payload=0)
        except ChannelError:
            return False
        return header.get("ok") is True

    def wait_ready(self, timeout_s: float) -> bool:
        """Read the process's ``ready`` frame (its containment report); False if it died or
        did not come in time."""
        if self.ready is not None:
            return True
        try:
            header, _ = self.channel.recv(time.monotonic() + timeout_s, max_payload=0)
        except ChannelError:
            return False
        if header.get("ready") is not True:
            return False
        self.ready = header
        return True

    def watch(self) -> str | None:
        """Kill the process if it holds more host memory than allowed; why, or None."""
        if self.killed or not self.memory_limit:
            return self.killed or None
        rss = tree_rss(self.proc.pid)
        if rss > self.memory_limit:
            self.killed = (f"its processes held {rss / 1e9:.1f} GB of host memory, over the "
                           f"limit of {self.memory_limit / 1e9:.1f} GB")
            kill_tree(self.proc)
            return self.killed
        return None

    def extra_processes(self) -> list[str]:
        """Processes the candidate started that are still running (beyond the namespace's init
        and the candidate's own), as ``name (pid)``."""
        kids = [p for p in descendants(self.proc.pid) if is_running(p)]
        expected: set[int] = set()
        if self.pid_namespace:  # the waiter's child is the init, the init's first child the worker
            init = [p for p in kids if _ppid(p) == self.proc.pid][:1]
            expected.update(init)
            expected.update([p for p in kids if init and _ppid(p) == init[0]][:1])
        return [f"{_comm(p)} ({p})" for p in kids if p not in expected]

    def discard(self) -> None:
        """Kill the process and everything it started; remove its folder (idempotent)."""
        self._finalizer()


class Executor(Protocol):
    """Starts candidates' processes. Implementations never raise for a failing candidate."""

    def run(
        self,
        launch: Launch,
        files: Mapping[str, str],
        drive: Callable[[CandidateProcess], dict[str, Any]],
        *,
        share_kernels: bool = False,
    ) -> JobResult:
        """Start a process, place ``files`` in its scratch folder, ``drive`` it, end it.
        ``share_kernels``: the files are kernelwright's own candidate, whose process may start
        with the kernels earlier such candidates compiled and leave its own to later ones
        (:mod:`~kernelwright.evaluate.kernel_cache`)."""
        ...

    def warm(self, launch: Launch, count: int = 1) -> None:
        """Have ``count`` processes for ``launch`` start now, before any is asked for (one
        already waiting counts), where the executor keeps spares at all; a hint, never an
        error."""
        ...

    def close(self) -> None:
        """Release spares and folders."""
        ...


class SubprocessExecutor:
    """Local processes, one per candidate, with ``prestart`` spares (``KERNELWRIGHT_PRESTART``;
    0 turns it off; by default two for a GPU's launches and one for the CPU's), forked from a
    fork server per kind of launch.

    ``fork_server`` (or ``KERNELWRIGHT_FORKSERVER=0|1``) chooses; by default CPU launches fork
    and GPU launches start each process from scratch (how a forked process's CUDA start-up
    behaves on every driver is not established yet)."""

    def __init__(self, prestart: int | None = None, *, python: str | None = None,
                 pid_namespace: bool | None = None, fork_server: bool | None = None) -> None:
        self.prestart = None if prestart is None else int(prestart)
        self.python = python or sys.executable
        self.pid_namespace = pid_namespace
        self.fork_server = fork_server
        self.base = Path(tempfile.mkdtemp(prefix=f"{RUN_PREFIX}{os.getpid()}-"))
        self._spares: list[CandidateProcess] = []
        self._servers: dict[tuple[Any, ...], ForkServer] = {}
        # the launchers earlier candidates' kernels needed, built by each new spare
        self._signatures = RecentSignatures()
        # the kernels kernelwright's own candidates compiled, for the next ones (never a
        # candidate kernelwright did not write: see kernel_cache)
        self.kernels = KernelCache(self.base / "kernels")
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.base, True)

    @property
    def spare_pids(self) -> tuple[int, ...]:
        """The processes waiting for the next candidates, oldest first."""
        return tuple(s.proc.pid for s in self._spares)

    @property
    def server_pids(self) -> tuple[int, ...]:
        """The fork servers (their children are candidates' processes and spares)."""
        return tuple(server.proc.pid for server in self._servers.values())

    def close(self) -> None:
        """Kill the spares and the fork servers and remove the executor's folder (the executor
        stays usable)."""
        spares, self._spares = self._spares, []
        for spare in spares:
            spare.discard()
        servers, self._servers = self._servers, {}
        for server in servers.values():
            server.close()

    def __enter__(self) -> SubprocessExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        launch: Launch,
        files: Mapping[str, str],
        drive: Callable[[CandidateProcess], dict[str, Any]],
        *,
        share_kernels: bool = False,
    ) -> JobResult:
        """See :class:`Executor`."""
        start = time.monotonic()
        process = self._take_spare(launch)
        prestarted = process is not None
        self._top_up(launch)  # the next candidate's process warms up while this one runs
        if process is None:
            process = self._start(launch)
            if not process.wait_ready(READY_TIMEOUT_S):
                log = tail(process.log, 2000)
                process.discard()
                raise HarnessError(
                    "a candidate's process could not start (before any candidate code ran); "
                    f"its output:\n{log}"
                )
        waited = time.monotonic() - start
        for name, text in files.items():
            (process.scratch / name).write_text(text)
        if share_kernels:  # before the candidate is imported, so its compiles find them
            self.kernels.seed(triton_cache(process.scratch))
        result: dict[str, Any] | None = None
        try:
            result = drive(process)
            if result is not None:
                result["extra_processes"] = process.extra_processes()
                self._signatures.add(result.get("launchers"))
                if share_kernels:
                    self.kernels.harvest(triton_cache(process.scratch))
        finally:
            code = process.proc.poll()
            log = tail(process.log)
            process.discard()
        return JobResult(
            result=result,
            returncode=code,
            stderr_tail=log,
            duration_s=time.monotonic() - start,
            prestarted=prestarted,
            killed=process.killed,
            containment=dict((result or {}).get("containment")
                             or (process.ready or {}).get("containment") or {}),
            wait_s=waited,
        )

    def warm(self, launch: Launch, count: int = 1) -> None:
        """See :class:`Executor`: ``count`` processes, or as many as the executor keeps spares
        if that is more (a session's baselines and first candidate then all find theirs
        started). Even an executor made to keep no spares (a single evaluation's) starts
        ``count``: they serve the next processes asked for. Only ``KERNELWRIGHT_PRESTART=0``
        turns it off."""
        if os.environ.get(PRESTART_ENV, "").strip() == "0":
            return
        if self._spares and self._spares[0].launch.key() != launch.key():
            self.close()  # spares were started for another kind of launch
        kept = prestart_count(launch.device) if self.prestart is None else self.prestart
        try:
            while len(self._spares) < max(count, kept):
                self._spares.append(self._start(launch))
        except OSError:
            pass  # no spare to be had: the process asked for starts cold

    def _start(self, launch: Launch) -> CandidateProcess:
        namespace = self._namespace(launch)
        if not namespace:
            become_subreaper()  # a daemon it forks is reparented here, and killed with it
        try:
            server = self._server(launch)
        except OSError:
            server = None  # no server to be had: a cold start, which says why if it fails too
        signatures = self._signatures.as_list()
        if server is not None:
            try:
                return CandidateProcess(launch, self.base, self.python, namespace, server,
                                        signatures)
            except OSError:
                self._servers.pop(launch.key(), None)
                server.close()  # it died or hangs: this process and the next start cold
        return CandidateProcess(launch, self.base, self.python, namespace, None, signatures)

    def _forks(self, launch: Launch) -> bool:
        return forks_for(launch.device) if self.fork_server is None else self.fork_server

    def _server(self, launch: Launch) -> ForkServer | None:
        if not self._forks(launch):
            return None
        server = self._servers.get(launch.key())
        if server is not None and not server.alive:
            self._servers.pop(launch.key())
            server.close()
            server = None
        if server is None:
            home = Path(tempfile.mkdtemp(prefix="forkserver-", dir=self.base))
            (home / "tmp").mkdir()
            server = ForkServer(self.python, candidate_env(launch, home, home.name), self.base,
                                home / "stderr.log")
            self._servers[launch.key()] = server
        return server

    def _namespace(self, launch: Launch) -> bool:
        if self.pid_namespace is not None:
            return self.pid_namespace
        setting = os.environ.get(PIDNS_ENV)
        if setting is not None:
            return setting != "0"
        # CUDA IPC between processes of different PID namespaces is not assumed to work.
        return launch.device == "cpu"

    def _take_spare(self, launch: Launch) -> CandidateProcess | None:
        if self._spares and self._spares[0].launch.key() != launch.key():
            self.close()  # spares were started for another kind of launch
        while self._spares:
            spare = self._spares.pop(0)
            if spare.proc.poll() is None and spare.answers(SPARE_READY_TIMEOUT_S):
                return spare
            spare.discard()
        return None

    def _top_up(self, launch: Launch) -> None:
        try:
            wanted = prestart_count(launch.device) if self.prestart is None else self.prestart
            while len(self._spares) < wanted:
                self._spares.append(self._start(launch))
        except OSError:
            pass  # no spare (no processes or disk left): the next candidate starts cold


def prestart_count(device: str) -> int:
    """How many spares to keep for ``device``'s launches: ``KERNELWRIGHT_PRESTART`` (0 turns
    pre-starting off), else two on a GPU and one on the CPU. A GPU's process starts cold (Python,
    torch, Triton, a CUDA context, Triton's first compile: about 6 s on an H200), longer than a
    small kernel's whole evaluation, so one spare is often still starting when the next
    candidate comes; on the CPU processes are forked in well under a second."""
    value = os.environ.get(PRESTART_ENV, "2" if device == "cuda" else "1")
    try:
        count = int(value)
    except ValueError:
        count = -1
    if count < 0:
        raise ConfigError(
            f"{PRESTART_ENV}={value!r}: give the number of candidate processes to pre-start "
            "(0 turns pre-starting off; by default 2 on a GPU, 1 on the CPU)"
        )
    return count


def _ppid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def _discard(proc: Process, directory: Path, sock: Any) -> None:
    try:
        sock.close()
    except OSError:
        pass
    kill_tree(proc)
    shutil.rmtree(directory, ignore_errors=True)

