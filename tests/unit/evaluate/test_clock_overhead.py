"""The judge's fixed cost of a batch: what is subtracted, and the calibration's trust boundary."""

from __future__ import annotations

import pytest
import torch

from kernelwright.evaluate.candidate_worker import Runner
from kernelwright.evaluate.clock import Overhead, Reads, count_reads, within_phases, write_slope
from kernelwright.evaluate.transport import Opened


def test_a_batch_costs_its_messages_writes_flush_descriptions_and_reads():
    o = Overhead(batch_ms=1.0, write_ms=0.1, flush_ms=0.5, describe_ms=0.02, map_ms=0.2,
                 sample_ms=0.1)
    # 100 calls of 2 outputs each, 3 calls read back: 3 allocations mapped, 6 outputs sampled
    reads = Reads(maps=3, samples=6)
    assert o.of(100, described=200, reads=reads) == pytest.approx(
        1.0 + 10.0 + 0.5 + 4.0 + 0.6 + 0.6)
    assert o.of(100) == pytest.approx(11.5)  # nothing described or read: the CPU's batches


def test_the_cost_splits_by_the_batch_s_phases():
    o = Overhead(batch_ms=1.0, write_ms=0.1, flush_ms=0.5, describe_ms=0.02, map_ms=0.2,
                 sample_ms=0.1, reveal_ms=0.01)
    write, turn, read = o.parts(100, described=200, reads=Reads(maps=3, samples=6))
    # the judge writes and flushes; the process's turn holds the messages, the reveals and the
    # descriptions; the judge reads back
    assert (write, turn, read) == pytest.approx((10.0 + 0.5, 1.0 + 1.0 + 4.0, 1.2))
    assert o.mapping(Reads(maps=3, samples=6)) == pytest.approx(0.6)  # of the read, the maps
    assert o.of(100, described=200, reads=Reads(maps=3, samples=6)) == pytest.approx(
        write + turn + read)


def test_revealing_each_call_s_regions_is_counted_per_call():
    o = Overhead(batch_ms=1.0, write_ms=0.1, flush_ms=0.5, reveal_ms=0.01)
    assert o.of(100) == pytest.approx(1.0 + 10.0 + 1.0 + 0.5)


def test_an_overhead_without_output_costs_subtracts_none():
    assert Overhead(1.0, 0.1, 0.5).of(10, described=10, reads=Reads(3, 0, 3, 0)) == (
        pytest.approx(2.5))


def test_the_process_is_not_asked_to_calibrate_once_the_solution_is_in_it():
    runner = Runner.__new__(Runner)
    runner.module = object()  # a solution imported: its clock is no longer the harness's
    with pytest.raises(RuntimeError, match="after the import"):
        runner.do_describe_cost({"calls": 3, "bytes": [4096]}, b"")
    with pytest.raises(RuntimeError, match="after the import"):
        runner.do_reveal_cost({"buffers": "calibration", "places": []}, b"")


def test_small_allocations_count_at_the_small_outputs_calibration_never_above_the_large():
    # calibrated on a 1 GB allocation (map 0.5, sample 0.3 ms) and on 4 KB outputs (0.1, 0.05)
    o = Overhead(batch_ms=0.0, write_ms=0.0, flush_ms=0.0, map_ms=0.5, sample_ms=0.3,
                 read_bytes=1 << 30, small_map_ms=0.1, small_sample_ms=0.05)
    assert o.of(3, reads=Reads(maps=1, samples=3)) == pytest.approx(0.5 + 0.9)
    assert o.of(3, reads=Reads(small_maps=1, small_samples=3)) == pytest.approx(0.1 + 0.15)
    # a small calibration that read slower than the large one is capped at the large one's
    odd = Overhead(0.0, 0.0, 0.0, map_ms=0.5, sample_ms=0.3, read_bytes=1 << 30,
                   small_map_ms=0.9, small_sample_ms=0.4)
    assert odd.of(1, reads=Reads(small_maps=1, small_samples=1)) == pytest.approx(0.8)


def _views(storage: torch.Tensor, *spans: tuple[int, int]) -> list[torch.Tensor]:
    return [storage[a:b] for a, b in spans]


def test_a_read_counts_each_allocation_mapped_once_and_each_output_it_sampled():
    big, other = torch.zeros(1000), torch.zeros(10)
    opened = Opened({big.data_ptr(): big.nbytes, other.data_ptr(): other.nbytes})
    # the outputs of a pair of calls: views of one large allocation (one mapping), and a small one
    outputs = [_views(big, (0, 500)), _views(big, (500, 1000)) + [other]]
    assert count_reads(outputs, opened, large_bytes=big.nbytes, seen_events=set()) == Reads(
        maps=1, small_maps=1, samples=2, small_samples=1)


def test_outputs_torch_still_had_mapped_count_no_mapping_and_small_samples():
    big = torch.zeros(1000)
    # nothing opened in this read (torch's cache served the storage): no mapping was made,
    # and the sample counts at the small outputs' cost, at most what it took
    assert count_reads([[big]], Opened(), big.nbytes, set()) == Reads(small_samples=1)


def test_empty_outputs_are_neither_mapped_nor_sampled():
    assert count_reads([[torch.zeros(0)]], Opened(), large_bytes=1, seen_events=set()) == Reads()


def test_only_events_never_opened_before_count():
    out = torch.zeros(8)
    seen: set[bytes] = {b"old"}
    opened = Opened({out.data_ptr(): out.nbytes}, [b"new", b"new", b"old"])
    # one new event (twice in this read), one the judge opened in an earlier batch
    assert count_reads([[out]], opened, out.nbytes, seen).events == 1
    assert seen == {b"old", b"new"}
    again = Opened({out.data_ptr(): out.nbytes}, [b"new"])
    assert count_reads([[out]], again, out.nbytes, seen).events == 0  # a process reusing it
    o = Overhead(0.0, 0.0, 0.0, map_ms=0.5, event_ms=0.2)
    assert o.mapping(Reads(maps=1, events=1)) == pytest.approx(0.7)


class _CalibratingReferee:
    """The judge's side of the read calibration against a process whose every share of its
    outputs comes with a new event: reading costs 2 ms a mapping, 1 ms more with the event, and
    the sampling costs nothing (the clock is faked)."""

    device = "cuda"

    def __init__(self, clock: list[float], small_event_s: float = 1e-3) -> None:
        self.clock, self.shares, self.events_seen = clock, 0, set()
        self.forgotten = False
        self.small_event_s = small_event_s  # an event's price with 4 KB outputs
        self.ref = type("Ref", (), {"output_bytes": [1 << 20]})()

    def ask(self, op: str, header: dict[str, object]) -> tuple[dict[str, object], bytes]:
        assert op == "describe_cost" and header["calls"] == 1
        self.shares += 1
        small = header["bytes"] == [4096]
        desc = {"handle": "h", "event_handle": f"e{self.shares}", "event_sync": True,
                "small": small}
        return {"describe_ms": 0.01, "calls": [[desc]]}, b""

    def read_calls(self, reply: dict, _payload: bytes, count: int, which: list[int],
                   opened: Opened) -> list[list[torch.Tensor]]:
        (desc,) = reply["calls"][0]
        out = torch.zeros(4)
        opened.allocations[out.data_ptr()] = 1 << 20
        if desc["event_handle"] and desc["event_sync"]:
            opened.events.append(desc["event_handle"].encode())
            self.clock[0] += self.small_event_s if desc["small"] else 1e-3
        self.clock[0] += 2e-3
        return [[out]]

    def forget(self) -> None:
        self.forgotten = True


def test_the_read_calibration_shares_anew_each_time_and_prices_the_event_apart(monkeypatch):
    from kernelwright.evaluate import clock as clock_module

    now = [0.0]
    monkeypatch.setattr(clock_module.time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(clock_module, "_sync", lambda cuda: None)
    monkeypatch.setattr(clock_module, "_sample", lambda t: None)
    r = _CalibratingReferee(now)
    costs = clock_module._read_cost(r, [4096])  # type: ignore[arg-type]
    assert r.shares == 2 * clock_module.READ_REPEATS  # a new share, and event, each time
    assert costs.map_ms == pytest.approx(2.0) and costs.event_ms == pytest.approx(1.0)
    assert costs.read_bytes == 1 << 20 and costs.describe_ms == pytest.approx(0.01)
    # the calibration's own events count as seen: a batch reusing one is not paid for it
    assert len(r.events_seen) == clock_module.READ_REPEATS and r.forgotten


def test_an_event_is_priced_at_the_lesser_of_its_two_calibrations(monkeypatch):
    from kernelwright.evaluate import clock as clock_module

    now = [0.0]
    monkeypatch.setattr(clock_module.time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(clock_module, "_sync", lambda cuda: None)
    monkeypatch.setattr(clock_module, "_sample", lambda t: None)
    costs = clock_module._output_costs(_CalibratingReferee(now, small_event_s=0.4e-3))  # type: ignore[arg-type]
    assert costs.event_ms == pytest.approx(0.4) and costs.map_ms == pytest.approx(2.0)


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

    def forget(self, models: list[str] | tuple[str, ...] = (),
               buffers: list[str] | tuple[str, ...] = ()) -> None:
        self.ask("forget", {"models": list(models), "buffers": list(buffers)})


def test_the_calibration_leaves_out_what_a_batch_does_off_the_clock():
    from kernelwright.evaluate.clock import measure_overhead

    o = measure_overhead(_SlowBookkeepingReferee())  # type: ignore[arg-type]
    # neither the messages of an empty batch nor writing a set holds the 30 ms before and after
    assert o.batch_ms < 15 and o.write_ms < 15
