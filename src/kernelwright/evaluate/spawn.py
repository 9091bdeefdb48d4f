"""Starting and ending the harness's child processes: environments, process trees, leftovers.

    child_env        the environment a child gets: a short allow-list of the parent's (paths to
                     Python, CUDA and the locale), never the parent's kernelwright settings
    kill_tree        SIGKILL a child's process group and every process descended from it, also
                     those that left the group (``setsid``) before they could be stopped
    tree_rss         resident memory of a process and its descendants (the memory watchdog)
    sweep_stale      remove run folders of kernelwright processes that died without cleaning up
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import kernelwright

# What a child inherits from the parent's environment; everything else is left out (the user's
# kernelwright home, caches, working folder...).
_KEEP = ("PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
         "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "TORCH_SYMM_MEM_DISABLE_MULTICAST")
_KEEP_PREFIXES = ("LC_", "NVIDIA_", "NCCL_", "NVSHMEM_")
RUN_PREFIX = "kw-run-"
# Set in every candidate's environment: what this process adopts as an orphan is killed only if
# it carries the mark (or sits in a candidate's session), never another child of the program
# kernelwright runs in.
SANDBOX_MARK = "KERNELWRIGHT_SANDBOX"
# PyTorch's caching allocator in every child: blocks of 256 MB and more are never split, so a
# freed gigabyte temporary stays whole for the next call's. Split, it left a reference whose
# call makes a 17 GB temporary (a sum over a 2**31-entry mask, widened to int64) out of memory
# on an 80 GB H100 that its memory plan fitted, beside 18 GB reserved but unusable; with this
# setting the same task was judged. Not the user's setting: expandable segments (the other cure)
# make CUDA IPC handles that the protocol rejects as malformed, which refused every candidate.
ALLOCATOR = ("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:256")


def child_pythonpath() -> str:
    """PYTHONPATH that lets a child import this very kernelwright (installed or from source)."""
    return str(Path(kernelwright.__file__).resolve().parent.parent)


def child_env(environ: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed part of ``environ``, then ``extra``."""
    env = {k: v for k, v in environ.items() if k in _KEEP or k.startswith(_KEEP_PREFIXES)}
    env.update(PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    env[ALLOCATOR[0]] = ALLOCATOR[1]
    env.update(extra)
    return env


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children first), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in _proc_entries():
        ppid = _ppid(entry)
        if ppid is not None:
            parents.setdefault(ppid, []).append(entry)
    found: list[int] = []
    frontier = [pid]
    while frontier:
        children = parents.get(frontier.pop(), [])
        found.extend(children)
        frontier.extend(children)
    return found


class Process(Protocol):
    """What :func:`kill_tree` needs of a child: a ``subprocess.Popen`` or a fork server's."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


def kill_tree(proc: Process) -> None:
    """Kill ``proc`` (started with ``start_new_session``), its group and all its descendants,
    and return once they are gone."""
    killed: set[int] = set()
    for _ in range(3):  # a descendant may fork while we look; look again
        victims = descendants(proc.pid)
        killed.update(victims)
        for pid in victims:
            _kill(pid)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if proc.returncode is None:  # not reaped, so the pid is still its own
            _kill(proc.pid)  # (a group of its own may not exist yet: a fork server's child)
        if not victims:
            break
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(is_running(pid) for pid in killed):
        time.sleep(0.01)
    if _subreaper:
        for _ in range(20):  # a killed grandchild reaches us only once its parent is gone
            if not reap_orphans() and not _orphans_exist():
                break
            time.sleep(0.05)


_subreaper = False


def become_subreaper() -> None:
    """Orphans of our children (a process whose parent died, a daemon that double-forked) become
    our children instead of init's, so :func:`reap_orphans` finds them (Linux)."""
    import ctypes

    global _subreaper
    if _subreaper:
        return
    try:
        if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0:  # CHILD_SUBREAPER
            _subreaper = True
    except OSError:
        pass


def reap_orphans() -> list[int]:
    """Kill and reap orphans of candidates' processes that were reparented to this process (it
    is their subreaper): its children that it did not start, and that carry a candidate's mark
    in their environment or belong to a candidate's session."""
    me = os.getpid()
    killed = []
    for pid in _proc_entries():
        if _ppid(pid) != me or _started_by_us(pid) or not _from_a_candidate(pid):
            continue
        _kill(pid)
        killed.append(pid)
    for pid in killed:
        try:
            os.waitpid(pid, 0)  # SIGKILLed: this returns at once
        except ChildProcessError:
            pass
    return killed


def _orphans_exist() -> bool:
    me = os.getpid()
    return any(_ppid(pid) == me and not _started_by_us(pid) and _from_a_candidate(pid)
               for pid in _proc_entries())


def _from_a_candidate(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            if SANDBOX_MARK.encode() + b"=" in f.read():
                return True
    except OSError:
        pass
    try:
        sid = os.getsid(pid)
    except OSError:
        return False
    return sid in _spawned and sid != os.getsid(0)


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants (0 if it is gone)."""
    total = 0
    page = os.sysconf("SC_PAGE_SIZE")
    for p in [pid, *descendants(pid)]:
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
    return total


def available_memory() -> int:
    """Bytes of host memory available now (MemAvailable), 0 if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def new_run_dir() -> Path:
    """A folder for one session's judge and candidates, named after this process."""
    sweep_stale()
    return Path(tempfile.mkdtemp(prefix=f"{RUN_PREFIX}{os.getpid()}-"))


def sweep_stale() -> None:
    """Remove run folders left by kernelwright processes that no longer exist."""
    base = Path(tempfile.gettempdir())
    try:
        entries = list(base.glob(f"{RUN_PREFIX}*"))
    except OSError:
        return
    for path in entries:
        owner = path.name[len(RUN_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not _alive(int(owner)):
            shutil.rmtree(path, ignore_errors=True)


def tail(path: Path, limit: int = 4000) -> str:
    """The end of a log file, decoded leniently."""
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", errors="replace")


def is_running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _proc_entries() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    try:  # the command name is in parentheses and may hold spaces
        return int(data[data.rindex(")") + 2 :].split()[1])
    except (ValueError, IndexError):
        return None


_spawned: dict[int, float] = {}


def remember_spawn(pid: int) -> None:
    """Record a child kernelwright started itself (so :func:`reap_orphans` leaves it alone).
    Every process kernelwright starts goes through here."""
    _spawned[pid] = time.monotonic()


def _started_by_us(pid: int) -> bool:
    return pid in _spawned
