"""Where kernelwright keeps its state: ``$KERNELWRIGHT_HOME`` or ``~/.kernelwright``.

archive.sqlite     every evaluation (see kernelwright.archive)
cache/             measured device ceilings and baseline timings (``$KERNELWRIGHT_CACHE`` moves it)
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
    """Cached ceilings and baselines: ``$KERNELWRIGHT_CACHE``, else ``cache/`` in the home.

    The cache may be shared by several homes: its entries describe the machine (keyed by task,
    size, device, precision and versions), not an archive.
    """
    env = os.environ.get("KERNELWRIGHT_CACHE")
    return Path(env).expanduser() if env else home() / "cache"
