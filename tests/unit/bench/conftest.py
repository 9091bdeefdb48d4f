"""Synthetic bench results: verdicts with chosen speedups, no harness involved."""

from __future__ import annotations

import pytest

from kernelwright.bench import BenchResult, Outcome
from kernelwright.records import SpeedOfLight, Status, Timing, TimingStats, Verdict


def stats(ms: float) -> TimingStats:
    return TimingStats(median_ms=ms, mean_ms=ms, min_ms=ms, iqr_ms=0.0, n_runs=10)


def verdict(
    status: Status = Status.CORRECT,
    eager: float | None = None,
    compile: float | None = None,
    sol: float | None = None,
    candidate_ms: float = 1.0,
) -> Verdict:
    """A verdict whose speedups are exactly ``eager`` and ``compile`` (candidate 1 ms)."""
    correct = status is Status.CORRECT
    timing = Timing(
        candidate=stats(candidate_ms) if correct else None,
        eager=stats(eager * candidate_ms) if eager is not None else None,
        compile=stats(compile * candidate_ms) if compile is not None else None,
        speedup_vs_eager=eager if correct else None,
        speedup_vs_compile=compile if correct else None,
    )
    floor = SpeedOfLight(
        flops=0,
        bytes=1000,
        floor_ms=(sol or 0.0) * candidate_ms,
        bound="memory",
        fraction=sol,
        memory_gbps=4300.0,
        matrix_tflops=50.0,
        ceilings="test",
    )
    return Verdict(
        status=status,
        correct=correct,
        timing=timing,
        sol=floor if (correct and sol is not None) else None,
        message="" if correct else f"{status.value} on purpose",
    )


def result(
    task_id: str,
    status: Status | str = Status.CORRECT,
    eager: float | None = None,
    compile: float | None = None,
    sol: float | None = None,
    family: str = "f",
) -> BenchResult:
    """A judged result, or a ``missing`` / ``error`` one when ``status`` says so."""
    base = dict(
        task_id=task_id, family=family, group="g", task_path=f"/t/{task_id}.py", solution_path=None
    )
    if status in ("missing", "error"):
        return BenchResult(outcome=Outcome(status), error=f"{status} on purpose", **base)
    v = verdict(Status(status), eager, compile, sol)
    return BenchResult(outcome=Outcome.JUDGED, verdict=v, **base)


@pytest.fixture
def make_result():
    return result


@pytest.fixture
def make_verdict():
    return verdict
