"""Capture's decomposition (``capture._decompose``) gives the graph ``run_decompositions`` gives
with the same table, overriding only the composite kernels that change something: those kept
whole (SDPA), those with a Python decomposition of their own (``matmul``, upsampling) and
those the program calls (a ``linear`` on a non-contiguous 3-D input reaches ``matmul``'s
decomposition only where ``linear`` itself is overridden: without that override the graphs
differ)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from kernelwright.design.capture import capture_path

# the module, not the package's ``capture`` function of the same name
capture_module = importlib.import_module("kernelwright.design.capture")

TASK = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(24, 24)

    def forward(self, x, q, k, v):
        y = self.proj(x.permute(1, 0, 2))  # linear on a 3-D input, not contiguous
        z = F.scaled_dot_product_attention(q, k, v)  # kept whole
        up = F.interpolate(z, scale_factor=2.0, mode="nearest")  # a Python decomposition
        return F.silu(y).sum() + up.mean() + torch.matmul(q, k.transpose(-2, -1)).amax()


def get_inputs():
    return [torch.randn(2, 5, 24), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 8),
            torch.randn(2, 3, 7, 8)]


def get_init_inputs():
    return []
'''


def graph_text(path: Path) -> str:
    return json.dumps(capture_path(path, "small").to_dict(), sort_keys=True, default=str)


def test_the_decomposition_matches_run_decompositions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    path = tmp_path / "task.py"
    path.write_text(TASK)
    plan = capture_module._decomposition_plan(capture_module._composite_count())
    assert plan is not None, f"torch {torch.__version__}: capture fell back to run_decompositions"
    fast = graph_text(path)
    assert '"aten.scaled_dot_product_attention.default"' in fast
    assert '"aten.linear.default"' not in fast
    monkeypatch.setattr(capture_module, "_decompose",
                        lambda ep: ep.run_decompositions(capture_module._decompositions()))
    assert graph_text(path) == fast
