"""run_bench with a fake harness: what gets evaluated, journaled, archived and resumed."""

import shutil
import sys
import types
from pathlib import Path

import pytest

from kernelwright.archive import Archive
from kernelwright.bench import (
    EvaluateStep,
    Journal,
    OptimizeStep,
    Outcome,
    plan,
    run_bench,
)
from kernelwright.errors import ConfigError, EvalError
from kernelwright.evaluate import EvalOptions
from kernelwright.records import Candidate, Status
from kernelwright.search.controller import SearchResult
from kernelwright.search.proposer import Trial

MINI = Path(__file__).parents[2] / "fixtures" / "bench"
OPTS = EvalOptions(device="cpu", trials=1)


class FakeHarness:
    """Stands in for kernelwright.evaluate.evaluate: answers by task name, counts calls."""

    def __init__(self, make_verdict, fail=None, interrupt_at=None):
        self.make_verdict = make_verdict
        self.calls: list[str] = []
        self.fail = fail or {}
        self.interrupt_at = interrupt_at

    def __call__(self, task, solution, options=None, *, on_progress=None):
        self.calls.append(task.name)
        if self.interrupt_at == task.name:
            raise KeyboardInterrupt
        if task.name in self.fail:
            raise self.fail[task.name]
        if on_progress is not None:
            on_progress("candidate: trial 1")
        assert options.device == "cpu" and options.size == "small"  # resolved once
        if task.name == "row_sum":
            return self.make_verdict(Status.INCORRECT)
        return self.make_verdict(eager=2.0, sol=0.5)


@pytest.fixture
def mini(tmp_path):
    """A copy of the mini suite (tests edit solutions)."""
    shutil.copytree(MINI, tmp_path / "mini")
    return tmp_path / "mini"


def items(mini, only=()):
    return plan([mini / "tasks"], mini / "solutions", only)


def test_every_task_gets_a_result_and_missing_ones_are_not_evaluated(mini, make_verdict):
    fake = FakeHarness(make_verdict)
    run = run_bench(items(mini), OPTS, step=EvaluateStep(fake))
    assert sorted(fake.calls) == ["row_sum", "scale_bias", "softmax_rows"]
    assert [(r.task_id, r.status) for r in run.results] == [
        ("relu", "missing"),
        ("row_sum", "incorrect"),
        ("scale_bias", "correct"),
        ("softmax_rows", "correct"),
    ]
    s = run.summary()
    assert s["fast_0"] == 0.5 and s["fast_1"] == 0.5 and s["fast_2"] == 0.0
    assert s["geomean_speedup"] == pytest.approx(2**0.5)
    assert s["fast_1_vs_compile"] is None  # not measured on the CPU by default
    assert run.baselines == ("eager",) and not run.representative


def test_an_interrupted_run_resumes_without_re_evaluating(mini, tmp_path, make_verdict):
    journal = Journal(tmp_path / "j.jsonl")
    first = FakeHarness(make_verdict, interrupt_at="scale_bias")
    with pytest.raises(KeyboardInterrupt):
        run_bench(items(mini), OPTS, step=EvaluateStep(first), journal=journal)
    assert first.calls == ["row_sum", "scale_bias"]
    assert [e.result.task_id for e in journal.entries()] == ["relu", "row_sum"]

    second = FakeHarness(make_verdict)
    run = run_bench(items(mini), OPTS, step=EvaluateStep(second), journal=journal, resume=True)
    assert second.calls == ["scale_bias", "softmax_rows"]
    assert run.resumed == 2
    assert [r.status for r in run.results] == ["missing", "incorrect", "correct", "correct"]
    assert len({e.run_id for e in journal.entries()}) == 1  # the resumed run keeps its id


def test_a_subset_then_the_whole_suite(mini, tmp_path, make_verdict):
    journal = Journal(tmp_path / "j.jsonl")
    fake = FakeHarness(make_verdict)
    run_bench(items(mini, ["scale_bias"]), OPTS, step=EvaluateStep(fake), journal=journal)
    run = run_bench(items(mini), OPTS, step=EvaluateStep(fake), journal=journal, resume=True)
    assert fake.calls == ["scale_bias", "row_sum", "softmax_rows"]
    assert run.resumed == 1 and len(run.results) == 4


def test_resume_re_runs_what_changed(mini, tmp_path, make_verdict):
    journal = Journal(tmp_path / "j.jsonl")
    fake = FakeHarness(make_verdict)
    run_bench(items(mini), OPTS, step=EvaluateStep(fake), journal=journal)
    fake.calls.clear()
    sol = mini / "solutions" / "scale_bias.py"
    sol.write_text(sol.read_text() + "\n# edited\n")
    (mini / "solutions" / "relu.py").write_text((mini / "solutions" / "scale_bias.py").read_text())
    edited = run_bench(items(mini), OPTS, step=EvaluateStep(fake), journal=journal, resume=True)
    assert sorted(fake.calls) == ["relu", "scale_bias"]
    assert edited.notes == ()  # edited solutions: nothing to explain
    fake.calls.clear()
    other = EvalOptions(device="cpu", trials=2)
    again = run_bench(items(mini), other, step=EvaluateStep(fake), journal=journal, resume=True)
    assert len(fake.calls) == 4
    # the journal's results of these tasks were made under other options: the run says so
    (note,) = again.notes
    assert note.startswith("4 task(s) ran again") and "other options" in note
    fake.calls.clear()
    fresh = run_bench(items(mini), OPTS, step=EvaluateStep(fake), journal=journal, resume=False)
    assert len(fake.calls) == 4 and fresh.notes == ()


def test_a_task_that_cannot_be_judged_is_a_failure_not_a_crash(mini, make_verdict):
    (mini / "tasks" / "broken.py").write_text("x = (\n")
    fake = FakeHarness(make_verdict, fail={"softmax_rows": EvalError("the reference failed")})
    run = run_bench(items(mini), OPTS, step=EvaluateStep(fake))
    by_id = {r.task_id: r for r in run.results}
    assert by_id["broken"].outcome is Outcome.ERROR and "TaskError" in by_id["broken"].error
    assert by_id["softmax_rows"].outcome is Outcome.ERROR
    assert "the reference failed" in by_id["softmax_rows"].message
    assert by_id["scale_bias"].correct
    assert run.summary()["n_tasks"] == 5


def test_a_bug_is_recorded_and_config_errors_stop_the_run(mini, make_verdict):
    fake = FakeHarness(make_verdict, fail={"row_sum": RuntimeError("kaboom")})
    run = run_bench(items(mini), OPTS, step=EvaluateStep(fake))
    assert "internal error RuntimeError: kaboom" in run.results[1].error
    stop = FakeHarness(make_verdict, fail={"row_sum": ConfigError("bad option")})
    with pytest.raises(ConfigError):
        run_bench(items(mini), OPTS, step=EvaluateStep(stop))


def test_verdicts_go_into_the_archive_under_the_run_id(mini, tmp_path, make_verdict):
    with Archive(tmp_path / "a.sqlite") as archive:
        run = run_bench(
            items(mini), OPTS, step=EvaluateStep(FakeHarness(make_verdict)), archive=archive
        )
        records = archive.history(run_id=run.run_id)
        assert sorted(r.task_name for r in records) == ["row_sum", "scale_bias", "softmax_rows"]
        row = archive.conn.execute(
            "SELECT kind, status FROM runs WHERE id = ?", (run.run_id,)
        ).fetchone()
        assert tuple(row) == ("bench", "finished")
        fake = FakeHarness(make_verdict, interrupt_at="row_sum")
        with pytest.raises(KeyboardInterrupt):
            run_bench(items(mini), OPTS, step=EvaluateStep(fake), archive=archive, run_id="r2")
        row = archive.conn.execute("SELECT status FROM runs WHERE id = 'r2'").fetchone()
        assert row[0] == "interrupted"


def test_progress_events(mini, make_verdict):
    events = []
    run_bench(
        items(mini, ["relu", "scale_bias"]),
        OPTS,
        step=EvaluateStep(FakeHarness(make_verdict)),
        on_event=events.append,
    )
    assert [(e.kind, e.index, e.total, e.task_id) for e in events] == [
        ("start", 1, 2, "relu"),
        ("done", 1, 2, "relu"),
        ("start", 2, 2, "scale_bias"),
        ("phase", 2, 2, "scale_bias"),
        ("done", 2, 2, "scale_bias"),
    ]
    assert events[3].phase == "candidate: trial 1"
    assert events[-1].result is not None and events[-1].result.correct


class FakeOptimizer:
    """Stands in for kernelwright.optimize.optimize_task (same signature, no search)."""

    def __init__(self, make_verdict, best=True):
        self.make_verdict = make_verdict
        self.best = best
        self.calls = []

    def __call__(self, task, options, budget, out_dir, archive, *, on_event=None, on_phase=None):
        self.calls.append((task.name, options, budget, out_dir))
        on_phase("capturing the graph")
        good = Trial(
            1, Candidate(f"# best for {task.name}", "template"), self.make_verdict(eager=3.0)
        )
        bad = Trial(2, Candidate("# wrong", "template"), self.make_verdict(Status.INCORRECT))
        search = SearchResult(
            "opt-run",
            trials=[good, bad] if self.best else [bad],
            best=good if self.best else None,
            stopped="budget",
        )
        if task.name == "relu":  # nothing applies: no trial at all
            search = SearchResult("opt-run", stopped="no template applies")
        return types.SimpleNamespace(search=search, best=search.best, trials=search.trials)


def test_optimize_step_reports_the_optimizers_best(mini, tmp_path, make_verdict):
    fake = FakeOptimizer(make_verdict)
    events = []
    with Archive(":memory:") as archive:
        step = OptimizeStep(
            archive, budget_candidates=5, out_dir=tmp_path / "opt", optimize_fn=fake
        )
        run = run_bench(items(mini), OPTS, step=step, archive=archive, on_event=events.append)
        assert archive.history(run_id=run.run_id) == []  # the optimizer archives its own runs
    assert [c[0] for c in fake.calls] == ["relu", "row_sum", "scale_bias", "softmax_rows"]
    name, options, budget, out_dir = fake.calls[1]
    assert (options.evaluation.device, options.evaluation.size, options.evaluation.trials) == (
        "cpu",
        "small",
        1,
    )
    assert (budget.candidates, budget.minutes) == (5, None)
    assert out_dir == tmp_path / "opt" / "row_sum"
    by_id = {r.task_id: r for r in run.results}
    assert by_id["relu"].outcome is Outcome.ERROR and "no template applies" in by_id["relu"].error
    assert by_id["scale_bias"].correct and by_id["scale_bias"].speedup("eager") == 3.0
    assert by_id["scale_bias"].solution_sha256 == Candidate("# best for scale_bias").sha256
    assert run.step == "optimize" and run.fingerprint["step_settings"]["budget_candidates"] == 5
    assert "optimize: capturing the graph" in [e.phase for e in events]


def test_optimize_step_passes_its_workers_on_and_they_do_not_change_the_resume_key(
    mini, tmp_path, make_verdict
):
    fake = FakeOptimizer(make_verdict)
    journal = Journal(tmp_path / "j.jsonl")
    for workers in (3, 1):  # the second finds the first's result: workers judge, not decide
        step = OptimizeStep(None, workers=workers, scheduler="local" if workers > 1 else None,
                            optimize_fn=fake)
        run_bench(items(mini, ["scale_bias"]), OPTS, step=step, journal=journal, resume=True)
    assert len(fake.calls) == 1
    options = fake.calls[0][1]
    assert (options.workers, options.scheduler) == (3, "local")


def test_optimize_without_a_correct_candidate_reports_the_last(mini, make_verdict):
    step = OptimizeStep(None, optimize_fn=FakeOptimizer(make_verdict, best=False))
    run = run_bench(items(mini, ["row_sum"]), OPTS, step=step)
    assert run.results[0].status == "incorrect"


def test_optimize_budget_is_part_of_the_resume_key(mini, tmp_path, make_verdict):
    journal = Journal(tmp_path / "j.jsonl")
    fake = FakeOptimizer(make_verdict)
    for budget in (4, 4, 6):
        step = OptimizeStep(None, budget_candidates=budget, optimize_fn=fake)
        run_bench(items(mini, ["scale_bias"]), OPTS, step=step, journal=journal, resume=True)
    assert len(fake.calls) == 2


def test_optimize_step_uses_the_real_optimizer_by_default():
    from kernelwright.optimize import optimize_task

    assert OptimizeStep(None)._fn is optimize_task


def test_optimize_step_says_when_the_optimizer_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "kernelwright.optimize", types.ModuleType("x"))
    with pytest.raises(ConfigError, match="optimize_task"):
        OptimizeStep(None)


def test_public_surface_is_sorted_and_importable():
    import kernelwright.bench as bench
    import kernelwright.report as report

    for module in (bench, report):
        assert module.__all__ == sorted(module.__all__)
        assert all(getattr(module, name) is not None for name in module.__all__)


def test_shards_split_the_plan_and_collect_each_others_results(mini, tmp_path, make_verdict):
    from kernelwright.bench import Shard

    journal = Journal(tmp_path / "j.jsonl")
    fake = FakeHarness(make_verdict)
    first = run_bench(
        items(mini), OPTS, step=EvaluateStep(fake), journal=journal, shard=Shard(1, 2)
    )
    assert fake.calls == ["scale_bias"]  # relu (1st) has no solution: missing, not evaluated
    assert [r.task_id for r in first.results] == ["relu", "scale_bias"]
    assert first.not_run == ("row_sum", "softmax_rows")
    second = run_bench(
        items(mini), OPTS, step=EvaluateStep(fake), journal=journal, resume=True, shard=Shard(2, 2)
    )
    assert fake.calls == ["scale_bias", "row_sum", "softmax_rows"]
    assert [r.task_id for r in second.results] == ["relu", "row_sum", "scale_bias", "softmax_rows"]
    assert second.resumed == 2 and second.not_run == ()


@pytest.mark.parametrize(("text", "shard"), [("1/1", (1, 1)), ("2/3", (2, 3)), ("3/3", (3, 3))])
def test_shard_parses_k_of_n(text, shard):
    from kernelwright.bench import Shard

    assert Shard.parse(text) == Shard(*shard)


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0"])
def test_a_bad_shard_is_a_config_error(text):
    from kernelwright.bench import Shard

    with pytest.raises(ConfigError, match="--shard"):
        Shard.parse(text)


def test_no_task_starts_past_the_deadline(mini, make_verdict):
    import time

    class Slow(FakeHarness):
        def __call__(self, *args, **kwargs):
            time.sleep(0.3)
            return super().__call__(*args, **kwargs)

    fake = Slow(make_verdict)
    run = run_bench(items(mini), OPTS, step=EvaluateStep(fake), deadline_s=0.2)
    assert fake.calls == ["row_sum"]  # relu (missing) and row_sum start in time
    assert run.not_run == ("scale_bias", "softmax_rows")


def test_a_checkpoint_follows_every_result_and_survives_an_interrupt(mini, make_verdict):
    seen = []
    fake = FakeHarness(make_verdict, interrupt_at="scale_bias")
    with pytest.raises(KeyboardInterrupt):
        run_bench(items(mini), OPTS, step=EvaluateStep(fake), on_checkpoint=seen.append)
    assert [[r.task_id for r in run.results] for run in seen] == [["relu"], ["relu", "row_sum"]]
    assert seen[-1].not_run == ("scale_bias", "softmax_rows")
    assert seen[-1].run_id == seen[0].run_id


def test_plan_keeps_the_families_asked_for(mini):
    assert [i.task_id for i in plan([mini / "tasks"], None, families=["softmax"])] == [
        "softmax_rows"
    ]
    with pytest.raises(ConfigError, match="no task of family"):
        plan([mini / "tasks"], None, families=["nope"])


def test_the_search_mode_reaches_optimize_and_only_another_mode_changes_the_key(
    mini, tmp_path, make_verdict
):
    journal = Journal(tmp_path / "j.jsonl")
    fake = FakeOptimizer(make_verdict)
    for search in ("staged", "staged", "mcts", "mcts"):
        step = OptimizeStep(None, budget_candidates=4, search=search, optimize_fn=fake)
        run_bench(items(mini, ["scale_bias"]), OPTS, step=step, journal=journal, resume=True)
    assert [c[1].search for c in fake.calls] == ["staged", "mcts"]
    assert "search" not in OptimizeStep(None, optimize_fn=fake).settings  # as before the option
