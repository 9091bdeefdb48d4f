"""An eager fallback says when its candidate lost only within the clock's run-to-run spread."""

from __future__ import annotations

from kernelwright.bench.steps import spread_note
from kernelwright.records import TimingStats


def stats(median: float, iqr: float) -> TimingStats:
    return TimingStats(median_ms=median, mean_ms=median, min_ms=median, iqr_ms=iqr, n_runs=6)


def test_medians_inside_each_others_spread_are_called_a_tie() -> None:
    # 0.194 against 0.189, the batches spread 0.02 and 0.006 ms: the order is the clock's
    assert spread_note(stats(0.194, 0.02), stats(0.189, 0.006)) == ", within the timing spread"


def test_a_loss_beyond_the_spread_is_not() -> None:
    assert spread_note(stats(0.300, 0.02), stats(0.200, 0.01)) == ""


def test_no_note_without_both_timings() -> None:
    assert spread_note(None, stats(0.2, 0.01)) == "" and spread_note(stats(0.2, 0.01), None) == ""
