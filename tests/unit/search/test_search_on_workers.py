"""The search loop over several workers (``run_search(pool=...)``): a proposal per free worker,
stand-ins for candidates still out (never archived), waiting when only verdicts still out can
open new proposals, and a worker's failure recorded as a verdict."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kernelwright.archive import Archive
from kernelwright.bench.pool import Finished, StepJob, Wait
from kernelwright.bench.steps import StepOutcome
from kernelwright.evaluate.options import EvalOptions
from kernelwright.records import Candidate, Status, Task, Timing, TimingStats, Verdict
from kernelwright.search import Budget, run_search
from kernelwright.search.proposer import Proposal, Trial

TASK = Task(name="t", path="t.py", source="x = 1\n", sha256="f" * 64)


def correct(ms: float) -> Verdict:
    return Verdict(Status.CORRECT, True, timing=Timing(candidate=TimingStats(ms, ms, ms, 0, 5)))


class FakePool:
    """Two workers judged in this process, oldest job first, with the pool's WAIT rules."""

    workers = 2

    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.most_running = 0

    def run(self, jobs: Iterable[StepJob | Wait]) -> Any:
        source = iter(jobs)
        running: list[StepJob] = []
        exhausted = False
        while True:
            while len(running) < self.workers and not exhausted:
                job = next(source, None)
                if job is None:
                    exhausted = True
                elif isinstance(job, Wait):
                    exhausted = not running
                    break
                else:
                    running.append(job)
            self.most_running = max(self.most_running, len(running))
            if not running:
                return
            job = running.pop(0)
            yield Finished(job, self.judge(job.start), "cpu")


class TwoThenTune:
    """Two structures; then, once a correct verdict is in, one tuning move per correct one."""

    name = "two-then-tune"

    def __init__(self) -> None:
        self.seen_pending: list[int] = []

    def ask(self, task: Task, history: Sequence[Trial], n: int, seed: int) -> list[Proposal]:
        self.seen_pending.append(sum(t.pending for t in history))
        tried = {t.candidate.source for t in history}
        for s in ("structure a", "structure b"):
            if s not in tried:
                return [Proposal(Candidate(s, "template"), s)]
        done = [t for t in history if t.verdict.correct and not t.pending]
        for t in done:
            move = t.candidate.source + " tuned"
            if move not in tried and not t.candidate.source.endswith("tuned tuned"):
                return [Proposal(Candidate(move, "template", parent=t.candidate_id), move)]
        return []


def test_each_free_worker_gets_a_proposal_and_stand_ins_never_reach_the_archive() -> None:
    pool = FakePool(lambda c: StepOutcome(c, correct(1.0)))
    proposer = TwoThenTune()
    with Archive(":memory:") as archive:
        result = run_search(TASK, proposer, EvalOptions(device="cpu"), archive,
                            Budget(candidates=4), "run", pool=pool)
        archived = archive.history(TASK.sha256, "run")
    assert pool.most_running == 2
    assert max(proposer.seen_pending) >= 1  # proposals were made with candidates still out
    assert [t.candidate.source for t in result.trials][:2] == ["structure a", "structure b"]
    assert result.evaluated == len(archived) == 4 and result.stopped == "budget"
    assert not any(t.pending for t in result.trials)
    assert all(r.candidate_id > 0 and r.verdict.correct for r in archived)
    tuned = [t for t in result.trials if t.candidate.source.endswith("tuned")]
    assert tuned and all(t.candidate.parent in {x.candidate_id for x in result.trials}
                         for t in tuned)


def test_a_search_waits_for_verdicts_still_out_and_ends_when_nothing_is_left() -> None:
    pool = FakePool(lambda c: StepOutcome(c, correct(1.0)))
    with Archive(":memory:") as archive:
        result = run_search(TASK, TwoThenTune(), EvalOptions(device="cpu"), archive,
                            Budget(candidates=10), "run", pool=pool)
    # a, b, then one move of each, then one move of each move: 6, and the proposer is done
    assert result.evaluated == 6 and result.stopped == "proposer exhausted"


def test_a_worker_that_could_not_judge_is_recorded_as_a_runtime_error() -> None:
    pool = FakePool(lambda c: "the worker process died twice running this task")
    with Archive(":memory:") as archive:
        result = run_search(TASK, TwoThenTune(), EvalOptions(device="cpu"), archive,
                            Budget(candidates=2), "run", pool=pool)
    assert [t.verdict.status for t in result.trials] == [Status.RUNTIME_ERROR] * 2
    assert all("not judged: the worker process died" in t.verdict.message for t in result.trials)


class ChildOfPending:
    """Proposes a child of a candidate still out (its stand-in's id is negative)."""

    name = "child-of-pending"

    def ask(self, task: Task, history: Sequence[Trial], n: int, seed: int) -> list[Proposal]:
        tried = {t.candidate.source for t in history}
        if "a" not in tried:
            return [Proposal(Candidate("a", "template"), "a")]
        pending = [t for t in history if t.pending and t.candidate.source == "a"]
        if pending and "a child" not in tried:
            return [Proposal(Candidate("a child", "template", parent=pending[0].candidate_id),
                             "child")]
        return []


def test_a_child_of_a_candidate_then_out_is_archived_with_its_real_parent() -> None:
    pool = FakePool(lambda c: StepOutcome(c, correct(1.0)))
    with Archive(":memory:") as archive:
        result = run_search(TASK, ChildOfPending(), EvalOptions(device="cpu"), archive,
                            Budget(candidates=2), "run", pool=pool)
    parent, child = result.trials
    assert child.candidate.source == "a child" and child.candidate.parent == parent.candidate_id
