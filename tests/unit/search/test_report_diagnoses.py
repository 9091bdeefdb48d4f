"""A profile's diagnoses (``optimize --profile``, with or without an LLM) in the report and the
summary."""

from __future__ import annotations

from pathlib import Path

from kernelwright.design.report import write_outputs
from kernelwright.hardware.energy import Objective
from kernelwright.optimize import OptimizeResult, summarise
from kernelwright.records import Candidate, Precision, Status, Timing, TimingStats, Verdict
from kernelwright.search.controller import SearchResult
from kernelwright.search.proposer import Trial

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
