"""Triton launcher signatures: the argument types of the kernels a candidate's process compiled,
as it reports them, checked before later processes build launchers for them.

Triton launches each compiled kernel through a small C module built with the host's compiler
for the kernel's argument types (pointer, integer, float or compile-time constant, in order):
about 0.4 s a new signature on an H200 host, paid inside the candidate's warm-up step because
every process has a private Triton cache. Candidates of one search mostly share their kernels'
signatures (a tuning step changes compile-time constants, not the arguments' types), so the
executor hands each new spare the signatures its earlier candidates reported, and the spare builds
those launchers with Triton's own generator while it warms up, before any candidate code runs in
it. A report is a candidate's word: only lists of well-formed type names are kept, a few of
them, so a false one can cost a spare some seconds of warm-up, never a verdict; the launcher a
spare builds is Triton's code for those types, whoever named them.
"""

from __future__ import annotations

import re
from typing import Any

MAX_SIGNATURES = 4  # kept for spares, the most recently reported first
MAX_ARGUMENTS = 64
# A Triton type name: a scalar ("i32", "fp32", "fp8e4nv", "u1", "constexpr") or a pointer to
# one ("*fp32", "*kbf16" for a constant pointer)
_TYPE = re.compile(r"(\*k?)?[a-z][a-z0-9]{0,11}")

Signature = tuple[str, ...]


def checked(value: Any) -> list[Signature]:
    """The well-formed, distinct signatures of ``value`` (a process's report, any shape), at
    most MAX_SIGNATURES of them, in their order."""
    kept: list[Signature] = []
    if not isinstance(value, list):
        return kept
    for item in value:
        if not (isinstance(item, list | tuple) and 0 < len(item) <= MAX_ARGUMENTS
                and all(isinstance(t, str) and _TYPE.fullmatch(t) for t in item)):
            continue
        signature = tuple(item)
        if signature not in kept:
            kept.append(signature)
        if len(kept) == MAX_SIGNATURES:
            break
    return kept


class RecentSignatures:
    """The signatures reported last, distinct, at most MAX_SIGNATURES (for the next spares)."""

    def __init__(self) -> None:
        self._recent: list[Signature] = []

    def add(self, report: Any) -> None:
        """Take a process's reported signatures (checked here)."""
        for signature in reversed(checked(report)):
            if signature in self._recent:
                self._recent.remove(signature)
            self._recent.insert(0, signature)
        del self._recent[MAX_SIGNATURES:]

    def as_list(self) -> list[list[str]]:
        """What a spare's start-up spec carries (JSON)."""
        return [list(s) for s in self._recent]
