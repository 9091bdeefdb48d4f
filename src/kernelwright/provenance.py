"""Which code produced a result: the git commit of a checkout, for the records a run writes."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path


def git_commit(folder: Path) -> str:
    """The commit checked out at ``folder`` (marked when the tree has changes), or a note that
    there is none to name."""
    try:
        head = _git(folder, "rev-parse", "--short", "HEAD")
        dirty = _git(folder, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout; pass --commit)"
    return head + (" (with uncommitted changes)" if dirty else "")


@functools.cache
def source_commit() -> str:
    """The commit of the kernelwright source that is running: only when it runs from a git
    checkout that tracks it (an installed copy inside some other repository names none)."""
    package = Path(__file__).resolve().parent
    try:
        _git(package, "ls-files", "--error-unmatch", "__init__.py")
    except (OSError, subprocess.SubprocessError):
        return "unknown (kernelwright does not run from a git checkout)"
    return git_commit(package)


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=folder, check=True, capture_output=True, text=True, timeout=10
    )
    return done.stdout.strip()
