"""The launch monitor sees compiled kernels launched directly (``compiled[grid](...)``), not
only launches through the JIT function."""

from __future__ import annotations

from types import SimpleNamespace
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
        assert monitor.counts["triton:scale_kernel"] == 1
        monitor.set_mode("skip")
        assert kernel[(4, 1, 1)](1, 2) is None
        monitor.set_mode("raise")
        with pytest.raises(AblatedLaunch, match="scale_kernel"):
            kernel[(4, 1, 1)](1, 2)
        assert monitor.counts["triton:scale_kernel"] == 1
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


def test_programs_are_counted_from_the_grid_that_launches() -> None:
    class _Shifty:
        """A grid dimension that answers differently each time it is read."""

        reads = 0

        def __int__(self) -> int:
            _Shifty.reads += 1
            return 4096 if _Shifty.reads == 1 else 1

    monitor = LaunchMonitor()
    monitor._patch_compiled(_Compiled)
    try:
        kernel = _Compiled()
        launched = kernel[(_Shifty(), 2, 1)](1)
        # the launch got the normalised grid: what was counted is what ran
        assert launched == ("launched", (4096, 2, 1), (1,))
        assert monitor.programs["triton:scale_kernel"] == 8192
        monitor.set_mode("skip")
        kernel[(8, 1, 1)](1)
        assert monitor.programs["triton:scale_kernel"] == 8192
    finally:
        monitor.uninstall()


def test_a_grid_function_is_counted_when_triton_resolves_it() -> None:
    monitor = LaunchMonitor()
    counted = monitor._counted_grid("triton:k", lambda meta: (meta["n"] // meta["BLOCK"],))
    assert monitor.programs["triton:k"] == 0  # not yet launched
    assert counted({"n": 4096, "BLOCK": 256}) == (16,)
    assert monitor._counted_grid("triton:k", (3, 2)) == (3, 2)
    assert monitor.programs["triton:k"] == 22


def test_a_kernel_counts_as_one_whether_launched_by_jit_or_compiled() -> None:
    class _Jit:
        """Stands in for a JIT function whose launch returns its compiled kernel."""

        fn = SimpleNamespace(__name__="scale_kernel")  # the function Triton's JIT wraps

        def run(self, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            return _Compiled()

    monitor = LaunchMonitor()
    monitor._patch_run(_Jit, "triton")
    monitor._patch_compiled(_Compiled)
    try:
        compiled = _Jit().run(1, 2, grid=(4,), warmup=False)
        compiled[(4, 1, 1)](1, 2)
        assert monitor.counts == {"triton:scale_kernel": 2}
        assert monitor.programs == {"triton:scale_kernel": 8}
    finally:
        monitor.uninstall()
