"""The guard's static rule against handing the model to PyTorch's compilers, whose kernels
would be judged as the file's own: every spelling of the compilers refused, their settings and
honest files accepted."""

from __future__ import annotations

import ast

import pytest

from kernelwright.evaluate.candidate_worker import _compiled_frames
from kernelwright.evaluate.guard import runtime_checks, static_checks
from kernelwright.evaluate.guard.registry import GuardContext


def _reasons(source: str) -> list[str]:
    return static_checks.compiler_delegation(GuardContext(source=source, tree=ast.parse(source)))


@pytest.mark.parametrize("source, found", [
    ("import torch\nm = torch.compile(model)\n", "uses torch.compile"),
    ("import torch as T\nf = T.jit.script(g)\n", "uses torch.jit.script"),
    ("from torch import compile as build\nm = build(model)\n", "imports torch.compile"),
    ("import torch\nc = torch.compile\nd = c\nm = d(model)\n", "line 4: uses torch.compile"),
    ("import torch\nm = getattr(torch, 'compile')(model)\n", "uses torch.compile"),
    ("import torch\nm = torch.__dict__['compile'](model)\n", "uses torch.compile"),
    ("import torch._dynamo\ntorch._dynamo.reset()\n", "imports torch._dynamo"),
    ("from torch._dynamo import optimize\nf = optimize('inductor')(g)\n",
     "imports torch._dynamo.optimize"),
    ("from torch._inductor import compile_fx\n", "imports torch._inductor.compile_fx"),
    ("import torch\nep = torch.export.export(model, (x,))\n", "uses torch.export.export"),
    ("from torch import jit\nf = jit.trace(g, (x,))\n", "uses torch.jit.trace"),
    ("class M:\n    def f(self):\n        self.inner.compile()\n", "calls `self.inner.compile`"),
    ("import torch\ntorch.nn.Module.compile(m)\n", "uses torch.nn.Module.compile"),
])
def test_every_spelling_of_the_compilers_is_refused(source: str, found: str) -> None:
    reasons = _reasons(source)
    assert any(found in r for r in reasons), reasons


@pytest.mark.parametrize("source", [
    # the compilers' settings change nothing without a compiler, which the rule catches
    "import torch\ntorch._inductor.config.coordinate_descent_tuning = True\n"
    "torch._dynamo.config.cache_size_limit = 8\n",
    "from torch._inductor import config\nconfig.max_autotune = True\n",
    # TorchScript's queries are no compiler, nor is a regular expression's compile
    "import torch\nscripting = torch.jit.is_scripting()\n",
    "import re\npattern = re.compile('a+')\n",
    '"""A kernel file; its docstring may say torch.compile."""\nimport torch\nimport triton\n'
    "compile_flags = 1\ny = torch.empty(3)\n",
])
def test_settings_queries_and_honest_files_are_accepted(source: str) -> None:
    assert _reasons(source) == []


def test_the_process_reports_the_frames_dynamo_compiled() -> None:
    """The counter the candidate's process reports, read in this process after a compile (the
    eager backend: no C++ or Triton needed), and the runtime rule that refuses any."""
    import torch

    before = _compiled_frames()
    torch.compile(lambda t: t * 2 + 1, backend="eager")(torch.ones(3))
    assert _compiled_frames() > before
    report = {"observations": {"compiled_frames": 2}}
    ctx = GuardContext(source="", tree=None, report=report)
    assert runtime_checks.compiled_frames(ctx) == ["TorchDynamo compiled 2 frame(s) in its process"]
    assert runtime_checks.compiled_frames(GuardContext(source="", tree=None)) == []
