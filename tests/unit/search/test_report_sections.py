"""A profile's diagnoses (``optimize --profile``, with or without an LLM) in the report and the
summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.design.plan import RELIEF, plan_task
from kernelwright.design.report import write_outputs
from kernelwright.hardware.energy import Objective
from kernelwright.optimize import OptimizeResult, summarise
from kernelwright.records import Candidate, Precision, Status, Timing, TimingStats, Verdict
from kernelwright.search.controller import SearchResult
from kernelwright.search.proposer import Trial
from kernelwright.task import load_task

SOFTMAX = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(64, 2000)]


def get_init_inputs():
    return []
"""
LINES = ("- softmax_kernel: memory-bound at 82% of DRAM peak (SM 26%): wider loads",)


def _result(plan, diagnoses: tuple[str, ...]) -> OptimizeResult:  # type: ignore[no-untyped-def]
    timing = Timing(candidate=TimingStats(1.0, 1.0, 1.0, 0.0, 5))
    trial = Trial(1, Candidate(plan.render(plan.designs[0]), "template"),
                  Verdict(Status.CORRECT, True, timing=timing, precision=Precision.FP32))
    search = SearchResult("run", trials=[trial], best=trial, stopped="budget")
    return OptimizeResult(plan.task, "run", "cpu", "small", Precision.FP32, search, plan,
                          Objective.TIME, diagnoses)


def test_the_report_and_summary_list_a_profiles_diagnoses(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = _result(pointwise_plan, LINES)
    assert summarise(result)["diagnoses"] == list(LINES)
    write_outputs(result, tmp_path, None)
    report = (tmp_path / "report.md").read_text()
    assert "## Hardware diagnoses of the profiled kernel" in report and LINES[0] in report


def test_without_a_profile_the_report_has_no_such_section(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = _result(pointwise_plan, ())
    assert summarise(result)["diagnoses"] == []
    write_outputs(result, tmp_path, None)
    assert "Hardware diagnoses" not in (tmp_path / "report.md").read_text()


def test_the_report_lists_each_constraint_how_it_is_checked_and_what_it_refused(
    pointwise_plan, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    from kernelwright.constraints import Constraints
    from kernelwright.constraints.properties import Properties
    from kernelwright.constraints.space_rules import SpaceRules
    from kernelwright.records import Violation

    rules = Constraints(forbidden_ops=("torch.add",), space=SpaceRules(("BLOCK <= 512",)),
                        properties=Properties(deterministic=True))
    result = dataclasses.replace(_result(pointwise_plan, ()), constraints=rules)
    refused = Verdict(Status.REJECTED, False, violations=(
        Violation("constraint-forbidden-op", "calls torch.add"),))
    assert result.search is not None
    result.search.trials.append(Trial(2, Candidate("x", "llm"), refused))
    write_outputs(result, tmp_path, None)
    report = (tmp_path / "report.md").read_text()
    assert "## Constraints" in report
    assert "| no `torch.add` | the source, before evaluation | 1 |" in report
    assert "| `BLOCK <= 512` | tuning spaces pruned;" in report
    assert "| bit-identical run to run | the harness: two more runs" in report
    assert "kernel languages: triton" in report


def test_a_profiled_limit_ranks_the_skills_that_relieve_it_higher(tmp_path: Path) -> None:
    path = tmp_path / "softmax.py"
    path.write_text(SOFTMAX)
    task = load_task(path, "small")

    def scores(plan) -> dict[tuple[str, tuple[str, ...]], float]:  # type: ignore[no-untyped-def]
        return {(o.choice.skill, o.choice.options): o.score for g in plan.groups for o in g.options}

    plain = plan_task(task, "cpu", "small", isolate=False)
    profiled = plan_task(task, "cpu", "small", isolate=False, diagnosed=("memory-bound",))
    assert plain.relieved == () and set(profiled.relieved) == {"row-onepass", "online-softmax"}
    before, after = scores(plain), scores(profiled)
    # both skills relieve a memory-bound kernel (one read fewer): each multiplies the score
    assert after["row-onepass", ("online-softmax",)] == pytest.approx(
        before["row-onepass", ("online-softmax",)] * RELIEF**2)
    assert after["row-looped", ("online-softmax",)] == pytest.approx(
        before["row-looped", ("online-softmax",)] * RELIEF)
    assert after["row-looped", ()] == pytest.approx(before["row-looped", ()])
    late = plan_task(task, "cpu", "small", isolate=False, diagnosed=("latency-bound",))
    assert late.relieved == ()  # no skill that holds here relieves it: nothing to say


def test_candidates_are_numbered_as_the_table_rows_not_by_archive_id(
    pointwise_plan, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """A task of a bench run whose archive already holds two candidates: its candidates have
    archive ids 3 and 4, but the report, its table and the files under candidates/ number
    them 1 and 2."""
    source = pointwise_plan.render(pointwise_plan.designs[0])
    slow = Verdict(Status.CORRECT, True, precision=Precision.FP32,
                   timing=Timing(candidate=TimingStats(2.0, 2.0, 2.0, 0.0, 5)))
    fast = Verdict(Status.CORRECT, True, precision=Precision.FP32,
                   timing=Timing(candidate=TimingStats(1.0, 1.0, 1.0, 0.0, 5)))
    first = Trial(3, Candidate(source, "template"), slow, "structure")
    second = Trial(4, Candidate(source + "\n", "template", parent=3), fast, "tuning: BLOCK")
    search = SearchResult("run", trials=[first, second], best=second, stopped="budget")
    result = OptimizeResult(pointwise_plan.task, "run", "cpu", "small", Precision.FP32, search,
                            pointwise_plan, Objective.TIME, ())
    write_outputs(result, tmp_path, None)
    report = (tmp_path / "report.md").read_text()
    assert "Best: candidate 2 (tuning: BLOCK)" in report
    assert "- 1 -> 2: tuning: BLOCK" in report
    assert sorted(p.name for p in (tmp_path / "candidates").glob("*.py"))[1].startswith("002_")


def test_a_run_stopped_before_its_first_candidate_says_so(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Not "no template applies" when templates applied and the deadline came first."""
    search = SearchResult("run", trials=[], best=None, stopped="interrupted")
    result = OptimizeResult(pointwise_plan.task, "run", "cpu", "small", Precision.FP32, search,
                            pointwise_plan, Objective.TIME, ())
    write_outputs(result, tmp_path, None)
    report = (tmp_path / "report.md").read_text()
    assert "the run stopped (interrupted) before its first candidate" in report
    assert "no template applies" not in report


def test_the_report_says_what_the_session_s_set_up_took(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    from kernelwright.records import PhaseTime

    result = _result(pointwise_plan, ())
    write_outputs(result, tmp_path, None)
    assert "session's set-up" not in (tmp_path / "report.md").read_text()
    (trial,) = result.search.trials
    setup = (PhaseTime("starting the judge (the reference)", 9.04),
             PhaseTime("eager baseline", 2.5))
    trial = dataclasses.replace(trial, verdict=dataclasses.replace(trial.verdict, setup=setup))
    result.search.trials[0] = trial
    write_outputs(result, tmp_path, None)
    assert ("- before the first candidate ran, the session's set-up: starting the judge "
            "(the reference) 9.0 s, eager baseline 2.5 s") in (tmp_path / "report.md").read_text()
