"""Energy per call and the run's objective: the judge's sums, what each objective ranks by, and
how a run, its report and its CLI use them. The NVML counter itself is read on a GPU only."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.design.report import write_outputs
from kernelwright.evaluate.verdict import energy_of
from kernelwright.hardware.energy import EnergyWindows, Objective, cost, unavailable_reason
from kernelwright.optimize import OptimizeResult, summarise
from kernelwright.records import (
    Candidate,
    EnergyStats,
    Precision,
    Status,
    Timing,
    TimingStats,
    Verdict,
)
from kernelwright.search.controller import SearchResult
from kernelwright.search.decisions import reference_cost, value
from kernelwright.search.proposer import Trial, best_correct, candidate_cost

ROOT = Path(__file__).resolve().parents[3]


class Counter:
    """A stand-in energy counter: ``step`` mJ more at each read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def millijoules(self) -> float:
        self.now += self.step
        return self.now


def test_windows_charge_each_call_the_windows_mean_power_times_its_time() -> None:
    windows = EnergyWindows(Counter(1.0))
    windows.add(100.0, 130.0, 60.0)  # 30 mJ in 60 ms
    windows.add(200.0, 250.0, 40.0)  # 50 mJ in 40 ms
    summary = windows.summary(call_ms=0.5)
    assert summary is not None
    assert summary["watts"] == pytest.approx(0.8)  # 80 mJ over 100 ms: mJ/ms is W
    assert summary["mj_per_call"] == pytest.approx(0.8 * 0.5)
    assert summary["batches"] == 2 and summary["window_ms"] == pytest.approx(100.0)


def test_the_error_reflects_the_counter_s_steps_between_windows() -> None:
    steady = EnergyWindows(Counter(1.0))
    for _ in range(10):
        steady.add(0.0, 50.0, 100.0)  # every window 0.5 W: no spread
    assert steady.summary(1.0)["watts_se"] == pytest.approx(0.0)  # type: ignore[index]
    stepped = EnergyWindows(Counter(1.0))
    for i in range(10):  # a step of 100 mJ in every other 100-ms window: 0.5 W on average
        stepped.add(0.0, 100.0 if i % 2 else 0.0, 100.0)
    summary = stepped.summary(2.0)
    assert summary is not None and summary["watts"] == pytest.approx(0.5)
    # windows of 0 and 1 W: the mean's standard error is 0.5 / sqrt(10) (with n/(n-1))
    assert summary["watts_se"] == pytest.approx(math.sqrt(10 / 9 * 10 * 0.25) / 10)
    assert summary["mj_per_call_se"] == pytest.approx(2.0 * summary["watts_se"])
    single = EnergyWindows(Counter(1.0))
    single.add(0.0, 10.0, 10.0)
    assert single.summary(1.0)["watts_se"] == pytest.approx(1.0)  # type: ignore[index]


def test_a_counter_that_goes_back_adds_nothing_and_no_window_gives_no_record() -> None:
    windows = EnergyWindows(Counter(1.0))
    assert windows.summary(1.0) is None
    windows.add(500.0, 400.0, 10.0)  # a reset driver must not subtract energy
    assert windows.millijoules == 0.0
    # no step seen in any window is no measurement (a report would otherwise print 0 mJ)
    assert windows.summary(1.0) is None
    windows.add(0.0, 12.5, 10.0)
    assert windows.summary(1.0)["mj_per_call"] == pytest.approx(12.5 / 20.0)  # type: ignore[index]


@pytest.mark.parametrize(
    ("objective", "expected"),
    [(Objective.TIME, 2.0), (Objective.ENERGY, 3.0), (Objective.EDP, 6.0)],
)
def test_each_objective_ranks_by_its_own_quantity(objective: Objective, expected: float) -> None:
    assert cost(2.0, 3.0, objective) == expected


def test_an_objective_without_its_quantity_costs_infinity() -> None:
    assert cost(2.0, None, Objective.TIME) == 2.0
    assert math.isinf(cost(2.0, None, Objective.ENERGY))
    assert math.isinf(cost(None, 3.0, Objective.EDP))
    assert math.isinf(cost(None, None, Objective.TIME))


def test_the_cpu_has_no_energy_counter() -> None:
    assert "CPU has none" in unavailable_reason("cpu")


@pytest.mark.parametrize(
    "raw",
    [None, {}, {"energy": None}, {"energy": {"mj_per_call": -1.0, "watts": 300.0}},
     {"energy": {"mj_per_call": float("nan"), "watts": 300.0}},
     {"energy": {"mj_per_call": "1", "watts": 300.0}}, {"energy": {"watts": 300.0}}],
)
def test_a_missing_or_malformed_energy_record_is_no_energy(raw) -> None:  # type: ignore[no-untyped-def]
    assert energy_of(raw) is None


def test_a_judge_energy_record_becomes_the_verdict_s() -> None:
    assert energy_of({"energy": {"mj_per_call": 1.5, "watts": 420.0}}) == EnergyStats(1.5, 420.0)
    record = {"mj_per_call": 1.5, "watts": 420.0, "mj_per_call_se": 0.2}
    assert energy_of({"energy": record}) == EnergyStats(1.5, 420.0, 0.2)


def _verdict(ms: float, mj: float | None, eager_ms: float = 2.0,
             eager_mj: float | None = 1.0) -> Verdict:
    def stats(x: float) -> TimingStats:
        return TimingStats(x, x, x, 0.0, 5)

    timing = Timing(
        candidate=stats(ms), eager=stats(eager_ms), speedup_vs_eager=eager_ms / ms,
        representative=True,
        candidate_energy=EnergyStats(mj, mj / ms * 1e3) if mj is not None else None,
        eager_energy=EnergyStats(eager_mj, 300.0) if eager_mj is not None else None,
    )
    return Verdict(Status.CORRECT, True, timing=timing, precision=Precision.FP32)


def _trials() -> list[Trial]:
    fast_hungry = Trial(1, Candidate("a", "template"), _verdict(ms=1.0, mj=0.9))
    slow_frugal = Trial(2, Candidate("b", "template"), _verdict(ms=1.2, mj=0.5))
    return [fast_hungry, slow_frugal]


def test_the_best_candidate_depends_on_the_objective() -> None:
    trials = _trials()
    assert best_correct(trials).candidate_id == 1  # type: ignore[union-attr]
    assert best_correct(trials, Objective.ENERGY).candidate_id == 2  # type: ignore[union-attr]
    # 0.9 mJ x 1.0 ms against 0.5 x 1.2: the frugal one wins the product too
    assert best_correct(trials, Objective.EDP).candidate_id == 2  # type: ignore[union-attr]
    assert reference_cost(trials, Objective.ENERGY) == pytest.approx(0.5)


def test_an_unmetered_candidate_never_wins_an_energy_run() -> None:
    unmetered = Trial(3, Candidate("c", "template"), _verdict(ms=0.1, mj=None))
    assert math.isinf(candidate_cost(unmetered.verdict, Objective.ENERGY))
    assert best_correct([unmetered, *_trials()], Objective.ENERGY).candidate_id == 2  # type: ignore[union-attr]


def test_the_search_values_a_verdict_against_eager_under_the_objective() -> None:
    v = _verdict(ms=1.0, mj=2.0, eager_ms=2.0, eager_mj=1.0)
    assert value(v, math.inf) == pytest.approx(2.0 / 3.0)  # twice as fast as eager
    assert value(v, math.inf, Objective.ENERGY) == pytest.approx(1.0 / 3.0)  # twice the energy


def _result(plan, objective: Objective) -> OptimizeResult:  # type: ignore[no-untyped-def]
    # faster than eager (1.0 against 2.0 ms) but hungrier (2.0 against 1.0 mJ)
    verdict = _verdict(ms=1.0, mj=2.0, eager_ms=2.0, eager_mj=1.0)
    trial = Trial(7, Candidate(plan.render(plan.designs[0]), "template"), verdict)
    search = SearchResult("run", trials=[trial], best=trial, stopped="budget")
    return OptimizeResult(plan.task, "run", "cuda", "full", Precision.FP32, search, plan, objective)


def test_eager_is_returned_when_it_wins_the_run_s_objective(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    by_time = _result(pointwise_plan, Objective.TIME)
    assert not by_time.eager_is_better
    by_energy = _result(pointwise_plan, Objective.ENERGY)
    assert by_energy.eager_is_better
    summary = summarise(by_energy)
    assert summary["returns_eager"] and summary["objective"] == "energy"
    assert summary["best_mj"] == 2.0 and summary["eager_mj"] == 1.0
    write_outputs(by_energy, tmp_path, None)
    report = (tmp_path / "report.md").read_text()
    assert "Worse than eager PyTorch by energy" in report
    assert "Energy: 2.000 mJ a call" in report and "eager 1.000 mJ" in report
    assert "| mJ |" in report  # the candidates' table gains the column
    assert "rough" not in report  # no spread recorded


def test_energies_with_a_large_spread_are_called_rough(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    result = _result(pointwise_plan, Objective.TIME)
    assert result.search is not None and result.search.best is not None
    verdict = result.search.best.verdict
    noisy = dataclasses.replace(verdict.timing, candidate_energy=EnergyStats(3883.0, 923.0, 953.0))
    trial = Trial(7, result.search.best.candidate, dataclasses.replace(verdict, timing=noisy))
    result.search.trials[:] = [trial]
    result.search.best = trial
    write_outputs(result, tmp_path, None)
    report = (tmp_path / "report.md").read_text()
    assert "3883.000 +- 953.000 mJ a call at 923 W" in report
    assert "These energies are rough" in report


def test_a_report_without_energy_has_no_energy_column(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    verdict = _verdict(ms=1.0, mj=None)
    trial = Trial(7, Candidate(pointwise_plan.render(pointwise_plan.designs[0]), "template"),
                  verdict)
    search = SearchResult("run", trials=[trial], best=trial, stopped="budget")
    result = OptimizeResult(pointwise_plan.task, "run", "cuda", "full", Precision.FP32, search,
                            pointwise_plan)
    write_outputs(result, tmp_path, None)
    report = (tmp_path / "report.md").read_text()
    assert "Energy:" not in report and "| mJ |" not in report


def test_cli_refuses_an_energy_objective_where_nothing_can_measure_it(tmp_path: Path) -> None:
    task = ROOT / "tests" / "fixtures" / "tasks" / "scale_bias.py"
    runner = CliRunner()
    res = runner.invoke(app, ["optimize", str(task), "--device", "cpu", "--objective", "energy",
                              "--archive", str(tmp_path / "a.sqlite"), "-q"])
    assert res.exit_code == 2, res.output
    assert "--objective energy cannot be measured here" in res.output
    assert "Traceback" not in res.output
    res = runner.invoke(app, ["optimize", str(task), "--objective", "joules", "-q"])
    assert res.exit_code == 2 and "is not one of time, energy, edp" in res.output


def test_bench_takes_an_energy_objective_only_with_optimize(tmp_path: Path) -> None:
    task = ROOT / "tests" / "fixtures" / "tasks" / "scale_bias.py"
    res = CliRunner().invoke(app, ["bench", str(task), "--objective", "edp", "--device", "cpu",
                                   "--out", str(tmp_path / "out")])
    assert res.exit_code == 2 and "needs --optimize" in res.output, res.output


def test_a_baseline_is_reused_for_an_energy_ranking_only_with_long_windows() -> None:
    from kernelwright.evaluate.harness import _metered

    assert not _metered({"samples_ms": [1.0]})  # cached before energy was measured
    assert not _metered({"energy": {"mj_per_call": 1.0, "window_ms": 300.0}})  # a time run's
    assert _metered({"energy": {"mj_per_call": 1.0, "window_ms": 5000.0}})
