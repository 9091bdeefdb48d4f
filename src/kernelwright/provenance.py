"""Which code produced a result: the git commit of a checkout, for the records a run writes."""

from __future__ import annotations

import functools
import re
import subprocess
import tomllib
from pathlib import Path

# Written by `git archive` into a copy of the source (see the file itself)
ARCHIVED_COMMIT_FILE = "source_commit.toml"


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
    """The commit of the kernelwright source that is running: from git when it runs from a
    checkout that tracks it (an installed copy inside some other repository names none), else
    the one `git archive` wrote into an archived copy of the source."""
    return package_commit(Path(__file__).resolve().parent)


def package_commit(package: Path) -> str:
    """:func:`source_commit` for the package folder ``package``."""
    try:
        _git(package, "ls-files", "--error-unmatch", "__init__.py")
    except (OSError, subprocess.SubprocessError):
        try:
            archived = archived_commit((package / ARCHIVED_COMMIT_FILE).read_text())
        except OSError:
            archived = None
        if archived is not None:
            return f"{archived[:7]} (from a source archive)"
        return "unknown (kernelwright does not run from a git checkout)"
    return git_commit(package)


def archived_commit(text: str) -> str | None:
    """The full commit hash in a ``source_commit.toml``'s text, or None where it holds none (a
    checkout's placeholder, a damaged file)."""
    try:
        value = tomllib.loads(text).get("commit")
    except tomllib.TOMLDecodeError:
        return None
    return value if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{40}", value) else None


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=folder, check=True, capture_output=True, text=True, timeout=10
    )
    return done.stdout.strip()
