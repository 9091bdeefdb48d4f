"""How a search run went, from the archive: what it judged, how soon it had a verified
candidate, how fast it judged after that, and the best it found (at the end, or within its
first N evaluations, so that runs of different search modes compare at an equal budget)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import datetime

from kernelwright.archive import Archive, Record, RunRow
from kernelwright.search.proposer import (
    CONFIRMATION,
    EQUIVALENT,
    PENDING,
    REFUSED,
    SPILLS,
    best_correct,
)

# The proposer of each --search mode, as runs record it, by the mode's name
_SEARCH = {"templates": "staged"}


@dataclass(frozen=True, slots=True)
class RunStats:
    """One search run. Times in seconds from the run's start; rates per minute of wall time
    (on a GPU, the run holds its device throughout: per GPU-minute)."""

    run_id: str
    task: str
    search: str  # the proposer: staged templates, mcts, evolution, llm...
    status: str
    evaluated: int  # judged by the harness: what a candidate budget counts
    reused: int  # equivalent to an evaluated candidate: its verdict, no evaluation
    refused: int  # broke the run's constraints: no evaluation
    correct: int  # evaluated and correct
    first_verified_s: float | None  # the run's start to its first correct verdict
    per_minute: float | None  # evaluations a minute after the first verdict
    best_ms: float | None  # the time the best was chosen on
    best_vs_eager: float | None
    best_vs_compile: float | None
    at: int | None = None  # the budget of best_at_ms
    best_at_ms: float | None = None  # the best among the first ``at`` evaluations
    # an evaluation's median duration (the first one's also starts the judge and may measure
    # the baselines: a mean would carry it)
    seconds_each: float | None = None
    confirmed_ms: float | None = None  # the best's second evaluation, when the run made one
    # the mean seconds of an evaluation per kind of step of the candidate's process
    # (Verdict.phases), in the order first reached
    phases_s: dict[str, float] = field(default_factory=dict)
    # the seconds of the session's own set-up the run's verdicts waited for (Verdict.setup):
    # starting the judge, measuring the baselines; part of first_verified_s
    setup_s: dict[str, float] = field(default_factory=dict)
    raced: int = 0  # evaluations whose timing stopped early, clearly slower than the best
    screened: int = 0  # tuning moves compiled, not run: they spill where the best does not


def run_stats(store: Archive, at: int | None = None, task: str | None = None) -> list[RunStats]:
    """Every search run in ``store`` (only ``task``'s, by its name, when given), oldest first."""
    found = []
    for run in store.runs("search"):
        records = store.history(run_id=run.run_id)
        if records and (task is None or records[0].task_name == task):
            found.append(_stats(run, records, at))
    return found


def _stats(run: RunRow, records: list[Record], at: int | None) -> RunStats:
    def flagged(r: Record, flag: str) -> bool:
        return flag in r.verdict.flags

    name = str(run.config.get("proposer", "?"))
    evaluated = [r for r in records
                 if not any(flagged(r, f)
                            for f in (EQUIVALENT, REFUSED, SPILLS, PENDING, CONFIRMATION))]
    start = _when(run.started_at)
    correct = [r for r in evaluated if r.verdict.correct]
    first = (_when(correct[0].created_at) - start) if correct else None
    rate = None
    if len(evaluated) >= 2:
        span = _when(evaluated[-1].created_at) - _when(evaluated[0].created_at)
        rate = (len(evaluated) - 1) * 60.0 / span if span > 0 else None
    best = best_correct(evaluated)
    best_at = best_correct(evaluated[:at]) if at else None
    timing = best.verdict.timing if best else None
    return RunStats(
        run_id=run.run_id,
        task=records[0].task_name,
        search=_SEARCH.get(name, name),
        status=run.status,
        evaluated=len(evaluated),
        reused=sum(flagged(r, EQUIVALENT) for r in records),
        refused=sum(flagged(r, REFUSED) for r in records),
        correct=len(correct),
        first_verified_s=first,
        per_minute=rate,
        best_ms=_median(best),
        best_vs_eager=timing.speedup_vs_eager if timing else None,
        best_vs_compile=timing.speedup_vs_compile if timing else None,
        at=at,
        best_at_ms=_median(best_at),
        seconds_each=statistics.median(r.verdict.duration_s for r in evaluated) if evaluated
        else None,
        phases_s=_mean_phases(evaluated),
        setup_s=_setup(records),
        raced=sum(r.verdict.timing.raced for r in evaluated),
        screened=sum(flagged(r, SPILLS) for r in records),
        confirmed_ms=_median(next(
            (r for r in reversed(records) if flagged(r, CONFIRMATION) and best is not None
             and r.candidate_id == best.candidate_id), None)),
    )


def _mean_phases(records: list[Record]) -> dict[str, float]:
    total: dict[str, float] = {}
    for r in records:
        for phase in r.verdict.phases:
            total[phase.name] = total.get(phase.name, 0.0) + phase.seconds
    return {name: s / len(records) for name, s in total.items()}


def _setup(records: list[Record]) -> dict[str, float]:
    total: dict[str, float] = {}
    for r in records:
        for phase in r.verdict.setup:
            total[phase.name] = total.get(phase.name, 0.0) + phase.seconds
    return total


def _median(r: Record | None) -> float | None:
    stats = r.verdict.timing.candidate if r else None
    return stats.median_ms if stats else None


def _when(stamp: str) -> float:
    """Seconds since the epoch of an archive time stamp (``%Y-%m-%dT%H:%M:%S%z``)."""
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S%z").timestamp()
