"""`kernelwright archive runs`: a search run's evaluations, first verified time, rate and best."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.archive import Archive
from kernelwright.cli import app
from kernelwright.records import (
    Candidate,
    PhaseTime,
    Status,
    Task,
    Timing,
    TimingStats,
    Verdict,
)
from kernelwright.search.proposer import EQUIVALENT, REFUSED
from kernelwright.search.run_stats import run_stats

TASK = Task(path="/t/softmax.py", name="softmax", source="src", sha256="t" * 64)


def _verdict(ms: float | None, *flags: str, phases: tuple[PhaseTime, ...] = ()) -> Verdict:
    if ms is None:
        return Verdict(Status.INCORRECT, False, flags=flags, duration_s=2.0, phases=phases)
    stats = TimingStats(median_ms=ms, mean_ms=ms, min_ms=ms, iqr_ms=0.0, n_runs=5)
    eager = TimingStats(median_ms=2.0, mean_ms=2.0, min_ms=2.0, iqr_ms=0.0, n_runs=5)
    timing = Timing(candidate=stats, eager=eager, speedup_vs_eager=2.0 / ms)
    return Verdict(Status.CORRECT, True, timing=timing, flags=flags, duration_s=4.0,
                   phases=phases)


def _run(store: Archive, run_id: str, proposer: str, verdicts: list[tuple[int, Verdict]]) -> None:
    """A search run started at 12:00:00 whose verdicts arrive the given seconds later."""
    store.start_run(run_id, "search", TASK.sha256, {"proposer": proposer})
    store.conn.execute("UPDATE runs SET started_at = '2026-12-03T12:00:00+0000' WHERE id = ?",
                       (run_id,))
    for n, (second, verdict) in enumerate(verdicts):
        store.add(TASK, Candidate(f"{run_id} = {n}"), verdict, run_id)
        store.conn.execute(
            "UPDATE evaluations SET created_at = ? WHERE id = (SELECT MAX(id) FROM evaluations)",
            (f"2026-12-03T12:{second // 60:02d}:{second % 60:02d}+0000",))
    store.conn.commit()


def test_counts_times_and_bests(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.sqlite") as store:
        _run(store, "run-a", "templates", [
            (20, _verdict(None)),  # incorrect: not the first verified
            (30, _verdict(1.0)),
            (35, _verdict(1.0, EQUIVALENT)),  # reused: no evaluation
            (36, _verdict(None, REFUSED)),  # refused: no evaluation
            (50, _verdict(0.5)),
            (80, _verdict(0.8)),
        ])
        _run(store, "run-b", "mcts", [(40, _verdict(0.9))])
        a, b = run_stats(store, at=2)
    assert (a.search, a.evaluated, a.reused, a.refused, a.correct) == ("staged", 4, 1, 1, 3)
    assert a.first_verified_s == 30.0
    assert a.per_minute == pytest.approx(3 * 60 / 60)  # 3 more evaluations in the 60 s after
    assert a.best_ms == 0.5 and a.best_vs_eager == 4.0
    assert a.best_at_ms == 1.0  # the first two evaluated: the incorrect one and 1.0 ms
    assert (b.search, b.evaluated, b.first_verified_s, b.per_minute, b.best_ms) == (
        "mcts", 1, 40.0, None, 0.9)


def test_a_run_without_a_correct_candidate(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.sqlite") as store:
        _run(store, "run-c", "evolution", [(10, _verdict(None)), (20, _verdict(None))])
        (c,) = run_stats(store)
    assert c.correct == 0 and c.first_verified_s is None and c.best_ms is None
    assert c.per_minute == pytest.approx(6.0)


def test_the_command_filters_by_task_and_refuses_a_bad_budget(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    with Archive(path) as store:
        _run(store, "run-a", "templates", [(30, _verdict(1.0)), (50, _verdict(0.5))])
    runner = CliRunner()
    shown = runner.invoke(app, ["archive", "runs", "--archive", str(path), "--at", "1",
                                "--json", "-"])
    assert shown.exit_code == 0, shown.output
    assert '"best_at_ms": 1.0' in shown.output and '"best_ms": 0.5' in shown.output
    other = runner.invoke(app, ["archive", "runs", "--archive", str(path), "--task", "gelu"])
    assert other.exit_code == 0 and "no search run" in other.output
    bad = runner.invoke(app, ["archive", "runs", "--archive", str(path), "--at", "0"])
    assert bad.exit_code == 2 and "--at must be a positive" in bad.output


def test_an_evaluation_s_mean_seconds_and_steps(tmp_path: Path) -> None:
    compile_, timed = PhaseTime("warm-up (compiling)", 2.0), PhaseTime("timing", 0.5)
    with Archive(tmp_path / "a.sqlite") as store:
        _run(store, "run-d", "mcts", [
            (10, _verdict(None, phases=(compile_,))),
            (20, _verdict(1.0, phases=(compile_, timed))),
            (25, _verdict(1.0, EQUIVALENT, phases=(compile_, timed))),  # no evaluation
        ])
        (d,) = run_stats(store)
    assert d.seconds_each == pytest.approx(3.0)  # 2 s and 4 s
    assert d.phases_s == pytest.approx({"warm-up (compiling)": 2.0, "timing": 0.25})


def test_the_session_s_set_up_is_summed_and_shown_apart(tmp_path: Path) -> None:
    import dataclasses

    setup = (PhaseTime("starting the judge (the reference)", 12.0),
             PhaseTime("eager baseline", 3.5))
    path = tmp_path / "a.sqlite"
    with Archive(path) as store:
        _run(store, "run-s", "templates", [
            (20, dataclasses.replace(_verdict(1.0), setup=setup)), (30, _verdict(0.5))])
        (s,) = run_stats(store)
    assert s.setup_s == {"starting the judge (the reference)": 12.0, "eager baseline": 3.5}
    shown = CliRunner().invoke(app, ["archive", "runs", "--archive", str(path)])
    assert shown.exit_code == 0, shown.output
    assert ("the session's set-up, s: starting the judge (the reference) 12.0, eager baseline "
            "3.5") in " ".join(shown.output.split())


def test_a_confirmation_is_no_evaluation_and_its_time_is_shown(tmp_path: Path) -> None:
    from kernelwright.search.proposer import CONFIRMATION

    with Archive(tmp_path / "a.sqlite") as store:
        _run(store, "run-e", "templates", [(10, _verdict(0.5)), (20, _verdict(1.0))])
        # the best again, flagged: the same candidate (its source), a second time
        store.add(TASK, Candidate("run-e = 0"), _verdict(0.6, CONFIRMATION), "run-e")
        (e,) = run_stats(store)
    assert e.evaluated == 2 and e.best_ms == 0.5 and e.confirmed_ms == 0.6


def test_raced_evaluations_are_counted_and_shown(tmp_path: Path) -> None:
    import dataclasses

    raced = _verdict(1.5, phases=(PhaseTime("timing", 0.2),))
    raced = dataclasses.replace(raced, timing=dataclasses.replace(raced.timing, raced=True))
    path = tmp_path / "a.sqlite"
    with Archive(path) as store:
        _run(store, "run-f", "mcts", [(10, _verdict(1.0, phases=(PhaseTime("timing", 0.5),))),
                                      (20, raced)])
        (f,) = run_stats(store)
    assert f.raced == 1 and f.best_ms == 1.0  # read back from the archive's verdicts
    result = CliRunner().invoke(app, ["archive", "runs", "--archive", str(path)])
    assert result.exit_code == 0 and "1 of 2 raced out" in result.output
