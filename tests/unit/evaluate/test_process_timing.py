"""Where a timed call's time went: the process's own report, kept beside the judge's numbers."""

from __future__ import annotations

import math

import pytest

from kernelwright.cli.render import describe_process
from kernelwright.evaluate.clock import _reported_ms
from kernelwright.evaluate.verdict import process_of
from kernelwright.records import ProcessTiming, Status, Timing, TimingStats, Verdict


def test_medians_of_what_the_process_reported() -> None:
    raw = {"samples_ms": [0.36, 0.40, 0.38], "events_ms": [0.19, 0.20, 0.21, 5.0],
           "span_ms": [0.30, 0.31, 0.29], "issue_ms": [0.33, 0.35, 0.34],
           "fixed_ms": [0.01, 0.02, 0.03]}
    p = process_of(raw)
    assert p is not None
    assert (p.events_ms, p.span_ms, p.issue_ms, p.fixed_ms) == pytest.approx(
        (0.205, 0.30, 0.34, 0.02))


def test_nothing_reported_is_none() -> None:
    assert process_of(None) is None
    assert process_of({"samples_ms": [1.0]}) is None
    assert process_of({"events_ms": [], "span_ms": [math.nan]}) is None


def test_non_finite_values_are_left_out() -> None:
    p = process_of({"events_ms": [math.inf, 0.5, math.nan], "span_ms": ["0.1", 0.7]})
    assert p == ProcessTiming(events_ms=0.5, span_ms=0.7)


def test_a_reported_duration_must_be_a_finite_non_negative_number() -> None:
    assert _reported_ms(0.25) == 0.25
    assert _reported_ms(3) == 3.0
    for bad in (None, -1.0, math.nan, math.inf, True, "0.2", [0.2]):
        assert _reported_ms(bad) is None, bad


def test_the_line_names_each_part() -> None:
    line = describe_process(ProcessTiming(events_ms=0.2, span_ms=0.25, fixed_ms=0.01))
    assert "events 0.2" in line and "first start to last end 0.25" in line
    assert "judge's fixed cost subtracted 0.01" in line
    assert "host issuing" not in line  # not reported, not shown
    assert "diagnostic" in line


def test_verdicts_round_trip_with_and_without_it() -> None:
    stats = TimingStats(median_ms=0.4, mean_ms=0.4, min_ms=0.3, iqr_ms=0.1, n_runs=5)
    timing = Timing(candidate=stats, candidate_process=ProcessTiming(events_ms=0.2, span_ms=0.3))
    v = Verdict(status=Status.CORRECT, correct=True, timing=timing)
    assert Verdict.from_dict(v.to_dict()) == v
    older = v.to_dict()
    for key in ("candidate_process", "eager_process", "compile_process"):
        del older["timing"][key]  # a verdict archived before these fields existed
    assert Verdict.from_dict(older).timing.candidate_process is None
