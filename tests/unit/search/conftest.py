"""Plans of tiny tasks, captured once per session, for the search tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kernelwright.design.plan import DesignPlan, plan_task
from kernelwright.task import load_task

HEADER = """
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return {body}
def get_inputs():
    return [torch.randn({rows}, {cols})]
def get_init_inputs():
    return []
"""


GEMM_TASK = """
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, a, b):
        return torch.relu(a @ b)
def get_inputs():
    return [torch.randn(48, 40), torch.randn(40, 56)]
def get_init_inputs():
    return []
"""


def _plan(root: Path, name: str, body: str, rows: int, cols: int) -> DesignPlan:
    path = root / f"{name}.py"
    path.write_text(textwrap.dedent(HEADER.format(body=body, rows=rows, cols=cols)))
    return plan_task(load_task(path, "small"), "cpu", "small", isolate=False)


@pytest.fixture(scope="session")
def softmax_plan(tmp_path_factory: pytest.TempPathFactory) -> DesignPlan:
    """One reduction group: row-onepass (+ online softmax) first, then two looped designs."""
    return _plan(tmp_path_factory.mktemp("plans"), "softmax", "torch.softmax(x, dim=-1)", 64, 2000)


@pytest.fixture(scope="session")
def two_group_plan(tmp_path_factory: pytest.TempPathFactory) -> DesignPlan:
    """A softmax group then a scan group (scan-rows clamps BLOCK_N to the 300-long rows)."""
    body = "torch.cumsum(torch.softmax(x, dim=-1), dim=-1)"
    return _plan(tmp_path_factory.mktemp("plans"), "two", body, 16, 300)


@pytest.fixture(scope="session")
def pointwise_plan(tmp_path_factory: pytest.TempPathFactory) -> DesignPlan:
    """One flat element-wise group of 800 elements (elementwise-flat clamps BLOCK to 1024)."""
    return _plan(tmp_path_factory.mktemp("plans"), "relu", "torch.relu(x) * 2.0", 8, 100)


@pytest.fixture(scope="session")
def gemm_plan(tmp_path_factory: pytest.TempPathFactory) -> DesignPlan:
    """A matrix product with a ReLU, planned for a GPU: its GEMM skills' default products are
    3xTF32 (``FP32_MATH`` 0), whose accurate value is IEEE fp32 (1)."""
    path = tmp_path_factory.mktemp("plans") / "mm.py"
    path.write_text(textwrap.dedent(GEMM_TASK))
    return plan_task(load_task(path, "small"), "cuda", "small", isolate=False)
