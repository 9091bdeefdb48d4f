"""A run whose fastest correct candidate lost to eager PyTorch returns the task's own model:
best.py, the summary, the report and a bench's outcome all say so; on the CPU (timings under
the interpreter) nothing is decided from speed."""

from __future__ import annotations

import runpy
from pathlib import Path

import torch

from kernelwright.bench.steps import outcome_from
from kernelwright.design.report import write_outputs
from kernelwright.optimize import OptimizeResult, summarise
from kernelwright.records import (
    Candidate,
    Precision,
    SpeedOfLight,
    Status,
    Timing,
    TimingStats,
    Verdict,
)
from kernelwright.search.controller import SearchResult
from kernelwright.search.proposer import Trial


def _stats(ms: float) -> TimingStats:
    return TimingStats(ms, ms, ms, 0.0, 5)


def _result(plan, candidate_ms: float, representative: bool) -> OptimizeResult:  # type: ignore[no-untyped-def]
    eager, compiled = 2.0, 1.6
    timing = Timing(
        candidate=_stats(candidate_ms),
        eager=_stats(eager),
        compile=_stats(compiled),
        speedup_vs_eager=eager / candidate_ms,
        speedup_vs_compile=compiled / candidate_ms,
        representative=representative,
    )
    sol = SpeedOfLight(0, 1, 1.0, "memory", 1.0 / candidate_ms, 1.0, 1.0, "test")
    verdict = Verdict(Status.CORRECT, True, timing=timing, sol=sol, precision=Precision.FP32,
                      max_abs_err=2e-6, max_rel_err=1e-5, norm_err=1e-7,
                      labels=("host-bound: issuing a call took 0.3 ms",))
    source = plan.render(plan.designs[0])
    trial = Trial(7, Candidate(source, "template"), verdict)
    search = SearchResult("run", trials=[trial], best=trial, stopped="budget")
    device = "cuda" if representative else "cpu"
    return OptimizeResult(plan.task, "run", device, "small", Precision.FP32, search, plan)


def test_a_candidate_slower_than_eager_is_not_returned(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = _result(pointwise_plan, candidate_ms=2.5, representative=True)
    assert result.eager_is_better and summarise(result)["returns_eager"]
    write_outputs(result, tmp_path, None)
    best = (tmp_path / "best.py").read_text()
    assert best.startswith(pointwise_plan.task.source.rstrip()) and "@triton.jit" not in best
    assert "best.py` is the task's own model" in (tmp_path / "report.md").read_text()
    # the candidate itself is kept, and best.py is a working drop-in ModelNew
    assert any("@triton.jit" in p.read_text() for p in (tmp_path / "candidates").glob("*.py"))
    ns = runpy.run_path(str(tmp_path / "best.py"))
    torch.manual_seed(0)
    x = ns["get_inputs"]()
    torch.manual_seed(1)
    ref = ns["Model"](*ns["get_init_inputs"]())
    torch.manual_seed(1)
    new = ns["ModelNew"](*ns["get_init_inputs"]())
    assert torch.equal(ref(*x), new(*x))
    # a bench reports eager's own timing from the run: 1.00x eager, never below
    out = outcome_from(result)
    t = out.verdict.timing
    assert out.candidate.origin == "eager" and out.candidate.source == best
    assert t.speedup_vs_eager == 1.0 and t.candidate == t.eager
    assert t.speedup_vs_compile == 1.6 / 2.0
    assert out.verdict.sol is not None and out.verdict.sol.fraction == 1.0 / 2.0
    assert out.verdict.labels[0].startswith("eager fallback")
    # the errors are the returned model's own (none); the candidate's labels say whose they are
    assert (out.verdict.max_abs_err, out.verdict.max_rel_err, out.verdict.norm_err) == (0, 0, 0)
    assert out.verdict.labels[1:] == (
        "the best candidate's verdict: host-bound: issuing a call took 0.3 ms",
    )


def test_a_faster_candidate_is_returned(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = _result(pointwise_plan, candidate_ms=1.0, representative=True)
    assert not result.eager_is_better
    write_outputs(result, tmp_path, None)
    assert "@triton.jit" in (tmp_path / "best.py").read_text()
    assert outcome_from(result).verdict is result.best.verdict  # type: ignore[union-attr]


def test_interpreter_timings_decide_nothing(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = _result(pointwise_plan, candidate_ms=40.0, representative=False)
    assert not result.eager_is_better and not summarise(result)["returns_eager"]
    write_outputs(result, tmp_path, None)
    assert "@triton.jit" in (tmp_path / "best.py").read_text()
    assert outcome_from(result).candidate.origin == "template"
