"""The search loop: ask -> de-duplicate -> screen -> evaluate -> archive, within a budget.

It does not know which proposer it drives. Every verdict is archived under the run's id as it
arrives, which is how the proposer is told (it re-reads the history on its next ask); on restart
with the same run id the history is read back and the budget already spent is counted, so an
interrupted run resumes where it stopped.

Pruning runs before anything is judged. A proposal whose source is an earlier candidate's (after
comments and layout are dropped, ``search.dedup``) is dropped. A proposal that renders to the
same kernel as an evaluated candidate (the same key under the run's ``equivalence``, e.g. the
same design once its parameters are clamped to the task's shapes) is not evaluated: it is
archived with that candidate's verdict, flagged :data:`EQUIVALENT`, so the proposer learns what
it would have measured, and it costs no evaluation of the budget.

Screening enforces the run's constraints (``EvalOptions.constraints``) for every proposer: a
candidate whose source breaks one is refused before it costs an evaluation, archived as
``rejected`` with each broken clause named (so the proposer learns from it and the report shows
it), and not counted against the budget of evaluations. A run may add a screen of its own
(``screen``: ``search.spill_screen`` on a GPU, whose tuning moves that spill registers are
compiled, not run): a candidate it stops is archived with the verdict it gives, likewise free.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kernelwright.archive import Archive
from kernelwright.evaluate.executor import Executor
from kernelwright.evaluate.options import EvalOptions
from kernelwright.records import Candidate, Status, Task, Verdict
from kernelwright.search.dedup import canonical_key
from kernelwright.search.proposer import (
    CONFIRMATION,
    EQUIVALENT,
    PENDING,
    REFUSED,
    Proposal,
    Proposer,
    Trial,
    best_correct,
)

if TYPE_CHECKING:
    from kernelwright.bench.pool import WorkerPool
    from kernelwright.evaluate.harness import EvalSession
    from kernelwright.search.spill_screen import Screen

# Refusals (and screened candidates) in a row after which the run stops: a proposer that keeps
# breaking the constraints (an LLM ignoring them, templates a constraint rules out) would
# otherwise never end.
MAX_REFUSED_IN_A_ROW = 20
# Asks in a row whose every proposal was already tried after which the run stops: a proposer
# that only repeats itself would otherwise never end.
MAX_REPEATED_ASKS = 20

# The equivalence key of a candidate (None: it has none beyond its source).
EquivalenceKey = Callable[[Candidate], str | None]


@dataclass(frozen=True, slots=True)
class Budget:
    """When to stop: after ``candidates`` evaluations and/or ``minutes`` of wall time."""

    candidates: int | None = 20
    minutes: float | None = None


@dataclass(frozen=True, slots=True)
class SearchEvent:
    """Progress reported to a display: a new verdict, a pruned duplicate, or a phase."""

    kind: str  # "evaluated" | "refused" | "reused" | "pruned" | "phase" | "stopped"
    trial: Trial | None = None
    best: Trial | None = None
    n_evaluated: int = 0
    message: str = ""


@dataclass(slots=True)
class SearchResult:
    """What a run produced.

    Attributes:
        trials: every candidate of the run in order, refused and reused ones included.
        best: the fastest correct trial.
        pruned: proposals dropped because their source was an earlier candidate's.
        stopped: why the run ended.
    """

    run_id: str
    trials: list[Trial] = field(default_factory=list)
    best: Trial | None = None
    pruned: int = 0
    stopped: str = ""

    @property
    def confirmed(self) -> Trial | None:
        """The second evaluation of ``best`` (:data:`CONFIRMATION`), when the run made one."""
        if self.best is None:
            return None
        return next((t for t in reversed(self.trials) if t.confirmation
                     and t.candidate.sha256 == self.best.candidate.sha256), None)

    @property
    def evaluated(self) -> int:
        """Candidates the harness judged (what the budget counts)."""
        return sum(1 for t in self.trials if t.evaluated)

    @property
    def reused(self) -> int:
        """Candidates equivalent to an evaluated one, which carry its verdict."""
        return sum(1 for t in self.trials if t.reused)

    @property
    def pruned_equivalent(self) -> int:
        """Proposals not evaluated because an equivalent candidate was: each saved one
        evaluation (``pruned`` duplicates of a source plus ``reused`` equivalents)."""
        return self.pruned + self.reused

    @property
    def refused(self) -> int:
        """Candidates refused by the constraints before evaluation."""
        return sum(1 for t in self.trials if t.refused)

    @property
    def screened_spilling(self) -> int:
        """Tuning moves compiled but not evaluated: their kernels spill registers where their
        structure's best candidate's do not (``search.spill_screen``)."""
        return sum(1 for t in self.trials if t.screened)


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
    seed: int = 0,
    on_event: Callable[[SearchEvent], None] | None = None,
    evaluate_fn: Callable[..., Verdict] | None = None,
    run_config: dict[str, Any] | None = None,
    equivalence: EquivalenceKey | None = None,
    pool: WorkerPool | None = None,
    confirm: bool = False,
    screen: Screen | None = None,
    session: EvalSession | None = None,
) -> SearchResult:
    """Drive ``proposer`` on ``task`` until the budget or the proposals run out.

    Candidates are judged in one :class:`~kernelwright.evaluate.harness.EvalSession` (one judge,
    the reference computed once, a fresh process per candidate) unless ``evaluate_fn`` is given,
    or on ``pool``'s workers, each with a session of its own (``search.workers``), as many at
    once as it has workers: each free worker gets the next proposal, made from the verdicts in
    so far and the candidates still out (stand-ins flagged :data:`PENDING`).
    ``seed`` is the proposer's (the same history and seed give the same proposals);
    ``options.constraints``, when set, screens every proposal before it is judged.
    ``equivalence`` keys a candidate by the kernel it renders (a plan's ``candidate_key``);
    proposals with the key of an evaluated candidate reuse its verdict.
    ``confirm``: once the budget is spent, evaluate the best candidate a second time
    (:data:`CONFIRMATION`) where its time was measured on a device (not under the interpreter),
    unless the run already did for that candidate; not on ``pool``.
    ``screen``: asked about each proposal the constraints let through and no evaluated
    candidate is equivalent to; a verdict it returns is archived instead of an evaluation.
    ``session``: one the caller opened for ``task`` under ``options`` (begun early, say), in
    which the candidates are judged; the caller closes it.
    """
    from kernelwright.evaluate.harness import EvalSession

    if pool is not None and evaluate_fn is not None:
        raise ValueError("a search on a pool judges with the workers' sessions, not evaluate_fn")
    if session is not None and (pool is not None or evaluate_fn is not None):
        raise ValueError("a search judges in the caller's session, or on a pool or evaluate_fn")
    own = session is None and evaluate_fn is None and pool is None
    if own:
        session = EvalSession(task, options, executor=executor)
    from kernelwright.hardware.energy import Objective

    loop = _Loop(
        task=task,
        options=options,
        archive=archive,
        run_id=run_id,
        executor=executor,
        judge=evaluate_fn or _session_judge(session),
        emit=on_event or (lambda _e: None),
        equivalence=equivalence or (lambda _c: None),
        pool=pool,
        confirm=confirm,
        screen=screen,
        race=session is not None and options.objective is Objective.TIME,
    )
    try:
        archive.start_run(run_id, "search", task.sha256, run_config or {"proposer": proposer.name})
        return loop.run(proposer, budget, batch, seed)
    finally:
        if own and session is not None:
            session.close()


def _session_judge(session: Any) -> Callable[..., Verdict]:
    def judge(task: Task, candidate: Any, options: EvalOptions, executor: Any = None,
              race_ms: float | None = None) -> Verdict:
        return session.evaluate(candidate, race_ms=race_ms)  # type: ignore[no-any-return]

    return judge


@dataclass
class _Loop:
    """One run of the loop: what it judges with and where it records."""

    task: Task
    options: EvalOptions
    archive: Archive
    run_id: str
    executor: Executor | None
    judge: Callable[..., Verdict]
    emit: Callable[[SearchEvent], None]
    equivalence: EquivalenceKey
    pool: WorkerPool | None = None
    confirm: bool = False
    screen: Screen | None = None
    # Race each candidate's timing against the best time this run's judge measured (one
    # judge, one clock): a clear loser is timed in the fewest batches (clock.RACE_MARGIN)
    race: bool = False
    _run_best_ms: float | None = None

    def run(self, proposer: Proposer, budget: Budget, batch: int, seed: int) -> SearchResult:
        result = SearchResult(self.run_id)
        for rec in self.archive.history(self.task.sha256, self.run_id):
            result.trials.append(Trial(rec.candidate_id, rec.candidate, rec.verdict))
        result.best = best_correct(result.trials, self.options.objective)
        known = _Known(self.equivalence)
        for t in result.trials:
            known.add(t)
        refused_in_a_row = _trailing_refusals(result.trials)
        repeated_asks = 0
        started = time.monotonic()
        if self.pool is not None:
            return self._run_on_pool(self.pool, proposer, budget, seed, result, known, started)
        try:
            while True:
                remaining = _remaining(budget, result.evaluated, started)
                if remaining == 0:
                    result.stopped = "budget"
                    break
                if refused_in_a_row >= MAX_REFUSED_IN_A_ROW:
                    result.stopped = (
                        f"{refused_in_a_row} candidates in a row were refused or screened "
                        f"before evaluation (last: {result.trials[-1].verdict.message})"
                    )
                    break
                if repeated_asks >= MAX_REPEATED_ASKS:
                    result.stopped = f"{repeated_asks} asks in a row proposed only candidates tried"
                    break
                proposals = proposer.ask(
                    self.task, list(result.trials), min(batch, remaining), seed
                )
                if not proposals:
                    stop_reason = getattr(proposer, "stop_reason", None)
                    result.stopped = stop_reason or "proposer exhausted"
                    break
                before = len(result.trials)
                for p in proposals:
                    if known.same_source(p.candidate):
                        result.pruned += 1
                        self.emit(
                            SearchEvent("pruned", n_evaluated=result.evaluated, message=p.note)
                        )
                        continue
                    # The constraints first: a proposal that breaks one is refused even when
                    # it runs the same kernel as a candidate already judged.
                    refused = refusal(self.task, p.candidate, self.options)
                    twin = None if refused else known.equivalent(p.candidate)
                    if refused is None and twin is None:
                        refused = self._screened(p, result.trials)
                    trial = (
                        self._reuse(p, twin, result) if twin else self._judge(p, result, refused)
                    )
                    known.add(trial)
                    if trial.evaluated or trial.refused or trial.screened:
                        skipped = trial.refused or trial.screened
                        refused_in_a_row = refused_in_a_row + 1 if skipped else 0
                    if _remaining(budget, result.evaluated, started) == 0:
                        break
                repeated_asks = repeated_asks + 1 if len(result.trials) == before else 0
            if self.confirm:
                self._confirm(result)
        except KeyboardInterrupt:
            result.stopped = "interrupted"
            self.archive.finish_run(self.run_id, "interrupted")
            raise
        self.archive.finish_run(self.run_id, "finished")
        self.emit(SearchEvent("stopped", None, result.best, result.evaluated, result.stopped))
        return result

    def _confirm(self, result: SearchResult) -> None:
        """Evaluate the best candidate again (see :data:`CONFIRMATION`)."""
        best = result.best
        if (best is None or not best.verdict.timing.representative
                or result.confirmed is not None):
            return
        self.emit(SearchEvent("phase", None, best, result.evaluated,
                              "confirming the best candidate's time"))
        verdict = self.judge(self.task, best.candidate, self.options, executor=self.executor)
        verdict = dataclasses.replace(verdict, flags=(*verdict.flags, CONFIRMATION))
        self.archive.add(self.task, best.candidate, verdict, self.run_id)
        result.trials.append(Trial(best.candidate_id, best.candidate, verdict, best.note))

    def _run_on_pool(
        self, pool: WorkerPool, proposer: Proposer, budget: Budget, seed: int,
        result: SearchResult, known: _Known, started: float,
    ) -> SearchResult:
        """The loop with a proposal per free worker (see :func:`run_search`)."""
        from kernelwright.bench.pool import WAIT, StepJob
        from kernelwright.bench.steps import StepOutcome
        from kernelwright.search.workers import JudgeCandidate

        out: dict[int, tuple[Proposal, Trial]] = {}  # position -> proposal, its stand-in
        stop = {"why": ""}
        step = JudgeCandidate()

        def jobs() -> Any:
            position = 0
            repeated = 0
            while True:
                if not _remaining(budget, result.evaluated + len(out), started):
                    stop["why"] = "budget"
                    return
                if _trailing_refusals(result.trials) >= MAX_REFUSED_IN_A_ROW:
                    stop["why"] = (f"{MAX_REFUSED_IN_A_ROW} candidates in a row were refused "
                                   "or screened before evaluation")
                    return
                history = [*result.trials, *(stand_in for _, stand_in in out.values())]
                proposals = proposer.ask(self.task, history, 1, seed)
                fresh = [p for p in proposals if not known.same_source(p.candidate)]
                result.pruned += len(proposals) - len(fresh)
                if not fresh:
                    repeated += 1
                    if not proposals or repeated >= MAX_REPEATED_ASKS:
                        if out:  # verdicts still out may open new proposals
                            yield WAIT
                            repeated = 0
                            continue
                        stop["why"] = (getattr(proposer, "stop_reason", None)
                                       or ("proposer exhausted" if not proposals else
                                           f"{repeated} asks in a row proposed only "
                                           "candidates tried"))
                        return
                    continue
                repeated = 0
                p = fresh[0]
                refused = refusal(self.task, p.candidate, self.options)
                twin = None if refused else known.equivalent(p.candidate)
                if refused is None and twin is None:
                    refused = self._screened(p, history)
                if refused is not None or twin is not None:
                    trial = (self._reuse(p, twin, result) if twin
                             else self._judge(p, result, refused))
                    known.add(trial)
                    continue
                position += 1
                stand_in = Trial(-position, p.candidate, _pending_verdict(), p.note)
                out[position] = (p, stand_in)
                known.sources.add(canonical_key(p.candidate.source))
                yield StepJob(position, step, self.task, p.candidate, self.options)

        archived: dict[int, int] = {}  # a stand-in's id -> its candidate's id in the archive
        try:
            for finished in pool.run(jobs()):
                proposal, stand_in = out.pop(finished.job.position)
                parent = proposal.candidate.parent
                if parent is not None and parent < 0:  # derived from a candidate then still out
                    candidate = dataclasses.replace(proposal.candidate, parent=archived.get(parent))
                    proposal = dataclasses.replace(proposal, candidate=candidate)
                attempt = finished.attempt
                verdict = (attempt.verdict if isinstance(attempt, StepOutcome)
                           else _worker_failure(attempt))
                trial = self._record(proposal, verdict, result)
                archived[stand_in.candidate_id] = trial.candidate_id
                known.add(trial)
                self.emit(SearchEvent("evaluated", trial, result.best, result.evaluated,
                                      f"on {finished.timed_on}"))
        except KeyboardInterrupt:
            result.stopped = "interrupted"
            self.archive.finish_run(self.run_id, "interrupted")
            raise
        result.stopped = stop["why"] or "budget"
        self.archive.finish_run(self.run_id, "finished")
        self.emit(SearchEvent("stopped", None, result.best, result.evaluated, result.stopped))
        return result

    def _screened(self, proposal: Proposal, history: list[Trial]) -> Verdict | None:
        """The run's screen's verdict on ``proposal`` (None: judge it)."""
        return None if self.screen is None else self.screen(proposal.candidate, history)

    def _reuse(self, proposal: Proposal, twin: Trial, result: SearchResult) -> Trial:
        """Archive ``proposal`` with the verdict of ``twin``, the evaluated candidate it is
        equivalent to, flagged :data:`EQUIVALENT` (no evaluation)."""
        verdict = dataclasses.replace(
            twin.verdict,
            message=f"the same kernel as candidate {twin.candidate_id}: {twin.verdict.message}",
            flags=(*twin.verdict.flags, EQUIVALENT),
            solution_sha256=proposal.candidate.sha256,
        )
        trial = self._record(proposal, verdict, result)
        self.emit(SearchEvent("reused", trial, result.best, result.evaluated))
        return trial

    def _judge(
        self, proposal: Proposal, result: SearchResult, refused: Verdict | None = None
    ) -> Trial:
        """Refuse the proposal (``refused``: the verdict of its refusal or screen, already
        written), or evaluate it; archive the verdict either way."""
        verdict = refused
        if verdict is None:
            extra = {"race_ms": self._run_best_ms} if self.race else {}
            verdict = self.judge(
                self.task, proposal.candidate, self.options, executor=self.executor, **extra
            )
            timed = verdict.timing.candidate
            if verdict.correct and verdict.timing.representative and timed is not None and (
                    self._run_best_ms is None or timed.median_ms < self._run_best_ms):
                self._run_best_ms = timed.median_ms
        trial = self._record(proposal, verdict, result)
        kind = "refused" if trial.refused else "screened" if trial.screened else "evaluated"
        self.emit(SearchEvent(kind, trial, result.best, result.evaluated))
        return trial

    def _record(self, proposal: Proposal, verdict: Verdict, result: SearchResult) -> Trial:
        self.archive.add(self.task, proposal.candidate, verdict, self.run_id)
        candidate_id = self.archive.add_candidate(self.task, proposal.candidate)
        trial = Trial(candidate_id, proposal.candidate, verdict, proposal.note)
        result.trials.append(trial)
        result.best = best_correct(result.trials, self.options.objective)
        return trial


class _Known:
    """The run's candidates by source and by equivalence key (evaluated ones only: a refusal
    is about a source, which an equivalent candidate does not share)."""

    def __init__(self, equivalence: EquivalenceKey) -> None:
        self.key_of = equivalence
        self.sources: set[str] = set()
        self.kernels: dict[str, Trial] = {}

    def add(self, trial: Trial) -> None:
        self.sources.add(canonical_key(trial.candidate.source))
        key = self.key_of(trial.candidate)
        if key is not None and trial.evaluated:
            self.kernels.setdefault(key, trial)

    def same_source(self, candidate: Candidate) -> bool:
        return canonical_key(candidate.source) in self.sources

    def equivalent(self, candidate: Candidate) -> Trial | None:
        key = self.key_of(candidate)
        return self.kernels.get(key) if key is not None else None


def refusal(task: Task, candidate: Candidate, options: EvalOptions) -> Verdict | None:
    """The verdict of a candidate that breaks ``options.constraints``; None when it complies.

    Each broken clause is a violation named by its check (``constraint-forbidden-op``...) with
    the offending line; the verdict is ``rejected`` and flagged :data:`REFUSED`.
    """
    if options.constraints is None:
        return None
    broken = tuple(options.constraints.violations(candidate.source, candidate.params))
    if not broken:
        return None
    more = f" (+{len(broken) - 1} more)" if len(broken) > 1 else ""
    return Verdict(
        status=Status.REJECTED,
        correct=False,
        message=f"refused by the constraints: {broken[0].check}: {broken[0].reason}{more}",
        precision=options.precision,
        tolerance=options.precision.default_tolerance,
        violations=broken,
        flags=(REFUSED,),
        task_sha256=task.sha256,
        solution_sha256=candidate.sha256,
    )


def _pending_verdict() -> Verdict:
    return Verdict(Status.RUNTIME_ERROR, False, message="being evaluated", flags=(PENDING,))


def _worker_failure(error: str) -> Verdict:
    """The verdict of a candidate whose worker could not judge it (it died twice, or the
    harness failed there): recorded, so the run goes on and the proposer learns of it."""
    return Verdict(Status.RUNTIME_ERROR, False, message=f"not judged: {error}"[:2000])


def _trailing_refusals(trials: list[Trial]) -> int:
    n = 0
    for t in reversed(trials):
        if not (t.refused or t.screened):
            break
        n += 1
    return n


def _remaining(budget: Budget, evaluated: int, started: float) -> int:
    """Evaluations left (a large number when unbounded by count); 0 when a limit is reached."""
    if budget.minutes is not None and (time.monotonic() - started) / 60.0 >= budget.minutes:
        return 0
    if budget.candidates is None:
        return 10**9
    return max(0, budget.candidates - evaluated)
