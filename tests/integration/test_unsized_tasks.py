"""A task file that sets no small size (KernelBench's files as published) runs at its own size on
the CPU: where that is past what Triton's interpreter runs, the judge refuses it in one line
before allocating anything (the refusal is ``kernelwright.evaluate.memory``'s; here it is seen
through the real harness)."""

from pathlib import Path

import pytest

from kernelwright.errors import EvalError
from kernelwright.evaluate import EvalOptions, evaluate

pytestmark = pytest.mark.interpreter

# the solution is the task's own computation in PyTorch, judged as `eval --reference` judges a
# task's Model (guard off): these tests are about the task's size, not the candidate
OPTS = EvalOptions(device="cpu", timeout_s=30, trials=1, baselines=False, guard=False)

TASK = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

batch_size = {batch}
dim = {dim}

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []
"""

SOLUTION = """import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""


def _files(tmp_path: Path, batch: int, dim: int) -> tuple[Path, Path]:
    task, solution = tmp_path / "relu.py", tmp_path / "solution.py"
    task.write_text(TASK.format(batch=batch, dim=dim))
    solution.write_text(SOLUTION)
    return task, solution


def test_an_unsized_task_past_the_interpreter_is_refused_in_one_line(tmp_path: Path,
                                                                      shared_executor):
    task, solution = _files(tmp_path, 4096, 393216)  # 6.4 GB in, 6.4 GB out
    with pytest.raises(EvalError) as refused:
        evaluate(task, solution, OPTS, executor=shared_executor)
    message = str(refused.value)
    assert "too large for this device: it sets no small size" in message
    assert "6.4 GB of inputs a call" in message and "\n" not in message


def test_an_unsized_task_the_interpreter_runs_is_judged(tmp_path: Path, shared_executor):
    task, solution = _files(tmp_path, 3, 17)
    verdict = evaluate(task, solution, OPTS, executor=shared_executor)
    assert verdict.correct, verdict.message
