"""The judge's fixed cost of a batch: what is subtracted, and the calibration's trust boundary."""

from __future__ import annotations

import pytest

from kernelwright.evaluate.candidate_worker import Runner
from kernelwright.evaluate.clock import Overhead


def test_a_batch_costs_its_messages_writes_flush_descriptions_and_reads():
    o = Overhead(batch_ms=1.0, write_ms=0.1, flush_ms=0.5, describe_ms=0.02, read_ms=0.3)
    # 100 calls of 2 outputs each, 3 calls read back
    assert o.of(100, described=200, read=6) == pytest.approx(1.0 + 10.0 + 0.5 + 4.0 + 1.8)
    assert o.of(100) == pytest.approx(11.5)  # nothing described or read: the CPU's batches


def test_revealing_each_call_s_regions_is_counted_per_call():
    o = Overhead(batch_ms=1.0, write_ms=0.1, flush_ms=0.5, reveal_ms=0.01)
    assert o.of(100) == pytest.approx(1.0 + 10.0 + 1.0 + 0.5)


def test_an_overhead_without_output_costs_subtracts_none():
    assert Overhead(1.0, 0.1, 0.5).of(10, described=10, read=3) == pytest.approx(2.5)


def test_the_process_is_not_asked_to_calibrate_once_the_solution_is_in_it():
    runner = Runner.__new__(Runner)
    runner.module = object()  # a solution imported: its clock is no longer the harness's
    with pytest.raises(RuntimeError, match="after the import"):
        runner.do_describe_cost({"calls": 3, "bytes": [4096]}, b"")
    with pytest.raises(RuntimeError, match="after the import"):
        runner.do_reveal_cost({"buffers": "calibration", "places": []}, b"")
