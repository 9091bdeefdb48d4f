"""A capture in its child process (``capture.start_capture``): a capture past its time is a
one-line TaskError and leaves no child behind; a cancelled one ends its child."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.design.capture import start_capture
from kernelwright.errors import TaskError
from kernelwright.task import load_task

MSE = Path(__file__).resolve().parents[2] / "golden" / "tasks" / "mse_loss.py"


def test_a_capture_past_its_time_is_a_task_error_and_ends_its_child() -> None:
    job = start_capture(load_task(MSE, "small"), "small", timeout_s=0.01)
    with pytest.raises(TaskError, match="capturing the graph took over 0 s"):
        job.result()
    assert job.proc.poll() is not None


def test_a_cancelled_capture_ends_its_child() -> None:
    job = start_capture(load_task(MSE, "small"), "small")
    job.cancel()
    assert job.proc.poll() is not None
    job.cancel()  # once ended, nothing to do
