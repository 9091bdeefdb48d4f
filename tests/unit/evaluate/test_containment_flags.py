"""How the seccomp filter is installed (a fake libc: installing a real filter would confine the
test process itself for the rest of its life)."""

from __future__ import annotations

import errno
import platform
from typing import Any

import pytest

from kernelwright.evaluate import containment


class FakeLibc:
    """Records seccomp(2) calls; refuses the flags in ``refused`` with ``errno``."""

    def __init__(self, refused: set[int], err: int = errno.EINVAL) -> None:
        self.refused, self.err, self.flags = refused, err, []

    def prctl(self, *_args: Any) -> int:
        return 0

    def syscall(self, _nr: int, _op: int, flags: int, _prog: Any) -> int:
        self.flags.append(flags)
        return -1 if flags in self.refused else 0


def install_with(monkeypatch: pytest.MonkeyPatch, libc: FakeLibc) -> None:
    monkeypatch.setattr(containment.ctypes, "CDLL", lambda *a, **k: libc)
    monkeypatch.setattr(containment.ctypes, "get_errno", lambda: libc.err)
    program = containment._filter(platform.machine(), containment.ALWAYS_DENIED, False)
    containment._install_seccomp(program)


@pytest.mark.skipif(not containment.seccomp_supported(), reason="no seccomp filters here")
def test_the_filter_keeps_the_process_speculation_settings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """TSYNC | SPEC_ALLOW: a kernel that mitigates speculative store bypass for filtered
    threads would otherwise slow every judged process's host code."""
    libc = FakeLibc(refused=set())
    install_with(monkeypatch, libc)
    assert libc.flags == [1 | 4]


@pytest.mark.skipif(not containment.seccomp_supported(), reason="no seccomp filters here")
def test_a_kernel_without_spec_allow_still_gets_the_filter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    libc = FakeLibc(refused={1 | 4})
    install_with(monkeypatch, libc)
    assert libc.flags == [1 | 4, 1]
    # any other refusal is a failure, never a process left unfiltered
    with pytest.raises(OSError):
        install_with(monkeypatch, FakeLibc(refused={1 | 4, 1}))
    with pytest.raises(OSError):
        install_with(monkeypatch, FakeLibc(refused={1 | 4}, err=errno.EPERM))
