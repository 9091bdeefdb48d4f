"""The search loop: ask -> de-duplicate -> evaluate -> archive -> tell, within a budget.

It does not know which proposer it drives. Every verdict is archived under the run's id as it
arrives; on restart with the same run id the history is read back and the budget already spent
is counted, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kernelwright.archive import Archive
from kernelwright.evaluate.executor import Executor
from kernelwright.evaluate.options import EvalOptions
from kernelwright.records import Task, Verdict
from kernelwright.search.dedup import canonical_key
from kernelwright.search.proposer import Proposal, Proposer, Trial


@dataclass(frozen=True, slots=True)
class Budget:
    """When to stop: after ``candidates`` evaluations and/or ``minutes`` of wall time."""

    candidates: int | None = 20
    minutes: float | None = None


@dataclass(frozen=True, slots=True)
class SearchEvent:
    """Progress reported to a display: a new verdict, a pruned duplicate, or a phase."""

    kind: str  # "evaluated" | "pruned" | "phase" | "stopped"
    trial: Trial | None = None
    best: Trial | None = None
    n_evaluated: int = 0
    message: str = ""


@dataclass(slots=True)
class SearchResult:
    """What a run produced."""

    run_id: str
    trials: list[Trial] = field(default_factory=list)
    best: Trial | None = None
    pruned: int = 0
    stopped: str = ""


def better(a: Trial, b: Trial | None) -> bool:
    """``a`` beats ``b``: correct, and faster (or ``b`` is missing or wrong)."""
    if not a.verdict.correct:
        return False
    if b is None or not b.verdict.correct:
        return True
    return _ms(a.verdict) < _ms(b.verdict)


def _ms(v: Verdict) -> float:
    return v.timing.candidate.median_ms if v.timing.candidate else float("inf")


def run_search(
    task: Task,
    proposer: Proposer,
    options: EvalOptions,
    archive: Archive,
    budget: Budget,
    run_id: str,
    *,
    executor: Executor | None = None,
    batch: int = 1,
    on_event: Callable[[SearchEvent], None] | None = None,
    evaluate_fn: Callable[..., Verdict] | None = None,
    run_config: dict[str, Any] | None = None,
) -> SearchResult:
    """Drive ``proposer`` on ``task`` until the budget or the proposals run out.

    Candidates are judged in one :class:`~kernelwright.evaluate.harness.EvalSession` (one judge,
    the reference computed once, a fresh process per candidate) unless ``evaluate_fn`` is given.
    """
    from kernelwright.evaluate.harness import EvalSession

    session = None if evaluate_fn is not None else EvalSession(task, options, executor=executor)
    try:
        return _search(
            task,
            proposer,
            options,
            archive,
            budget,
            run_id,
            executor,
            batch,
            on_event,
            evaluate_fn or _session_judge(session),
            run_config,
        )
    finally:
        if session is not None:
            session.close()


def _session_judge(session: Any) -> Callable[..., Verdict]:
    def judge(task: Task, candidate: Any, options: EvalOptions, executor: Any = None) -> Verdict:
        return session.evaluate(candidate)  # type: ignore[no-any-return]

    return judge


def _search(
    task: Task,
    proposer: Proposer,
    options: EvalOptions,
    archive: Archive,
    budget: Budget,
    run_id: str,
    executor: Executor | None,
    batch: int,
    on_event: Callable[[SearchEvent], None] | None,
    judge: Callable[..., Verdict],
    run_config: dict[str, Any] | None,
) -> SearchResult:
    emit = on_event or (lambda _e: None)
    archive.start_run(run_id, "search", task.sha256, run_config or {"proposer": proposer.name})
    result = SearchResult(run_id)
    for rec in archive.history(task.sha256, run_id):
        trial = Trial(rec.candidate_id, rec.candidate, rec.verdict)
        result.trials.append(trial)
        if better(trial, result.best):
            result.best = trial
    seen = {canonical_key(t.candidate.source) for t in result.trials}
    started = time.monotonic()
    try:
        while True:
            remaining = _remaining(budget, len(result.trials), started)
            if remaining == 0:
                result.stopped = "budget"
                break
            proposals = proposer.ask(task, list(result.trials), min(batch, remaining))
            if not proposals:
                result.stopped = getattr(proposer, "stop_reason", None) or "proposer exhausted"
                break
            fresh: list[Proposal] = []
            for p in proposals:
                key = canonical_key(p.candidate.source)
                if key in seen:
                    result.pruned += 1
                    emit(SearchEvent("pruned", n_evaluated=len(result.trials), message=p.note))
                    continue
                seen.add(key)
                fresh.append(p)
            if not fresh:
                continue
            new: list[Trial] = []
            for p in fresh:
                verdict = judge(task, p.candidate, options, executor=executor)
                archive.add(task, p.candidate, verdict, run_id)
                candidate_id = archive.add_candidate(task, p.candidate)
                trial = Trial(candidate_id, p.candidate, verdict, p.note)
                result.trials.append(trial)
                new.append(trial)
                if better(trial, result.best):
                    result.best = trial
                emit(SearchEvent("evaluated", trial, result.best, len(result.trials)))
                if _remaining(budget, len(result.trials), started) == 0:
                    break
            proposer.tell(new)
    except KeyboardInterrupt:
        result.stopped = "interrupted"
        archive.finish_run(run_id, "interrupted")
        raise
    archive.finish_run(run_id, "finished")
    emit(
        SearchEvent(
            "stopped", best=result.best, n_evaluated=len(result.trials), message=result.stopped
        )
    )
    return result


def _remaining(budget: Budget, done: int, started: float) -> int:
    """Evaluations left (a large number when unbounded by count); 0 when a limit is reached."""
    if budget.minutes is not None and (time.monotonic() - started) / 60.0 >= budget.minutes:
        return 0
    if budget.candidates is None:
        return 10**9
    return max(0, budget.candidates - done)
