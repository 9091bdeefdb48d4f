"""Where a timed call's time went: the judge's phases and the process's own report, kept
beside the judge's time as a diagnostic."""

from __future__ import annotations

import math

import pytest

from kernelwright.cli.render import describe_breakdown, describe_phases
from kernelwright.evaluate.clock import _reported_ms
from kernelwright.evaluate.verdict import breakdown_of, phases_of
from kernelwright.records import (
    CallBreakdown,
    PhaseTime,
    Status,
    Timing,
    TimingStats,
    Verdict,
)


def test_medians_of_each_part() -> None:
    raw = {"samples_ms": [0.36, 0.40, 0.38], "events_ms": [0.19, 0.20, 0.21, 5.0],
           "span_ms": [0.30, 0.31, 0.29], "issue_ms": [0.33, 0.35, 0.34],
           "forward_ms": [0.26, 0.25, 0.27], "prelude_ms": [0.05, 0.04, 0.06],
           "fixed_ms": [0.01, 0.02, 0.03], "write_ms": [0.1, 0.2, 0.3],
           "turn_ms": [0.5, 0.4, 0.6], "read_ms": [0.05, 0.07, 0.06],
           "setup_ms": [0.02, 0.01, 0.03], "reply_ms": [0.04, 0.04, 0.05],
           "run_ms": [0.33, 0.32, 0.34], "busy_ms": [0.41, 0.39, 0.45],
           "mapped_mb": [141.6, 2147.5, 141.6]}
    p = breakdown_of(raw)
    assert p is not None
    assert p.mapped_mb == pytest.approx(141.6)
    assert (p.run_ms, p.busy_ms) == pytest.approx((0.33, 0.41))
    assert (p.events_ms, p.span_ms, p.issue_ms, p.fixed_ms) == pytest.approx(
        (0.205, 0.30, 0.34, 0.02))
    # of the host's issuing, its time inside the forwards: the rest is the process's own
    assert p.forward_ms == pytest.approx(0.26)
    assert p.prelude_ms == pytest.approx(0.05)
    assert ("host issuing 0.3400, of which in the forward 0.2600, before it (revealing, views, "
            "event) 0.0500") in describe_breakdown(p)
    assert (p.write_ms, p.turn_ms, p.read_ms, p.setup_ms, p.reply_ms) == pytest.approx(
        (0.2, 0.5, 0.06, 0.02, 0.04))


def test_nothing_reported_is_none() -> None:
    assert breakdown_of(None) is None
    assert breakdown_of({"samples_ms": [1.0]}) is None
    assert breakdown_of({"events_ms": [], "span_ms": [math.nan]}) is None


def test_non_finite_values_are_left_out() -> None:
    p = breakdown_of({"events_ms": [math.inf, 0.5, math.nan], "span_ms": ["0.1", 0.7]})
    assert p == CallBreakdown(events_ms=0.5, span_ms=0.7)


def test_a_reported_duration_must_be_a_finite_non_negative_number() -> None:
    assert _reported_ms(0.25) == 0.25
    assert _reported_ms(3) == 3.0
    for bad in (None, -1.0, math.nan, math.inf, True, "0.2", [0.2]):
        assert _reported_ms(bad) is None, bad


def test_the_line_names_each_part() -> None:
    line = describe_breakdown(CallBreakdown(events_ms=0.2, span_ms=0.25, fixed_ms=0.01,
                                            turn_ms=0.3))
    assert "judge: the process's turn 0.3" in line and "fixed cost subtracted 0.01" in line
    assert "process (its own report): the call's events 0.2" in line
    assert "first start to last end 0.25" in line
    assert "host issuing" not in line and "writing inputs" not in line  # not measured
    assert "whole turn" not in line
    turn = describe_breakdown(CallBreakdown(turn_ms=3.7, run_ms=3.1, busy_ms=3.2))
    assert "issue to idle 3.100" in turn and "whole turn 3.200" in turn
    assert "diagnostic" in line
    both = describe_breakdown(CallBreakdown(write_ms=3.1, write_fixed_ms=3.0, read_ms=1.05))
    assert "writing inputs 3.100 (calibrated 3.000)" in both and "reading outputs 1.050 (ms" in both
    mapped = describe_breakdown(CallBreakdown(read_ms=0.8, read_fixed_ms=0.46, map_ms=0.6))
    assert "reading outputs 0.8000 (calibrated 0.4600), of which opening them 0.6000" in mapped
    split = describe_breakdown(CallBreakdown(read_ms=0.8, read_fixed_ms=0.46, map_ms=0.6,
                                             map_fixed_ms=0.3))
    assert "of which opening them 0.6000 (calibrated 0.3000)" in split
    assert "mapped" not in split
    # the memory mapped to read a call back: whole allocations, however small its outputs
    larger = describe_breakdown(CallBreakdown(read_ms=0.8, map_ms=0.6, mapped_mb=4294.97))
    assert "mapped 4295.0 MB (ms a call" in larger


def test_verdicts_round_trip_with_and_without_it() -> None:
    stats = TimingStats(median_ms=0.4, mean_ms=0.4, min_ms=0.3, iqr_ms=0.1, n_runs=5)
    timing = Timing(candidate=stats,
                    candidate_breakdown=CallBreakdown(events_ms=0.2, write_ms=0.3))
    v = Verdict(status=Status.CORRECT, correct=True, timing=timing)
    assert Verdict.from_dict(v.to_dict()) == v
    older = v.to_dict()
    for key in ("candidate_breakdown", "eager_breakdown", "compile_breakdown"):
        del older["timing"][key]  # a verdict archived before these fields existed
    assert Verdict.from_dict(older).timing.candidate_breakdown is None


def test_the_judge_s_seconds_per_step() -> None:
    report = {"phases_s": [["starting", 0.4], ["warm-up (compiling)", 1.9], ["bad"],
                           ["timing", float("nan")], [3, 1.0]]}
    assert phases_of(report) == (PhaseTime("starting", 0.4), PhaseTime("warm-up (compiling)", 1.9))
    assert phases_of({}) == ()
    line = describe_phases(phases_of(report), 4.6)
    assert "warm-up (compiling) 1.90 s" in line and "4.6 s in all" in line
    assert "set-up" not in line
    # a session's first verdict also names the set-up it waited for, before the candidate's steps
    setup = (PhaseTime("starting the judge (the reference)", 12.25),
             PhaseTime("eager baseline", 3.5))
    line = describe_phases(phases_of(report), 20.1, setup)
    assert line.index("starting the judge (the reference) 12.25 s") < line.index(
        "eager baseline 3.50 s") < line.index("the candidate's steps: starting 0.40 s")


def test_a_verdict_archived_before_the_set_up_was_recorded_reads_as_none() -> None:
    v = Verdict(status=Status.CORRECT, correct=True,
                setup=(PhaseTime("starting the judge (the reference)", 9.0),))
    assert Verdict.from_dict(v.to_dict()).setup == v.setup
    older = v.to_dict()
    del older["setup"]
    assert Verdict.from_dict(older).setup == ()


def test_calls_whose_host_issuing_fills_the_device_span_are_labelled_host_bound() -> None:
    from kernelwright.evaluate.verdict import host_bound_label

    stats = TimingStats(median_ms=8.4, mean_ms=8.4, min_ms=8.3, iqr_ms=0.1, n_runs=6)
    # MobileNetV2's first structure on an H200: the device waits for Python
    waiting = Timing(candidate=stats, representative=True,
                     candidate_breakdown=CallBreakdown(events_ms=7.53, span_ms=7.97,
                                                       issue_ms=8.03))
    (label,) = host_bound_label(waiting)
    assert label.startswith("host-bound") and "8.030" in label and "7.970" in label
    # ReLU at 6.4 GB: issuing takes a tenth of the device's span
    streaming = Timing(candidate=stats, representative=True,
                       candidate_breakdown=CallBreakdown(events_ms=3.06, span_ms=3.10,
                                                         issue_ms=0.39))
    assert host_bound_label(streaming) == ()
    # a host nearly as slow as the device still leaves the device busy: kernels set the time
    close = Timing(candidate=stats, representative=True,
                   candidate_breakdown=CallBreakdown(events_ms=0.98, span_ms=1.0, issue_ms=0.93))
    assert host_bound_label(close) == ()
    # nothing to say on the CPU (not representative), or without the process's report
    assert host_bound_label(Timing(candidate=stats, representative=False,
                                   candidate_breakdown=waiting.candidate_breakdown)) == ()
    assert host_bound_label(Timing(candidate=stats, representative=True)) == ()


def test_calls_that_met_the_memory_cap_are_labelled_and_described() -> None:
    from kernelwright.cli.render import describe_breakdown
    from kernelwright.evaluate.batch_report import allocator_since
    from kernelwright.evaluate.verdict import memory_cap_label

    # the process's counters over a batch of four calls, per call as the clock keeps them
    counts = allocator_since((130, 8), (122, 4))
    assert counts == {"device_allocs": 8, "alloc_retries": 4}
    assert allocator_since(None, None) == {}  # off CUDA: nothing reported
    stats = TimingStats(median_ms=0.96, mean_ms=0.96, min_ms=0.95, iqr_ms=0.01, n_runs=6)
    capped = Timing(candidate=stats, representative=True,
                    candidate_breakdown=CallBreakdown(span_ms=0.93, issue_ms=0.90,
                                                      device_allocs=2.0, alloc_retries=1.0))
    (label,) = memory_cap_label(capped)
    assert label.startswith("memory cap: 1 cache flushes a call") and "2 device" in label
    assert "cache flushes at the memory cap 1" in describe_breakdown(
        capped.candidate_breakdown)
    # allocations alone (a forward's first calls, or no cap met) are no label
    free = Timing(candidate=stats, representative=True,
                  candidate_breakdown=CallBreakdown(device_allocs=2.0, alloc_retries=0.0))
    assert memory_cap_label(free) == ()
    assert memory_cap_label(Timing(candidate=stats, representative=True)) == ()


def test_the_speed_of_light_line_names_the_ceilings_it_stands_on() -> None:
    from rich.console import Console

    from kernelwright.cli.render import verdict_panel
    from kernelwright.records import SpeedOfLight, Status, Verdict

    sol = SpeedOfLight(0, 12_884_901_888, 4.97, "memory", 0.97, 2593.0, 790.0,
                       "NVIDIA H100 80GB HBM3, measured 2026-12-06")
    console = Console(record=True, width=300)
    console.print(verdict_panel(Verdict(status=Status.CORRECT, correct=True, sol=sol)))
    text = console.export_text()
    assert "speed of light: 97.0% of 4.970 ms" in text
    assert "ceilings 2.59 TB/s, 790 TFLOP/s, NVIDIA H100 80GB HBM3, measured 2026-12-06" in text
