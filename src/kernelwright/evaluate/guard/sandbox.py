"""An audit hook that keeps the candidate's process away from what it must not read.

Installed (``sys.addaudithook``, which cannot be removed) before the candidate is imported. It
refuses — raising ``PermissionError`` and recording the attempt — any open, listing or deletion
of a protected path (the task file, the kernelwright home with its caches and archive, the
judge's working folder) and any read of another process's ``/proc`` entry (where the parent's
command line names the task). Subprocesses (compilers for ``load_inline``) are allowed and
recorded. Accesses from C code that bypass Python's audit events are outside its reach.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

_PATH_EVENTS = {
    "open": 0,
    "os.listdir": 0,
    "os.scandir": 0,
    "os.remove": 0,
    "os.rename": 0,
    "os.chmod": 0,
    "shutil.rmtree": 0,
    "glob.glob": 0,
    "os.truncate": 0,
}


# Audit events that start a thread or a process.
_THREAD_EVENTS = frozenset({"_thread.start_new_thread"})
_PROCESS_EVENTS = frozenset({
    "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system", "os.exec",
    "subprocess.Popen", "os.startfile", "pty.spawn",
})


@dataclass(slots=True)
class AuditLog:
    """What the hook refused and what it saw. ``sealed``: set once the candidate's kernels are
    compiled; thread and process starts after that are recorded."""

    denied: list[str] = field(default_factory=list)
    subprocesses: list[str] = field(default_factory=list)
    thread_starts: list[str] = field(default_factory=list)
    process_attempts: list[str] = field(default_factory=list)
    active: bool = True
    sealed: bool = False


def install_audit_hook(protected: list[str] | tuple[str, ...]) -> AuditLog:
    """Protect ``protected`` paths (files or folders) for the rest of this process's life."""
    roots = tuple(os.path.realpath(p) for p in protected if p)
    own_proc = (f"/proc/{os.getpid()}", "/proc/self", "/proc/thread-self")
    log = AuditLog()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if not log.active:
            return
        if event in _PATH_EVENTS and args:
            raw = args[_PATH_EVENTS[event]]
            if isinstance(raw, int) or raw is None:
                return
            try:
                path = os.path.realpath(os.fsdecode(raw))
            except (TypeError, ValueError):
                return
            if _is_protected(path, roots, own_proc):
                log.denied.append(f"{event} {path}")
                raise PermissionError(f"kernelwright harness: access to {path} is not allowed")
        elif event == "subprocess.Popen" and args:
            log.subprocesses.append(str(args[0])[:200])
        if log.sealed and event in _THREAD_EVENTS and len(log.thread_starts) < 50:
            log.thread_starts.append(str(args[0] if args else "")[:200])
        if log.sealed and event in _PROCESS_EVENTS and len(log.process_attempts) < 50:
            log.process_attempts.append(f"{event} {str(args[0] if args else '')[:200]}")

    sys.addaudithook(hook)
    return log


def _is_protected(path: str, roots: tuple[str, ...], own_proc: tuple[str, ...]) -> bool:
    for root in roots:
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return True
    if path.startswith("/proc/"):
        head = "/".join(path.split("/")[:3])
        if head[len("/proc/") :].isdigit() and head not in own_proc:
            return True
    return False
