"""``optimize`` judges its candidates in one session of its own, whose judge starts while the
graph is captured in its child process: the reference is computed meanwhile. Real harness,
Triton's interpreter on the CPU."""

from __future__ import annotations

import dataclasses
import importlib
import shutil
from pathlib import Path

import pytest

from kernelwright import optimize
from kernelwright.archive import Archive
from kernelwright.errors import TaskError
from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.harness import EvalSession
from kernelwright.optimize import OptimizeOptions, optimize_task
from kernelwright.search import Budget

pytest.importorskip("triton")
pytestmark = pytest.mark.interpreter

# the module (kernelwright.design exports its function of the same name)
capture = importlib.import_module("kernelwright.design.capture")
MSE = Path(__file__).resolve().parents[1] / "golden" / "tasks" / "mse_loss.py"


def test_the_judge_starts_beside_the_capture_and_judges_the_search(tmp_path, monkeypatch,
                                                                  shared_executor):
    steps: list[str] = []
    sessions: list[EvalSession] = []
    start_capture, begin, plan_only = capture.start_capture, EvalSession.begin, optimize.plan_only

    def recorded_start_capture(*args, **kwargs):  # type: ignore[no-untyped-def]
        steps.append("capture started")
        return start_capture(*args, **kwargs)

    def recorded_begin(self: EvalSession) -> None:
        if self._judge is None:
            steps.append("judge started")
            sessions.append(self)
        begin(self)

    def recorded_plan_only(*args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("graph") is not None:  # captured by the child started first
            assert not sessions[0]._prepared  # the judge's reference not waited for yet
            steps.append("planned from the child's graph")
        else:
            steps.append("planned")
        return plan_only(*args, **kwargs)

    monkeypatch.setattr(capture, "start_capture", recorded_start_capture)
    monkeypatch.setattr(EvalSession, "begin", recorded_begin)
    monkeypatch.setattr(optimize, "plan_only", recorded_plan_only)
    task = tmp_path / "mse_loss.py"
    shutil.copy(MSE, task)
    options = OptimizeOptions(
        evaluation=EvalOptions(device="cpu", trials=1, timing=False, baselines=False))
    with Archive(tmp_path / "a.sqlite") as archive:
        # the candidates' processes: the test process's executor (its fork server started once)
        result = optimize_task(task, options, Budget(candidates=1), None, archive,
                               executor=shared_executor)
        assert steps == ["capture started", "judge started", "planned from the child's graph"]
        (trial,) = result.trials
        # judged in the session begun beside the capture (another would draw its own seed)
        assert trial.verdict.correct and trial.verdict.seed == sessions[0].seed
        assert [p.name for p in trial.verdict.setup] == ["starting the judge (the reference)"]
        assert sessions[0]._judge is None  # closed with the run
        # the same command again: its archived evaluation spends the budget, so no judge. Its
        # graph is captured in this process, which has imported torch already (a child would
        # import it again, for seconds); where the capture runs is no part of the run's id.
        steps.clear()
        here = dataclasses.replace(options, isolate_capture=False)
        again = optimize_task(task, here, Budget(candidates=1), None, archive,
                              executor=shared_executor)
    assert "judge started" not in steps and len(sessions) == 1
    assert again.run_id == result.run_id and again.best is not None


def test_a_task_that_cannot_be_captured_ends_its_begun_judge(tmp_path, monkeypatch):
    """The capture's error is the run's; the judge begun beside it is closed."""
    sessions: list[EvalSession] = []
    begin = EvalSession.begin

    def recorded_begin(self: EvalSession) -> None:
        sessions.append(self)
        begin(self)

    monkeypatch.setattr(EvalSession, "begin", recorded_begin)
    task = tmp_path / "untraceable.py"
    task.write_text(
        "import torch\nimport torch.nn as nn\n"
        "class Model(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x * 2 if float(x.sum()) > 0 else x\n"  # data-dependent: export fails
        "def get_inputs():\n    return [torch.randn(8)]\n"
        "def get_init_inputs():\n    return []\n")
    options = OptimizeOptions(
        evaluation=EvalOptions(device="cpu", trials=1, timing=False, baselines=False),
        isolate_capture=False)
    with (Archive(tmp_path / "a.sqlite") as archive,
          pytest.raises(TaskError, match="torch.export could not trace Model")):
        optimize_task(task, options, Budget(candidates=1), None, archive)
    assert sessions and sessions[0]._judge is None
