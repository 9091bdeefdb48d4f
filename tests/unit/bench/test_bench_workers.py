"""run_bench over worker processes (a scripted step): same results as one worker, in the suite's
order, a dead worker's task tried again, an interrupted run resumed."""

import json
import shutil
from pathlib import Path

import pytest
from doubles.steps import ScriptedStep

from kernelwright.archive import Archive
from kernelwright.bench import Journal, plan, run_bench
from kernelwright.bench.pool import LocalPool, worker_devices
from kernelwright.evaluate import EvalOptions

MINI = Path(__file__).parents[2] / "fixtures" / "bench"
OPTS = EvalOptions(device="cpu", trials=1)
STATUSES = {"row_sum": "incorrect"}


@pytest.fixture
def mini(tmp_path):
    shutil.copytree(MINI, tmp_path / "mini")
    return plan([tmp_path / "mini" / "tasks"], tmp_path / "mini" / "solutions")


def comparable(run):
    """Each result as written, less what depends on the clock and the worker."""
    return [
        {k: v for k, v in r.to_dict().items() if k not in ("duration_s", "timed_on")}
        for r in run.results
    ]


def test_two_workers_give_the_results_of_one_in_the_suites_order(mini, tmp_path):
    # the first task to run finishes last: completion order differs from the suite's
    step = ScriptedStep(tmp_path / "calls", STATUSES, delays={"row_sum": 1.5})
    one = run_bench(mini, OPTS, step=step)
    journal = Journal(tmp_path / "journal.jsonl")
    with Archive(tmp_path / "archive.sqlite") as archive:
        two = run_bench(
            mini, OPTS, step=step, journal=journal, pool=LocalPool(2), archive=archive, run_id="two"
        )
        records = archive.history(run_id="two")
    assert sorted(r.task_name for r in records) == ["row_sum", "scale_bias", "softmax_rows"]
    assert comparable(two) == comparable(one)
    assert [(r.task_id, r.status) for r in two.results] == [
        ("relu", "missing"),
        ("row_sum", "incorrect"),
        ("scale_bias", "correct"),
        ("softmax_rows", "correct"),
    ]
    assert [e.result.task_id for e in journal.entries()][-1] == "row_sum"  # as they finished
    judged = [r for r in two.results if r.verdict is not None]
    assert {r.timed_on for r in judged} == {"cpu"}
    assert all(r.timed_on == "" for r in one.results)
    assert "timed_on" not in json.dumps([r.to_dict() for r in one.results])
    assert len(step.calls()) == 6  # three solutions, once per run


def test_a_killed_workers_task_is_retried_once_then_reported(mini, tmp_path):
    step = ScriptedStep(tmp_path / "calls", STATUSES, deaths={"scale_bias": 1, "softmax_rows": 2})
    run = run_bench(mini, OPTS, step=step, pool=LocalPool(2))
    by_id = {r.task_id: r for r in run.results}
    assert by_id["scale_bias"].status == "correct"  # died once, the retry answered
    assert by_id["softmax_rows"].status == "error"
    assert "worker process died twice" in by_id["softmax_rows"].error
    assert by_id["row_sum"].status == "incorrect"  # the others never noticed
    assert len(step.calls("scale_bias.")) == 2 and len(step.calls("softmax_rows.")) == 2


def test_an_interrupted_run_with_workers_resumes_the_rest(mini, tmp_path):
    journal = Journal(tmp_path / "journal.jsonl")
    stop = ScriptedStep(
        tmp_path / "first", STATUSES, delays={"softmax_rows": 1.0}, interrupt="softmax_rows"
    )
    with pytest.raises(KeyboardInterrupt):
        run_bench(mini, OPTS, step=stop, journal=journal, pool=LocalPool(2))
    kept = {e.result.task_id for e in journal.entries()}
    assert "softmax_rows" not in kept and {"row_sum", "scale_bias"} <= kept
    rest = ScriptedStep(tmp_path / "second", STATUSES)
    run = run_bench(mini, OPTS, step=rest, journal=journal, resume=True, pool=LocalPool(2))
    assert rest.calls() == [c for c in rest.calls() if c.startswith("softmax_rows.")]
    assert len(rest.calls()) == 1
    assert [r.status for r in run.results] == ["missing", "incorrect", "correct", "correct"]
    assert run.resumed == 3 and run.not_run == ()


def test_workers_are_pinned_one_gpu_each_and_told_when_they_share():
    assert worker_devices(2, "cpu", ["0", "1"]) == (["", ""], "")
    assert worker_devices(2, "cuda", ["4", "5"]) == (["4", "5"], "")
    pins, note = worker_devices(3, "cuda", ["0", "1"])
    assert pins == ["0", "1", "0"] and "3 workers share 2 GPU(s)" in note
