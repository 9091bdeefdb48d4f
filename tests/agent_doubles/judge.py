"""A fake harness for proposer tests: verdicts chosen by what the source contains.

judge = ScriptedJudge([("x - y", wrong(5.6)), ("BLOCK = 1024", correct(0.5))],
                      default=correct(1.0))
run_search(task, proposer, options, archive, budget, run_id, evaluate_fn=judge)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernelwright.records import (
    Candidate,
    Status,
    Task,
    Timing,
    TimingStats,
    Verdict,
    Violation,
)


def correct(ms: float, eager_ms: float = 1.0) -> Verdict:
    """A correct verdict timed at ``ms`` (speedup ``eager_ms / ms``)."""
    stats = TimingStats(ms, ms, ms, 0.0, 10)
    eager = TimingStats(eager_ms, eager_ms, eager_ms, 0.0, 10)
    return Verdict(
        status=Status.CORRECT,
        correct=True,
        message="correct on 5 trial(s)",
        max_abs_err=0.0,
        max_rel_err=0.0,
        norm_err=0.0,
        trials=5,
        trials_passed=5,
        timing=Timing(candidate=stats, eager=eager, speedup_vs_eager=eager_ms / ms),
    )


def wrong(max_abs_err: float) -> Verdict:
    """An incorrect verdict with mismatch statistics like the harness's."""
    return Verdict(
        status=Status.INCORRECT,
        correct=False,
        message=f"trial 1 (task): output 0: 1000 of 1000 elements differ; max abs error "
        f"{max_abs_err}; first at index (0,): got 0.33, expected 0.22",
        max_abs_err=max_abs_err,
        max_rel_err=12.5,
        norm_err=1.4,
        trials=5,
        trials_passed=0,
    )


def rejected(check: str, reason: str) -> Verdict:
    """A guard rejection by ``check``."""
    return Verdict(
        status=Status.REJECTED,
        correct=False,
        message=f"{check}: {reason}",
        violations=(Violation(check, reason),),
    )


class ScriptedJudge:
    """``evaluate_fn``: the verdict of the first rule whose text occurs in the source."""

    def __init__(self, rules: Sequence[tuple[str, Verdict]], default: Verdict) -> None:
        self.rules = list(rules)
        self.default = default
        self.calls: list[Candidate] = []

    def __call__(self, task: Task, candidate: Candidate, options: Any, **_: Any) -> Verdict:
        """Judge ``candidate`` by the rules."""
        self.calls.append(candidate)
        for text, verdict in self.rules:
            if text in candidate.source:
                return verdict
        return self.default
