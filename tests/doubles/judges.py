"""Synthetic judges: verdicts computed from a candidate's design, no harness."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kernelwright.records import Candidate, Status, Timing, TimingStats, Verdict

EAGER_MS = 2.0


def synthetic_judge(
    ms_of: Callable[[Mapping[str, Any], Mapping[str, Any]], float], calls: list[Candidate]
) -> Callable[..., Verdict]:
    """A judge that times a candidate at ``ms_of(design, params)`` against an eager run of
    :data:`EAGER_MS` (infinity: the candidate is wrong), recording each candidate it judges."""

    def judge(task: Any, candidate: Candidate, options: Any, executor: Any = None) -> Verdict:
        calls.append(candidate)
        ms = ms_of(candidate.design, candidate.params)
        if ms == float("inf"):
            return Verdict(Status.WRONG, False, message="mismatch")
        stats = TimingStats(ms, ms, ms, 0.0, 5)
        eager = TimingStats(EAGER_MS, EAGER_MS, EAGER_MS, 0.0, 5)
        return Verdict(
            Status.CORRECT,
            True,
            timing=Timing(candidate=stats, eager=eager, speedup_vs_eager=EAGER_MS / ms),
        )

    return judge


def accuracy_judge(judge: Callable[..., Verdict]) -> Callable[..., Verdict]:
    """``judge``, except that a candidate whose first group takes 3xTF32 products
    (``g0.FP32_MATH`` 0) is incorrect: a task whose check only IEEE fp32 products pass."""

    def judge_accuracy(task: Any, candidate: Candidate, options: Any, executor: Any = None
                       ) -> Verdict:
        if candidate.params.get("g0.FP32_MATH") == 0:
            return Verdict(Status.INCORRECT, False, message="outputs differ beyond the tolerance")
        return judge(task, candidate, options, executor)

    return judge_accuracy
