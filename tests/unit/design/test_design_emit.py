"""Emitted files: the guard's static checks pass, the name Model never appears, the header names
the skills, the constructor matches, and the file runs without kernelwright installed."""

from __future__ import annotations

import ast
import json
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


# emitted sources by task text: several tests here read the same task's file
_EMITTED: dict[str, str] = {}


def emit_task(folder: Path, text: str) -> tuple[Path, str]:
    """The task ``text`` written to ``folder``/task.py and its first ranked design's file (made
    once a process for each text)."""
    path = folder / "task.py"
    path.write_text(text)
    if text not in _EMITTED:
        part = fuse(lower(capture_path(path, "small")))
        library = SkillLibrary.builtin()
        design = rank_designs([group_options(part, g, library) for g in part.fused])[0]
        _EMITTED[text] = emit(part, design, text, task_name="task", size="small")
    return path, _EMITTED[text]


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


RUN_CASES = {"norm-sort": TASK, "moe-topk": TOPK_TASK, "sequential": SEQUENTIAL_TASK,
             "helper-constant": HELPER_CONSTANT_TASK}

# Each case's solution and task, loaded and compared in a process of its own forked from one
# that has imported torch (as a fresh process would, before anything else), with kernelwright
# unimportable: the four cases share one interpreter start-up (seconds of CPU) and nothing else.
# argv[1]: JSON [[folder, ...]]; each folder holds task.py and solution.py, and gets the case's
# output (out.txt, err.txt) and exit code (code.txt).
RUN_WITHOUT_KERNELWRIGHT = textwrap.dedent(
    """
    import importlib.util, json, os, sys, traceback
    sys.modules["kernelwright"] = None  # importing kernelwright now fails
    import torch
    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    def run(folder):
        sol = load("solution", os.path.join(folder, "solution.py"))
        ref = load("task", os.path.join(folder, "task.py"))
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
    for folder in json.loads(sys.argv[1]):
        sys.stdout.flush(); sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                out = os.open(os.path.join(folder, "out.txt"), os.O_WRONLY | os.O_CREAT, 0o644)
                err = os.open(os.path.join(folder, "err.txt"), os.O_WRONLY | os.O_CREAT, 0o644)
                os.dup2(out, 1); os.dup2(err, 2)
                run(folder)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush(); sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        with open(os.path.join(folder, "code.txt"), "w") as f:
            f.write(str(os.waitstatus_to_exitcode(status)))
    """
)


@pytest.fixture(scope="module")
def runs_without_kernelwright(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The folder of each of RUN_CASES, its emitted file run without kernelwright (above)."""
    folders = {}
    for name, text in RUN_CASES.items():
        folder = tmp_path_factory.mktemp(name)
        _, src = emit_task(folder, text)
        (folder / "solution.py").write_text(src)
        folders[name] = folder
    env = {"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"}
    subprocess.run(
        [sys.executable, "-c", RUN_WITHOUT_KERNELWRIGHT, json.dumps([str(f) for f in
                                                                   folders.values()])],
        capture_output=True, text=True, env=env, timeout=240, check=True,
    )
    return folders


@pytest.mark.parametrize("name", list(RUN_CASES))
def test_emitted_file_runs_without_kernelwright(
    name: str, runs_without_kernelwright: dict[str, Path]
) -> None:
    folder = runs_without_kernelwright[name]
    code = (folder / "code.txt").read_text() if (folder / "code.txt").exists() else "not run"
    assert code == "0", (folder / "err.txt").read_text()[-2000:]
    assert (folder / "out.txt").read_text().strip().endswith("ok")
