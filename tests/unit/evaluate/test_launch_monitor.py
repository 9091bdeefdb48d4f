"""The launch monitor sees compiled kernels launched directly (``compiled[grid](...)``), not
only launches through the JIT function."""

from __future__ import annotations

from typing import Any

import pytest

from kernelwright.evaluate.guard.monitor import AblatedLaunch, LaunchMonitor


class _Compiled:
    """Stands in for Triton's CompiledKernel: indexing by a grid gives a launcher."""

    name = "scale_kernel"

    def __getitem__(self, grid: Any) -> Any:
        return lambda *args, **kwargs: ("launched", grid, args)


def test_a_directly_launched_compiled_kernel_is_counted_and_ablated() -> None:
    original = _Compiled.__dict__["__getitem__"]
    monitor = LaunchMonitor()
    monitor._patch_compiled(_Compiled)
    try:
        kernel = _Compiled()
        assert kernel[(4, 1, 1)](1, 2) == ("launched", (4, 1, 1), (1, 2))
        assert monitor.counts["triton-compiled:scale_kernel"] == 1
        monitor.set_mode("skip")
        assert kernel[(4, 1, 1)](1, 2) is None
        monitor.set_mode("raise")
        with pytest.raises(AblatedLaunch, match="scale_kernel"):
            kernel[(4, 1, 1)](1, 2)
        assert monitor.counts["triton-compiled:scale_kernel"] == 1
    finally:
        monitor.uninstall()
    assert _Compiled.__dict__["__getitem__"] is original


def test_install_patches_tritons_compiled_kernels() -> None:
    from triton.compiler.compiler import CompiledKernel

    original = CompiledKernel.__dict__["__getitem__"]
    monitor = LaunchMonitor()
    monitor.install()
    try:
        patched = monitor.patched["triton.compiler.compiler:CompiledKernel.__getitem__"]
        assert CompiledKernel.__dict__["__getitem__"] is patched
    finally:
        monitor.uninstall()
    assert CompiledKernel.__dict__["__getitem__"] is original
