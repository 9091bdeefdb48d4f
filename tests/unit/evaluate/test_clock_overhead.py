"""The judge's fixed cost of a batch: what is subtracted, and the calibration's trust boundary."""

from __future__ import annotations

import pytest

from kernelwright.evaluate.candidate_worker import Runner
from kernelwright.evaluate.clock import Overhead, _mapped_bytes, within_phases, write_slope


def test_a_batch_costs_its_messages_writes_flush_descriptions_and_reads():
    o = Overhead(batch_ms=1.0, write_ms=0.1, flush_ms=0.5, describe_ms=0.02, read_ms=0.3)
    # 100 calls of 2 outputs each, 3 calls read back
    assert o.of(100, described=200, read=6) == pytest.approx(1.0 + 10.0 + 0.5 + 4.0 + 1.8)
    assert o.of(100) == pytest.approx(11.5)  # nothing described or read: the CPU's batches


def test_the_cost_splits_by_the_batch_s_phases():
    o = Overhead(batch_ms=1.0, write_ms=0.1, flush_ms=0.5, describe_ms=0.02, read_ms=0.3,
                 reveal_ms=0.01)
    write, turn, read = o.parts(100, described=200, read=6)
    # the judge writes and flushes; the process's turn holds the messages, the reveals and the
    # descriptions; the judge reads back
    assert (write, turn, read) == pytest.approx((10.0 + 0.5, 1.0 + 1.0 + 4.0, 1.8))
    assert o.of(100, described=200, read=6) == pytest.approx(write + turn + read)


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


def test_outputs_smaller_than_the_calibration_s_are_counted_at_the_small_outputs_read():
    # reads calibrated on 1 GB outputs (0.6 ms) and on 4 KB ones (0.4 ms)
    o = Overhead(batch_ms=0.0, write_ms=0.0, flush_ms=0.0, read_ms=0.6, read_bytes=1 << 30,
                 small_read_ms=0.4)
    assert o.of(3, read=3, mapped_bytes=3 << 30, calls_read=3) == pytest.approx(1.8)
    # a broadcast view of a small storage maps faster than the calibration's gigabyte
    assert o.of(3, read=3, mapped_bytes=(3 << 30) - 1, calls_read=3) == pytest.approx(1.2)
    assert o.of(3, read=3) == pytest.approx(1.8)  # no descriptors (the CPU): as calibrated


def test_mapped_bytes_count_each_storage_of_the_picked_calls_once():
    def desc(handle: str, size: int) -> dict[str, object]:
        return {"handle": handle, "size_bytes": size}

    reply = {"calls": [[desc("a", 100)], [desc("b", 300), desc("b", 300)], [desc("c", 7)]]}
    assert _mapped_bytes(reply, [0, 1]) == 400  # two views of storage b: one mapping
    assert _mapped_bytes(reply, [2]) == 7
    assert _mapped_bytes({}, [0]) == -1


def test_every_batch_is_checked_for_precision_when_float64_runs_are_cheap():
    from kernelwright.evaluate.clock import PICKED, PRECISION_BUDGET_S, precision_every_batch

    assert precision_every_batch(0.001, 30)
    assert not precision_every_batch(PRECISION_BUDGET_S / PICKED / 30 * 1.1, 30)
    assert not precision_every_batch(None, 5)  # no float64 run (not fp32, or no memory for it)


def test_extra_precision_batches_stop_at_their_budget_and_the_chosen_one_stays():
    from kernelwright.evaluate.clock import PRECISION_BUDGET_S, PrecisionBatches

    batches = PrecisionBatches(every=True, chosen=7)
    wanted = []
    for b in range(10):
        wanted.append(batches.wanted(b))
        batches.spent(b, PRECISION_BUDGET_S / 3)  # each extra check costs a third
    assert wanted == [True] * 4 + [False] * 3 + [True] + [False] * 2
    one = PrecisionBatches(every=False, chosen=2)
    assert [one.wanted(b) for b in range(4)] == [False, False, True, False]


def test_a_candidate_is_raced_out_only_after_the_fewest_batches_and_clearly_slower():
    from kernelwright.evaluate.clock import MIN_BATCHES, RACE_MARGIN, raced_out

    slow = [RACE_MARGIN * 1.05] * MIN_BATCHES
    assert raced_out(slow, 1.0)
    assert not raced_out(slow[:-1], 1.0)  # too few batches to tell
    assert not raced_out([RACE_MARGIN * 0.99] * MIN_BATCHES, 1.0)  # within the margin
    assert not raced_out(slow, None)  # nothing to race against
    # one slow batch among fast ones moves the median, not the verdict
    assert not raced_out([1.0, 1.0, 9.0, 1.0, 1.0], 1.0)


def test_no_phase_is_subtracted_beyond_what_it_took_in_the_batch():
    # writing calibrated at 0.0817 ms a set, this batch's write took 0.0684: 0.0684 comes off
    assert within_phases((0.0817, 0.03, 0.003), (0.0684, 0.20, 0.007)) == pytest.approx(
        (0.0684, 0.03, 0.003))
    assert within_phases((0.05, 0.03, 0.003), (0.06, 0.2, 0.007)) == (0.05, 0.03, 0.003)


def test_a_sets_share_of_a_write_is_the_slope_over_several_sets():
    # lone writes 0.10-0.12 ms, eight sets 0.45-0.50: each set after the first adds 0.05
    assert write_slope([0.12, 0.10, 0.11], [0.50, 0.45, 0.47], 8) == pytest.approx(0.05)


def test_a_sets_share_is_never_more_than_a_lone_write_nor_negative():
    # a lone write waits for its own copy: no set of a batch costs more than that
    assert write_slope([0.1], [2.0], 2) == pytest.approx(0.1)
    assert write_slope([0.3], [0.2], 4) == 0.0
    assert write_slope([0.2, 0.3], [], 1) == pytest.approx(0.2)  # one set: no slope to take


class _SlowBookkeepingReferee:
    """A referee on the CPU whose process takes 30 ms to prepare a batch and to report on it:
    work a timed batch does off the clock, which its calibration must leave out too."""

    device = "cpu"

    def __init__(self) -> None:
        import torch

        # batches of one set: a set's share of the write is then the lone write itself
        plan = type("Plan", (), {"timing_sets": 1})()
        self.ref = type("Ref", (), {"plan": plan,
                                    "timing_inputs": lambda self, b, c: [torch.randn(4096)]})()

    def allocate(self, name: str, sets: list[list[object]]) -> list[list[object]]:
        import torch

        return [[torch.empty_like(v) if isinstance(v, torch.Tensor) else None for v in s]
                for s in sets]

    def ask(self, op: str, header: dict[str, object],
            spin_s: float = 0.0) -> tuple[dict[str, object], bytes]:
        import time

        if op in ("prepare", "release"):
            time.sleep(0.03)
        return ({"ok": True, "reveal_ms": 0.0} if op == "reveal_cost" else {"ok": True}), b""


def test_the_calibration_leaves_out_what_a_batch_does_off_the_clock():
    from kernelwright.evaluate.clock import measure_overhead

    o = measure_overhead(_SlowBookkeepingReferee())  # type: ignore[arg-type]
    # neither the messages of an empty batch nor writing a set holds the 30 ms before and after
    assert o.batch_ms < 15 and o.write_ms < 15
