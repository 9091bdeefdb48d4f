"""Confirming a run's best: a second evaluation once the search is over, whose time is the one
reported (the least of many noisy times is biased low); it costs no budget and is never itself
chosen."""

from kernelwright.archive import Archive
from kernelwright.evaluate import EvalOptions
from kernelwright.records import Candidate, Status, Timing, TimingStats, Verdict
from kernelwright.search import Budget, Proposal, run_search
from kernelwright.search.proposer import CONFIRMATION, best_correct
from kernelwright.task import load_task

SOURCE = "class ModelNew:\n    speed = {i}\n"


class Counter:
    name = "counter"

    def ask(self, task, history, n, seed):
        i = len([t for t in history if not t.confirmation])
        return [Proposal(Candidate(SOURCE.format(i=i)), note=f"speed {i}")]


def judge_of(calls, *, representative=True, second=None):
    """A judge whose times fall with the candidate's speed; ``second``: the verdict of a
    candidate's second evaluation (by default its first again, 10% slower)."""

    def judge(task, candidate, options, executor=None):
        calls.append(candidate.source)
        speed = int(candidate.source.split("speed = ")[1])
        ms = 10.0 / (1 + speed) * (1.1 if calls.count(candidate.source) > 1 else 1.0)
        if calls.count(candidate.source) > 1 and second is not None:
            return second
        return Verdict(status=Status.CORRECT, correct=True,
                       timing=Timing(candidate=TimingStats(ms, ms, ms, 0.0, 10),
                                     representative=representative))

    return judge


def _search(fixtures, archive, calls, budget=3, **judge):
    task = load_task(fixtures / "tasks" / "softmax_rows.py")
    return task, run_search(task, Counter(), EvalOptions(device="cpu"), archive,
                            Budget(candidates=budget), "run-1", confirm=True,
                            evaluate_fn=judge_of(calls, **judge))


def test_the_best_is_evaluated_again_and_that_time_reported(fixtures, tmp_path):
    archive = Archive(tmp_path / "a.sqlite")
    calls = []
    task, result = _search(fixtures, archive, calls)
    assert len(calls) == 4 and calls[-1] == SOURCE.format(i=2)  # three, then the best again
    assert result.evaluated == 3  # the confirmation is not counted in the budget
    confirmed = result.confirmed
    assert confirmed is not None and CONFIRMATION in confirmed.verdict.flags
    assert confirmed.candidate.sha256 == result.best.candidate.sha256
    assert result.best.verdict.timing.candidate.median_ms == 10.0 / 3
    assert confirmed.verdict.timing.candidate.median_ms == 10.0 / 3 * 1.1
    # never chosen itself, even where faster; archived with its flag
    assert best_correct(result.trials) is result.best
    records = archive.history(task.sha256, "run-1")
    assert len(records) == 4 and CONFIRMATION in records[-1].verdict.flags
    # a resumed run that evaluates nothing new does not confirm the same best twice
    calls.clear()
    _, again = _search(fixtures, archive, calls)
    assert calls == [] and again.confirmed is not None


def test_no_confirmation_where_times_mean_nothing(fixtures, tmp_path):
    calls = []
    _, result = _search(fixtures, Archive(tmp_path / "a.sqlite"), calls, representative=False)
    assert len(calls) == 3 and result.confirmed is None


def test_a_best_that_fails_its_second_evaluation_is_not_returned(fixtures, tmp_path):
    from kernelwright.optimize import OptimizeResult
    from kernelwright.records import Precision

    failed = Verdict(status=Status.INCORRECT, correct=False, message="trial 3: mismatch")
    calls = []
    task, result = _search(fixtures, Archive(tmp_path / "a.sqlite"), calls, second=failed)
    assert result.confirmed is not None and not result.confirmed.verdict.correct
    optimized = OptimizeResult(task, "run-1", "cuda", "full", Precision.FP32, result, None)
    assert optimized.best is None and optimized.chosen is result.best


def _confirmed_result(plan, second: Verdict):  # type: ignore[no-untyped-def]
    from kernelwright.optimize import OptimizeResult
    from kernelwright.records import Precision
    from kernelwright.search.controller import SearchResult
    from kernelwright.search.proposer import Trial

    timing = Timing(candidate=TimingStats(1.0, 1.0, 1.0, 0.0, 5))
    candidate = Candidate(plan.render(plan.designs[0]), "template")
    first = Trial(1, candidate, Verdict(Status.CORRECT, True, timing=timing))
    again = Trial(1, candidate, second)
    search = SearchResult("run", trials=[first, again], best=first, stopped="budget")
    return OptimizeResult(plan.task, "run", "cuda", "full", Precision.FP32, search, plan)


def test_the_report_and_summary_say_which_time_is_reported(pointwise_plan, tmp_path):
    from kernelwright.design.report import write_outputs
    from kernelwright.optimize import summarise

    slower = Timing(candidate=TimingStats(1.2, 1.2, 1.2, 0.0, 5))
    result = _confirmed_result(pointwise_plan, Verdict(Status.CORRECT, True, timing=slower,
                                                       flags=(CONFIRMATION,)))
    summary = summarise(result)
    assert (summary["best_ms"], summary["chosen_ms"], summary["confirmed"]) == (1.2, 1.0, True)
    write_outputs(result, tmp_path, None)
    report = (tmp_path / "report.md").read_text()
    assert "1.200 ms" in report and "the first read 1.000 ms" in report
    assert "and so biased low" in report
    assert (tmp_path / "best.py").exists()

    # a second evaluation that read faster than the first: no claim of a low bias
    faster = Timing(candidate=TimingStats(0.9, 0.9, 0.9, 0.0, 5))
    out = tmp_path / "faster"
    write_outputs(_confirmed_result(pointwise_plan, Verdict(Status.CORRECT, True, timing=faster,
                                                            flags=(CONFIRMATION,))), out, None)
    report = (out / "report.md").read_text()
    assert "the second read faster" in report and "biased low" not in report

    failed = _confirmed_result(pointwise_plan, Verdict(Status.INCORRECT, False, message="mismatch",
                                                       flags=(CONFIRMATION,)))
    assert summarise(failed)["confirmed"] is False and summarise(failed)["best_ms"] is None
    out = tmp_path / "failed"
    write_outputs(failed, out, None)
    assert "failed its second evaluation: mismatch" in (out / "report.md").read_text()
    assert not (out / "best.py").exists()
