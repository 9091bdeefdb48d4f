"""Emitted files through the real harness (judge and candidate processes, guard, variants) under
Triton's interpreter: one task per template family, correctness only (no timing)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kernelwright.design.plan import plan_task
from kernelwright.evaluate import EvalOptions, evaluate
from kernelwright.evaluate.executor import SubprocessExecutor
from kernelwright.records import Candidate
from kernelwright.task import load_task

pytest.importorskip("triton")

TASKS = {
    "reverse_cumsum": """
        rows = 16384
        cols = 8192
        KERNELWRIGHT = {"small": {"rows": 7, "cols": 100}}
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
            def forward(self, x):
                return torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])
        def get_inputs():
            return [torch.randn(rows, cols)]
        def get_input_variants():
            return [[torch.randn(rows // 2 + 1, cols * 3 + 1)]]
        def get_init_inputs():
            return []
    """,
    "max_pool2d": """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            def forward(self, x):
                return self.pool(x)
        def get_inputs():
            return [torch.randn(2, 3, 9, 11)]
        def get_input_variants():
            return [[torch.randn(1, 3, 6, 13)]]
        def get_init_inputs():
            return []
    """,
    "prelu": """
        class Model(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.act = nn.PReLU(num_parameters=channels)
                with torch.no_grad():
                    self.act.weight.uniform_(0.05, 0.5)
            def forward(self, x):
                return self.act(x)
        def get_inputs():
            return [torch.randn(3, 5, 6, 7)]
        def get_init_inputs():
            return [5]
    """,
    "cross_entropy": """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
            def forward(self, logits, labels):
                return F.cross_entropy(logits, labels, label_smoothing=0.1)
        def get_inputs():
            return [torch.randn(37, 10), torch.randint(0, 10, (37,))]
        def get_init_inputs():
            return []
    """,
}


@pytest.mark.interpreter
@pytest.mark.parametrize("name", sorted(TASKS))
def test_top_design_is_correct_in_the_harness(tmp_path: Path, name: str,
                                              shared_executor: SubprocessExecutor) -> None:
    path = tmp_path / f"{name}.py"
    path.write_text(
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        + textwrap.dedent(TASKS[name])
    )
    task = load_task(path, "small")
    plan = plan_task(task, "cuda", "small", isolate=False)
    design = plan.designs[0]
    candidate = Candidate(
        plan.render(design), "template", design=design.to_json(), params=design.params_json()
    )
    options = EvalOptions(
        device="cpu", size="small", trials=2, timing=False, baselines=False, seed=1
    )
    verdict = evaluate(task, candidate, options, executor=shared_executor)
    assert verdict.correct, f"{verdict.status.value}: {verdict.message} {verdict.violations}"
