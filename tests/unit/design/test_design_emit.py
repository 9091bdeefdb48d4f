"""Emitted files: the guard's static checks pass, the name Model never appears, the header names
the skills, the constructor matches, and the file runs without kernelwright installed."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernelwright.design.capture import capture_path
from kernelwright.design.emit import emit
from kernelwright.design.fusion import fuse
from kernelwright.design.lower import lower
from kernelwright.design.structures import group_options, rank_designs
from kernelwright.evaluate.guard.registry import GuardContext, run_checks
from kernelwright.skills.library import SkillLibrary

TASK = """
import torch
import torch.nn as nn

tokens = 16384
hidden = 100
eps = 1e-5
KERNELWRIGHT = {"small": {"tokens": 37}}


class Model(nn.Module):
    def __init__(self, hidden):
        super(Model, self).__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)

    def forward(self, x):
        return torch.sort(self.norm(x), dim=-1)[0]


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden]
"""

# MoE gating: softmax, top-3, renormalise, int32 ids -- one selection kernel
TOPK_TASK = """
import torch
import torch.nn as nn

tokens = 16384
KERNELWRIGHT = {"small": {"tokens": 37}}


class Model(nn.Module):
    def __init__(self, experts):
        super().__init__()
        self.experts = experts

    def forward(self, x):
        w, ids = torch.topk(torch.softmax(x, dim=-1), 3, dim=-1)
        return w / w.sum(dim=-1, keepdim=True), ids.to(torch.int32)


def get_inputs():
    return [torch.randn(tokens, 100)]


def get_init_inputs():
    return [100]
"""


# parameters inside an nn.Sequential: paths such as "body.0.weight" are not attribute names
SEQUENTIAL_TASK = TASK.replace(
    "self.norm = nn.LayerNorm(hidden, eps=eps)", "self.body = nn.Sequential(nn.LayerNorm(hidden))"
).replace("self.norm.weight", "self.body[0].weight").replace("self.norm(x)", "self.body(x)")

# a module constant made by a helper defined above it (timm's to_2tuple = _ntuple(2)), used in
# __init__: the emitted file keeps the file's order, or importing it raises a NameError
HELPER_CONSTANT_TASK = TASK.replace(
    "eps = 1e-5\n",
    "def _scaled(k):\n    def parse(x):\n        return x * k\n    return parse\n\n\n"
    "to_eps = _scaled(1e-5)\n",
).replace("eps=eps)", "eps=to_eps(1.0))")


def emit_task(folder: Path, text: str) -> tuple[Path, str]:
    path = folder / "task.py"
    path.write_text(text)
    part = fuse(lower(capture_path(path, "small")))
    library = SkillLibrary.builtin()
    design = rank_designs([group_options(part, g, library) for g in part.fused])[0]
    return path, emit(part, design, text, task_name="task", size="small")


@pytest.fixture
def emitted(tmp_path: Path) -> tuple[Path, str]:
    return emit_task(tmp_path, TASK)


def test_emitted_file_passes_the_static_guard(emitted: tuple[Path, str]) -> None:
    _, src = emitted
    tree = ast.parse(src)
    assert run_checks("static", GuardContext(src, tree)) == []
    assert not any(isinstance(n, ast.Name) and n.id == "Model" for n in ast.walk(tree))


def test_header_names_skills_conditions_and_what_stays_with_pytorch(
    emitted: tuple[Path, str],
) -> None:
    _, src = emitted
    header = src.split('"""')[1]
    assert "row-onepass" in header and "fits in one block" in header
    assert "Left to PyTorch" in header and "aten.sort.default" in header
    assert "tokens = 37" in src  # module constants at the emitted size
    assert "super(ModelNew, self).__init__()" in src


def test_parameters_of_nested_modules_are_read_without_get_parameter(tmp_path: Path) -> None:
    _, src = emit_task(tmp_path, SEQUENTIAL_TASK)
    assert "_leaf(self, 'body.0.weight')" in src and "def _leaf(module, path):" in src
    assert ".get_parameter(" not in src  # its checks cost ~10 us a name, every call


BATCH_NORM_TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.relu(self.bn(x))


def get_inputs():
    return [torch.randn(2, 8, 5, 7)]


def get_init_inputs():
    return [8]
"""


def test_the_forward_reads_only_the_parameters_and_buffers_it_uses(tmp_path: Path) -> None:
    _, src = emit_task(tmp_path, BATCH_NORM_TASK)
    forward = src[src.index("    def forward("):]
    for used in ("self.bn.weight", "self.bn.bias", "self.bn.running_mean",
                 "self.bn.running_var"):
        assert used in forward, used
    assert "num_batches_tracked" not in forward  # an inference batch norm never reads it


@pytest.mark.parametrize(
    "text", [TASK, TOPK_TASK, SEQUENTIAL_TASK, HELPER_CONSTANT_TASK],
    ids=["norm-sort", "moe-topk", "sequential", "helper-constant"])
def test_emitted_file_runs_without_kernelwright(text: str, tmp_path: Path) -> None:
    path, src = emit_task(tmp_path, text)
    (tmp_path / "solution.py").write_text(src)
    script = textwrap.dedent(
        f"""
        import importlib.util, sys
        sys.modules["kernelwright"] = None  # importing kernelwright now fails
        import torch
        def load(name, path):
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
        sol = load("solution", {str(tmp_path / "solution.py")!r})
        ref = load("task", {str(path)!r})
        torch.manual_seed(0); new = sol.ModelNew(100)
        torch.manual_seed(0); old = ref.Model(100)
        x = torch.randn(5, 100)
        got, want = new(x), old(x)
        if isinstance(want, torch.Tensor):
            got, want = (got,), (want,)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype, "dtype"
            ok = torch.allclose(g, w, atol=1e-4) if w.is_floating_point() else torch.equal(g, w)
            assert ok, "mismatch"
        print("ok")
        """
    )
    env = {"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")
