"""The wrappers' ``_launch`` on a real GPU: the first launch of a specialisation through Triton's
JIT path, later ones through the compiled kernel it returned, each computing the right values;
the harness's launch monitor counting every launch under the kernel's one name and skipping
them when asked. Skipped without a GPU (conftest)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import torch

from kernelwright.design.kernel.common import WRAPPER_HELPERS
from kernelwright.evaluate.guard.monitor import LaunchMonitor

pytestmark = pytest.mark.gpu

MODULE = '''import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


def scale(x, factor):
    y = torch.empty_like(x)
    _launch(scale_kernel, (triton.cdiv(x.numel(), 256),), x, y, x.numel(), factor, BLOCK=256)
    return y


'''


def _module(tmp_path: Path) -> Any:
    path = tmp_path / "launched.py"
    path.write_text(MODULE + WRAPPER_HELPERS["_launch"] + "\n")
    spec = importlib.util.spec_from_file_location("launched", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_launches_after_the_first_go_to_the_compiled_kernel_and_are_counted(
    tmp_path: Path,
) -> None:
    module = _module(tmp_path)
    monitor = LaunchMonitor()
    monitor.install()
    try:
        x = torch.randn(5000, device="cuda")
        for factor in (2.0, 2.0, 3.0):
            torch.testing.assert_close(module.scale(x, factor), x * factor)
        # one specialisation per factor (floats keyed by value), kept after their first launch
        assert len(module._LAUNCHED) == 2
        assert monitor.counts == {"triton:scale_kernel": 3}
        unaligned = torch.randn(5001, device="cuda")[1:]  # 4 bytes past a 16-byte boundary
        torch.testing.assert_close(module.scale(unaligned, 2.0), unaligned * 2.0)
        assert len(module._LAUNCHED) == 3
        assert monitor.counts == {"triton:scale_kernel": 4}
        # the ablation reaches the compiled path too: the launch is dropped, not counted
        monitor.set_mode("skip")
        module.scale(x, 2.0)
        monitor.set_mode("raise")
        with pytest.raises(Exception, match="disabled by the harness"):
            module.scale(x, 2.0)
        assert monitor.counts == {"triton:scale_kernel": 4}
    finally:
        monitor.uninstall()
