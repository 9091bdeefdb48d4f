"""What identifies the kernel generator's code: results it produced stay valid while it is
unchanged.

A resumed optimize run skips the designs it has tried and keeps their verdicts. The source a
design renders to comes from the capture, lowering, fusion, templates and skills (their Python,
skill files and measured tables): when any of them changes (an upgrade, a fix), a design may
render to another kernel, so the run id carries this fingerprint and such a run starts afresh
instead of keeping verdicts of sources the generator no longer writes.
"""

from __future__ import annotations

import functools
from pathlib import Path

from kernelwright.evaluate.fingerprint import source_digest


@functools.cache
def generator_fingerprint() -> str:
    """A short hash of every file of :mod:`kernelwright.design` and :mod:`kernelwright.skills`."""
    root = Path(__file__).resolve().parents[1]
    paths = sorted(
        p for folder in ("design", "skills") for p in (root / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    return source_digest(root, paths)
