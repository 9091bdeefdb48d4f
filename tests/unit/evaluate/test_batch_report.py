"""A timed batch in the candidate's process: prepared off the clock, reported at its release."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import torch

from kernelwright.evaluate import reveal
from kernelwright.evaluate.candidate_worker import Runner


class _Monitor:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.programs: Counter[str] = Counter()


class _Model:
    """Doubles its input; counts a launch per call, as the launch monitor would."""

    def __init__(self, monitor: _Monitor) -> None:
        self.monitor = monitor

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        self.monitor.counts["double_kernel"] += 1
        self.monitor.programs["double_kernel"] += 4
        return x * 2


def _runner(sets: list[list[Any]]) -> tuple[Runner, list[Any]]:
    runner = Runner(channel=None, device="cpu", report=None)  # type: ignore[arg-type]
    monitor = _Monitor()
    runner.monitor = monitor  # type: ignore[assignment]
    runner.models["timing"] = _Model(monitor)
    runner.buffers["timing"] = sets
    runner.writers["timing"] = [list(s) for s in sets]
    places = [reveal.draw(s) for s in sets]
    runner.buffers["timing:reveal"] = [
        [t.clone() if t is not None else None for t in reveal.staged(s, p)]
        for s, p in zip(sets, places, strict=True)]
    return runner, places


def test_a_batch_runs_what_was_prepared_and_reports_at_its_release():
    sets = [[torch.randn(64, 48)], [torch.randn(64, 48)], [torch.randn(64, 48)]]
    runner, places = _runner(sets)
    runner.monitor.counts["double_kernel"] = 5  # launches before the batch are not its own
    ok, _ = runner.do_prepare({"model": "timing", "buffers": "timing", "reveal": "timing:reveal",
                               "sets": [2, 0]}, b"")
    assert ok == {"ok": True}
    reply, payload = runner.do_batch({"places": [places[2], places[0]]}, b"")
    # the batch's reply holds its outputs and nothing of the process's report of itself
    assert set(reply) == {"ok"} and payload
    runner.monitor.counts["late_kernel"] += 1  # launched after the reply: not the batch's
    report, _ = runner.do_release({}, b"")
    assert report["launches"] == 2 and report["launch_names"] == {"double_kernel": 2}
    assert report["launch_programs"] == {"double_kernel": 8}
    assert len(report["events_ms"]) == 2 and all(t >= 0 for t in report["events_ms"])
    assert report["busy_ms"] >= report["reply_ms"] >= 0
    assert "span_ms" not in report  # a device's notion: nothing off CUDA
    # the outputs went back at the release; a second release reports nothing
    assert runner.batch_outputs == [] and runner.do_release({}, b"")[0] == {"ok": True}


def test_a_batch_must_be_prepared_once():
    runner, places = _runner([[torch.randn(8)]])
    with pytest.raises(ValueError, match="prepared first"):
        runner.do_batch({"places": places}, b"")
    runner.do_prepare({"model": "timing", "buffers": "timing", "reveal": "timing:reveal",
                       "sets": [0]}, b"")
    with pytest.raises(ValueError, match="do not match"):
        runner.do_batch({"places": []}, b"")
    with pytest.raises(ValueError, match="prepared first"):  # used up by the failed batch
        runner.do_batch({"places": places}, b"")


def test_an_empty_batch_calibrates_the_messages_alone():
    runner, _ = _runner([[torch.randn(8)]])
    runner.do_prepare({"model": "", "buffers": "", "reveal": "", "sets": []}, b"")
    reply, _ = runner.do_batch({"places": []}, b"")
    assert reply["ok"] is True
    report, _ = runner.do_release({}, b"")
    assert report["events_ms"] == [] and report["launches"] == 0
