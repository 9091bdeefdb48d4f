"""What identifies the harness's own code: results it produced stay valid while it is unchanged.

Cached baselines and a resumed optimize run reuse times and verdicts that an earlier process
judged. Both are keyed by this fingerprint, so a change to the judge, the clock or a guard check
(an upgrade, or a local edit) measures and judges again instead of mixing old results with new.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path


@functools.cache
def harness_fingerprint() -> str:
    """A short hash of every Python source file of :mod:`kernelwright.evaluate`, names included."""
    root = Path(__file__).resolve().parent
    return source_digest(root, sorted(root.rglob("*.py")))


def source_digest(root: Path, paths: list[Path]) -> str:
    """A short hash of ``paths`` (under ``root``): their names relative to it and their bytes."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]
