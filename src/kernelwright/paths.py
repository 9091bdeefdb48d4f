"""Where kernelwright keeps its state: ``$KERNELWRIGHT_HOME`` or ``~/.kernelwright``.

archive.sqlite     every evaluation (see kernelwright.archive)
cache/             measured device ceilings and baseline timings
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """The kernelwright home directory (not created here)."""
    env = os.environ.get("KERNELWRIGHT_HOME")
    return Path(env).expanduser() if env else Path.home() / ".kernelwright"


def default_archive_path() -> Path:
    """The archive used when ``--archive`` is not given."""
    return home() / "archive.sqlite"


def cache_dir() -> Path:
    """Cached ceilings and baselines."""
    return home() / "cache"
