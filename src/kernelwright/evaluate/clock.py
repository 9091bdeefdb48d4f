"""The judge's clock: timed calls in batches, on fresh inputs, proven finished by their outputs.

For each batch (``K`` calls, each on inputs of its own, drawn from seeds the process never saw
and new for every process judged):

    0. untimed: the judge draws the K input sets in its own memory, and for each input of each
       call a region to hold back (:mod:`~kernelwright.evaluate.reveal`)
    1. t0; the judge writes them into the process's buffers, decoys in the held-back regions and
       their true values in staging buffers, and flushes the L2 (a write larger than it): from
       the first input written, everything the process does is on the clock
    2. the process (its batch set up before t0) runs the K calls back to back, each after its
       regions are copied in (so no call can compute a later one's answer early), waits for its
       device and describes every call's outputs; its report of itself (its own CUDA-event time
       per call: a second opinion only) waits until after t1
    3. only now does the judge pick which calls it reads (the last and two others, at random),
       maps their outputs and copies a random sample of their elements; t1 once the copy is done.
       A value still missing at t1 (work finishing later, on a thread, a stream or in another
       process) shows up in that sample as a value that changed after t1 (the sample must
       equal, bit for bit, the outputs the judge then compares with the reference in full)
    4. untimed: the reference for the picked calls, every element compared, and the sample

The time of a call is ``(t1 - t0 - fixed) / K``, where ``fixed`` (the messages of a batch, writing
K input sets, the flush, revealing each call's regions, describing each output and mapping and
sampling the picked ones) was
measured before the candidate's code was imported: nothing the candidate does can make it
larger, and each part is the least of several repetitions, so subtracting it never makes a call
look faster than it is. Baselines are timed the same way, in a process of their own. On the
CPU the same protocol runs on the wall clock, labelled not representative.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kernelwright.evaluate import reveal, transport
from kernelwright.evaluate.correctness import compare_outputs, precision_shortfall
from kernelwright.hardware.energy import EnergyMeter, EnergyWindows, open_meter

if TYPE_CHECKING:
    from kernelwright.evaluate.referee import Referee

BATCH_TARGET_MS = 50.0  # per batch: the judge's own share stays a few percent of it
TOTAL_TARGET_MS = 300.0
MIN_BATCHES, MAX_BATCHES = 5, 30
# When the run ranks by energy: NVML's counter moves every ~100 ms, so its error over the
# windows falls as 1/sqrt(windows); about 5 s of windows keeps it near 10% for short batches
ENERGY_TOTAL_TARGET_MS, ENERGY_MAX_BATCHES = 5000.0, 120
CPU_SETS, CPU_BATCHES = 2, 3
# A search's candidate whose median after MIN_BATCHES batches is this much slower than the
# search's best so far stops being timed: more batches would only measure a loser precisely
RACE_MARGIN = 1.2
# The parts of the timing step in the verdict's phases
SETUP, DRAWING, CLOCKED, CHECKING = ("timing: set-up", "timing: drawing inputs", "timing",
                                     "timing: checks")
# Repetitions of each fixed cost's calibration, the least of which is kept: a set's share of
# a batch's write is the difference of two such minima, which five repetitions left noisy
# enough to move sub-millisecond calls by a fifth between evaluations. Fewer (never under
# five) where the repetitions take longer than CALIBRATION_S (large inputs).
CALIBRATION_REPEATS, MIN_CALIBRATION_REPEATS, CALIBRATION_S = 15, 5, 1.0
# Input sets written at once to calibrate a set's share of a batch's write (fewer where the
# memory plan holds fewer)
CALIBRATION_SETS = 8
PICKED = 3  # calls read per batch (the last one and two chosen at random)
# The judge waits for a batch's reply without sleeping for up to this long (a batch is meant to
# take BATCH_TARGET_MS): a wake-up from a sleep of milliseconds is on the clock, and the empty
# batch of the calibration, answered at once, would not have held it
SPIN_S = 0.25
SAMPLE = 512  # elements per output copied at t1
PRECISION_BUDGET_S = 0.5  # judge's time for float64 checks of every batch (else one batch)
_rng = random.SystemRandom()


@dataclass(frozen=True, slots=True)
class Reads:
    """What reading a batch's picked outputs back took: the allocations the judge mapped and
    the outputs it sampled, each counted large (an allocation at least as large as the
    calibration's, or an output lying in one) or small, and the process's IPC events it opened
    for the first time."""

    maps: int = 0
    small_maps: int = 0
    samples: int = 0
    small_samples: int = 0
    events: int = 0


@dataclass(frozen=True, slots=True)
class Overhead:
    """The judge's fixed costs, measured before the candidate's code is imported (ms)."""

    batch_ms: float  # the messages of an empty batch
    write_ms: float  # what one more input set adds to writing a batch's sets
    flush_ms: float  # flushing the L2
    describe_ms: float = 0.0  # the process describing one output (a CUDA IPC handle)
    map_ms: float = 0.0  # the judge mapping one allocation of read_bytes (a CUDA IPC open)
    sample_ms: float = 0.0  # the judge sampling one output lying in such an allocation
    reveal_ms: float = 0.0  # the process copying a call's held-back regions in
    # the judge opening an IPC event of the process it has not opened before (each share of an
    # output comes with a new one, which the judge's stream then waits on)
    event_ms: float = 0.0
    # Mapping costs more the larger the allocation: map_ms and sample_ms were calibrated on an
    # allocation of read_bytes holding a timed call's outputs; smaller allocations (a broadcast
    # view of a small storage) count at small_map_ms and small_sample_ms, calibrated on 4 KB
    read_bytes: int = 0
    small_map_ms: float = 0.0
    small_sample_ms: float = 0.0

    def of(self, calls: int, described: int = 0, reads: Reads | None = None) -> float:
        """What a batch of ``calls`` calls costs the judge at least, its calls' outputs
        ``described`` in all and ``reads`` of them mapped and sampled."""
        return sum(self.parts(calls, described, reads))

    def parts(self, calls: int, described: int = 0,
              reads: Reads | None = None) -> tuple[float, float, float]:
        """:meth:`of` by the batch's phases: (writing and flushing, the process's turn,
        reading back)."""
        r = reads or Reads()
        read = self.mapping(r) + (r.samples * self.sample_ms
                                  + r.small_samples * min(self.sample_ms, self.small_sample_ms))
        return (calls * self.write_ms + self.flush_ms,
                self.batch_ms + calls * self.reveal_ms + described * self.describe_ms, read)

    def mapping(self, reads: Reads) -> float:
        """The part of reading back that is mapping the allocations (their events included)."""
        return (reads.maps * self.map_ms
                + reads.small_maps * min(self.map_ms, self.small_map_ms)
                + reads.events * self.event_ms)


def count_reads(outputs: list[list[Any]], opened: transport.Opened, large_bytes: int,
                seen_events: set[bytes]) -> Reads:
    """The mappings, events and samples of a read: ``opened`` holds what the judge mapped and
    opened, ``outputs`` the tensors it sampled (those with elements); ``seen_events`` the
    events opened before, which count for nothing (and gains this read's). An output whose
    storage torch still had mapped lies in no allocation opened here and counts as small (what
    it cost is at least that)."""
    allocations = opened.allocations
    maps = sum(1 for size in allocations.values() if size >= large_bytes)
    samples = small_samples = 0
    for outs in outputs:
        for o in outs:
            if not o.numel():
                continue
            ptr = o.untyped_storage().data_ptr()
            large = any(start <= ptr < start + size and size >= large_bytes
                        for start, size in allocations.items())
            samples += large
            small_samples += not large
    new_events = set(opened.events) - seen_events
    seen_events |= new_events
    return Reads(maps, len(allocations) - maps, samples, small_samples, len(new_events))


@dataclass(slots=True)
class TimedBuffers:
    """A timed batch's input buffers in the process (as the judge maps them) and the staging
    buffers of their held-back regions."""

    name: str
    inputs: list[list[Any]]
    staging: list[list[Any]]

    @classmethod
    def allocate(cls, r: Referee, name: str, template: list[Any], count: int) -> TimedBuffers:
        inputs = r.allocate(name, [template] * count)
        staging = r.allocate(_staging(name), [reveal.stage_specs(template)] * count)
        return cls(name, inputs, staging)

    def copies(self, sets: list[list[Any]], places: list[Any], decoys: list[Any],
               which: list[int]) -> list[tuple[Any, Any]]:
        """(destination, source) of each copy that writes the sets into buffers ``which``: true
        values but for the held-back regions, which get their decoys, and the true regions
        into the staging buffers. Views only, made before the clock starts: the clock then
        holds the copies and nothing of the judge's bookkeeping."""
        pairs: list[tuple[Any, Any]] = []
        for k, values in zip(which, sets, strict=True):
            pairs += [(buf, v) for buf, v in zip(self.inputs[k], values, strict=True)
                      if buf is not None]
        for k, values, spots in zip(which, sets, places, strict=True):
            pairs += [(buf, v) for buf, v in zip(self.staging[k], reveal.staged(values, spots),
                                                 strict=True) if buf is not None]
        for k, values, spots in zip(which, decoys, places, strict=True):
            for buf, fake, spot in zip(self.inputs[k], values, spots, strict=True):
                if buf is not None and spot is not None:
                    pairs.append((reveal.region(buf, spot[0], spot[1]), fake))
        return pairs

    @staticmethod
    def write(r: Referee, copies: list[tuple[Any, Any]]) -> None:
        """Make the :meth:`copies`, in order, and wait for them."""
        for destination, source in copies:
            destination.copy_(source)
        _sync(r.device == "cuda")  # written before the process reads them

    def forget(self, r: Referee) -> None:
        """The buffers go back to the process's device, the judge's mappings of them first
        (the caller holds no other view of them)."""
        self.inputs, self.staging = [], []
        r.forget(buffers=[self.name, _staging(self.name)])


def _staging(name: str) -> str:
    return f"{name}:reveal"


def _draw(sets: list[list[Any]]) -> tuple[list[Any], list[Any]]:
    """Untimed, in the judge's memory: each call's held-back regions and their decoys."""
    places = [reveal.draw(s) for s in sets]
    return places, [reveal.decoys(s, p) for s, p in zip(sets, places, strict=True)]


def measure_overhead(r: Referee) -> Overhead:
    """The minimum of a few repetitions of each fixed cost (see :class:`Overhead`)."""
    import torch

    cuda = r.device == "cuda"
    flush = _flush_buffer() if cuda else None
    batch, write, flushing = [], [], []
    values = r.ref.timing_inputs(-1, 0)
    # Several sets where the memory plan lets a batch hold them: a batch writes its K sets in
    # one go, the copies of one set overlapping the host's work on the next, so a set costs it
    # the slope of the write's time over the sets written, not a lone write with its own wait
    # (subtracting that K times made calls of a fraction of a millisecond read too fast). The
    # slope over two sets fell well short of a long batch's: over more it comes closer, and a
    # batch's write never has more subtracted than it took (within_phases).
    count = max(1, min(r.ref.plan.timing_sets if r.ref.plan else 2, CALIBRATION_SETS))
    buffers = TimedBuffers.allocate(r, "calibration", values, count)
    places, decoys = _draw([values] * count)
    lone = buffers.copies([values], places[:1], decoys[:1], [0])
    every = buffers.copies([values] * count, places, decoys, list(range(count)))
    many = []
    started = time.perf_counter()
    for rep in range(CALIBRATION_REPEATS):
        if rep >= MIN_CALIBRATION_REPEATS and time.perf_counter() - started > CALIBRATION_S:
            break
        r.ask("prepare", {"model": "", "buffers": "", "reveal": "", "sets": []})
        _sync(cuda)
        t0 = time.perf_counter()
        r.ask("batch", {"places": []}, spin_s=SPIN_S if cuda else 0.0)
        _sync(cuda)
        t1 = time.perf_counter()
        r.ask("release", {})  # its report, as a timed batch's, after the clock
        t_write = time.perf_counter()
        buffers.write(r, lone)
        t2 = time.perf_counter()
        if flush is not None:
            flush.zero_()
        _sync(cuda)
        batch.append(t1 - t0)
        write.append(t2 - t_write)
        flushing.append(time.perf_counter() - t2)
        if count > 1:
            t3 = time.perf_counter()
            buffers.write(r, every)
            many.append(time.perf_counter() - t3)
    per_set = write_slope(write, many, count)
    reply, _ = r.ask("reveal_cost", {"buffers": "calibration", "places": places[0]})
    reveal_ms = reply.get("reveal_ms")
    if not isinstance(reveal_ms, int | float) or not math.isfinite(reveal_ms) or reveal_ms < 0:
        reveal_ms = 0.0  # no calibration: nothing is subtracted for it
    del lone, every  # views of the buffers
    buffers.forget(r)
    del buffers, values, decoys
    costs = _output_costs(r) if cuda else OutputCosts()
    if flush is not None:
        torch.cuda.empty_cache()
    return Overhead(min(batch) * 1e3, per_set * 1e3, min(flushing) * 1e3, costs.describe_ms,
                    costs.map_ms, costs.sample_ms, float(reveal_ms), costs.event_ms,
                    costs.read_bytes, costs.small_map_ms, costs.small_sample_ms)


def write_slope(lone: list[float], many: list[float], count: int) -> float:
    """What one more input set adds to a batch's write: the least write of ``count`` sets less
    the least lone write, over the ``count - 1`` sets more (each term the least of its
    repetitions), never more than a lone write (which carries a wait of its own), never
    negative. With one set there is no slope: the lone write."""
    if count < 2 or not many:
        return min(lone)
    slope = (min(many) - min(lone)) / (count - 1)
    return max(0.0, min(slope, min(lone)))


@dataclass(frozen=True, slots=True)
class OutputCosts:
    """The calibration of a batch's outputs (see :func:`_output_costs`), ms and bytes."""

    describe_ms: float = 0.0
    map_ms: float = 0.0
    sample_ms: float = 0.0
    event_ms: float = 0.0
    read_bytes: int = 0
    small_map_ms: float = 0.0
    small_sample_ms: float = 0.0


def _output_costs(r: Referee) -> OutputCosts:
    """The process's own time to describe one output (it is still the harness's own code,
    before the import), and the judge's to map one allocation, to open the event a share
    comes with and to sample one output, as a timed batch does: the least over a few
    repetitions, on a single call's outputs as views of one allocation of a timed call's sizes
    (mapping a larger allocation costs more: at gigabyte outputs a calibration on small ones
    left part of a millisecond a call on the clock), and again on outputs of 4 KB, for outputs
    that lie in smaller allocations. A batch counts the allocations it really mapped, the new
    events it opened and the outputs it sampled (:func:`count_reads`): outputs sharing an
    allocation share its mapping, and nothing counts twice, so a batch never has more
    subtracted than its reads cost."""
    sizes = [b for b in r.ref.output_bytes if b] or [SMALL_OUTPUT]
    large = _read_cost(r, sizes)
    small = _read_cost(r, [SMALL_OUTPUT] * len(sizes))
    # an event is an event whatever the allocation it came with: the lesser of the two prices
    return OutputCosts(large.describe_ms, large.map_ms, large.sample_ms,
                       min(large.event_ms, small.event_ms), large.read_bytes, small.map_ms,
                       small.sample_ms)


SMALL_OUTPUT = 4096  # bytes
READ_REPEATS = 5


def _read_cost(r: Referee, sizes: list[int]) -> OutputCosts:
    """The costs of :class:`OutputCosts` on a single call's outputs of ``sizes`` bytes (its
    ``small_*`` fields unset). Each repetition has the process share its outputs anew, as each
    batch does, so that each comes with an event the judge has never opened (opening one again
    may cost less); half the repetitions map them without waiting on it, so that the event's
    share is the difference."""
    describe, maps, waits, samples, allocation = [], [], [], [], 0
    for rep in range(2 * READ_REPEATS):
        reply, _ = r.ask("describe_cost", {"calls": 1, "bytes": sizes})
        d = reply.get("describe_ms")
        if isinstance(d, int | float) and math.isfinite(d) and d >= 0:
            describe.append(float(d))  # else no calibration: nothing is subtracted for it
        with_event = rep % 2 == 1
        if not with_event:
            reply = {"calls": [[_without_event(x) for x in call] if isinstance(call, list)
                               else call for call in reply.get("calls") or []]}
        opened = transport.Opened()
        _sync(True)
        t0 = time.perf_counter()
        outputs = r.read_calls(reply, b"", 1, [0], opened)
        mapped = time.perf_counter()
        taken = [_sample(o) for outs in outputs for o in outs]
        _sync(True)
        t1 = time.perf_counter()
        if opened.allocations:  # none where torch still held the mapping: nothing was timed
            each = (mapped - t0) / len(opened.allocations)
            if with_event and len(opened.events) == len(opened.allocations):
                waits.append(each)
            elif not with_event:
                maps.append(each)
            allocation = max(allocation, *opened.allocations.values())
        samples.append((t1 - mapped) / max(1, len(taken)))
        r.events_seen.update(opened.events)  # a batch's event with such a handle counts nothing
        del outputs, taken
    r.forget()  # the process's calibration tensors go back to the device
    map_ms = min(maps, default=0.0) * 1e3
    event_ms = max(0.0, min(waits) * 1e3 - map_ms) if waits and maps else 0.0
    return OutputCosts(min(describe, default=0.0), map_ms, min(samples) * 1e3, event_ms,
                       allocation if maps else 0)


def _without_event(desc: Any) -> Any:
    """A descriptor with its event left out: mapped without waiting on the process."""
    if not isinstance(desc, dict):
        return desc
    return desc | {"event_handle": None, "event_sync": False}


def time_batches(r: Referee) -> dict[str, Any]:
    """Time the process's model; the result goes into the report's ``timing``."""
    ref = r.ref
    cuda = r.device == "cuda"
    # The timing step's seconds by part (the verdict's phases): its set-up (the timing model,
    # the buffers, giving both back), drawing each batch's inputs and checking its read-back
    # calls (both untimed), and the batches on the clock ("timing"), probe batches included
    r.step("timing: first batch", kind=SETUP)
    r.ask("model", {"name": "timing", "seed": ref.model_seed_timing},
          transport.pack(ref.init_inputs) if ref.init_inputs else b"")
    flush = _flush_buffer() if cuda else None
    batch = 0
    checked: list[dict[str, Any]] = []
    meter, no_meter = open_meter(torch_device()) if cuda else (None, "")
    windows = EnergyWindows(meter) if meter is not None else None
    if cuda:
        # A batch of one, twice: how long a single call takes, to size the batches.
        probe = TimedBuffers.allocate(r, "probe", ref.timing_inputs(0, 0), 1)
        estimates = []
        for _ in range(2):
            result = _batch(r, probe, batch, 1, flush, precision=False)
            # Sizing only (no result depends on it): the process's own event time, when it
            # gives one, is free of the judge's fixed cost, which would make batches too short.
            estimates.append(min(result.events) if result.events else result.ms)
            checked += result.entries
            batch += 1
        probe.forget(r)
        del probe
        per_call = max(min(estimates), 1e-4)
        plan_sets = ref.plan.timing_sets if ref.plan else 2
        k = int(min(plan_sets, max(1, math.ceil(BATCH_TARGET_MS / per_call))))
        total, most = ((ENERGY_TOTAL_TARGET_MS, ENERGY_MAX_BATCHES)
                       if windows is not None and ref.req.energy
                       else (TOTAL_TARGET_MS, MAX_BATCHES))
        n = int(min(most, max(MIN_BATCHES, math.ceil(total / (k * per_call)))))
    else:  # the interpreter's times say nothing; a few batches check the protocol's outputs
        k, n = CPU_SETS, CPU_BATCHES
    r.count_as(SETUP)
    buffers = TimedBuffers.allocate(r, "timing", ref.timing_inputs(batch, 0), k)
    samples: list[float] = []
    events: list[float] = []
    parts: dict[str, list[float]] = {}  # where each call's time went (CallBreakdown's parts)
    launches: list[float] = []
    launch_names: list[dict[str, float]] = []
    launch_programs: list[dict[str, float]] = []
    aliased = False
    # A raced candidate stops before its planned batches, perhaps before the one chosen for
    # the float64 check: it is then slower than a candidate already judged, so it can never be
    # a search's best, and every candidate that can be keeps the check at a batch chosen among
    # all of them (a candidate counting its calls cannot tell which)
    race_ms = r.job.race_ms if cuda else None
    precision = PrecisionBatches(precision_every_batch(ref.float64_s, n), _rng.randrange(n))
    raced: dict[str, Any] | None = None
    last_s = 0.0
    b = 0
    while b < n:
        if b >= 2 and r.time_left() < 2 * last_s + 2:
            break  # out of time: the batches so far are the result
        started = time.monotonic()
        calls = 1 if aliased else k
        r.step(f"timing: batch {b + 1}/{n} ({calls} calls)")
        result = _batch(r, buffers, batch, calls, flush,
                        precision=not cuda or precision.wanted(b), meter=meter)
        checked += result.entries
        precision.spent(b, result.checks_s)
        batch += 1
        last_s = time.monotonic() - started
        if result.aliased and not aliased:
            # Calls of one batch return the same memory (a preallocated output): only the last
            # call of a batch can be checked, so from now on every batch is a single call.
            aliased = True
            n = max(n, MIN_BATCHES)
            continue
        samples.append(result.ms)
        for part, ms in result.parts.items():
            if ms is not None:
                parts.setdefault(part, []).append(ms / calls)
        if windows is not None and result.energy is not None:
            windows.add(*result.energy)
        events += result.events
        if result.launches is not None:
            launches.append(result.launches / calls)
        if result.launch_names is not None:
            launch_names.append({name: count / calls
                                 for name, count in result.launch_names.items()})
        if result.launch_programs is not None:
            launch_programs.append({name: count / calls
                                    for name, count in result.launch_programs.items()})
        b += 1
        if b < n and raced_out(samples, race_ms):
            raced = {"against_ms": race_ms, "margin": RACE_MARGIN, "planned_batches": n}
            break
    r.count_as(SETUP)
    r.forget(models=["timing"])
    buffers.forget(r)
    calls = 1 if aliased else k
    what = (f"batches of {calls} call(s)" + (" (its calls share output memory)" if aliased else "")
            + " on fresh inputs, the judge's fixed cost per batch (measured before import) "
            "subtracted")
    method = (
        f"judge's clock around {what}, L2 flushed before each batch, up to {PICKED} calls per "
        f"batch read back; median of {len(samples)} batches"
        if cuda else
        f"CPU wall clock in the judge around {what}; median of {len(samples)} batches (not "
        "representative of a GPU)"
    )
    return {
        "samples_ms": samples,
        "calls_per_batch": calls,
        "batches": len(samples),
        "events_ms": events,
        **parts,
        "launches_per_call": launches,
        "launch_names_per_call": launch_names,
        "launch_programs_per_call": launch_programs,
        "overhead_ms": (r.overhead.of(calls, calls, Reads(maps=min(PICKED, calls),
                                                          samples=min(PICKED, calls)))
                        if r.overhead else 0.0),
        "aliased_outputs": aliased,
        "method": method,
        "checked": checked,
        "energy": windows.summary(statistics.median(samples)) if windows and samples else None,
        "energy_note": no_meter,
        "raced": raced,
    }


@dataclass(slots=True)
class _Batch:
    ms: float
    entries: list[dict[str, Any]]
    events: list[float]
    launches: float | None
    launch_names: dict[str, int] | None  # launches per kernel name in the whole batch
    launch_programs: dict[str, int] | None  # programs (grid size) per kernel name, likewise
    aliased: bool
    energy: tuple[float, float, float] | None = None  # counter before, after (mJ); window ms
    # Where the batch's time went, ms in all (see records.CallBreakdown): the judge's phases
    # and calibrated fixed cost, and what the process reported of itself
    parts: dict[str, float | None] = field(default_factory=dict)
    checks_s: float = 0.0  # the judge comparing the read-back calls (untimed)


@dataclass(slots=True)
class PrecisionBatches:
    """Which timed batches a GPU's precision check reads against float64: one chosen at random,
    and every batch while ``every`` holds (a call lowered to half precision in some batches
    only cannot escape). The extra checks stop once they have taken PRECISION_BUDGET_S: the
    estimate from the trials leaves out building a float64 model for each check."""

    every: bool
    chosen: int
    spent_s: float = 0.0

    def wanted(self, batch: int) -> bool:
        return self.every or batch == self.chosen

    def spent(self, batch: int, seconds: float) -> None:
        if self.every and batch != self.chosen:
            self.spent_s += seconds
            self.every = self.spent_s <= PRECISION_BUDGET_S


def raced_out(samples: list[float], race_ms: float | None) -> bool:
    """A candidate timed in ``samples`` (ms a call, one a batch) is clearly slower than a
    search's best ``race_ms``: its median after at least MIN_BATCHES batches is more than
    RACE_MARGIN times it. Never before MIN_BATCHES (one slow batch is no verdict)."""
    return bool(race_ms and len(samples) >= MIN_BATCHES
                and statistics.median(samples) > RACE_MARGIN * race_ms)


def precision_every_batch(float64_s: float | None, batches: int) -> bool:
    """Whether float64 checks of every batch's read-back calls fit PRECISION_BUDGET_S, given
    what a trial's float64 run took."""
    return float64_s is not None and float64_s * PICKED * batches <= PRECISION_BUDGET_S


def _batch(
    r: Referee, buffers: TimedBuffers, batch: int, k: int, flush: Any, *, precision: bool,
    meter: EnergyMeter | None = None,
) -> _Batch:
    ref = r.ref
    cuda = r.device == "cuda"
    r.count_as(DRAWING)
    sets = [ref.timing_inputs(batch, call) for call in range(k)]  # untimed, judge memory only
    places, decoys = _draw(sets)
    copies = buffers.copies(sets, places, decoys, list(range(k)))
    r.ask("prepare", {"model": "timing", "buffers": buffers.name, "sets": list(range(k)),
                      "reveal": _staging(buffers.name)})
    _sync(cuda)
    r.count_as(CLOCKED)
    e0 = meter.millijoules() if meter is not None else 0.0  # read outside the window
    t0 = time.perf_counter()
    buffers.write(r, copies)
    if flush is not None:
        flush.zero_()
    _sync(cuda)
    written = time.perf_counter()
    reply, payload = r.ask("batch", {"places": places}, spin_s=SPIN_S if cuda else 0.0)
    replied = time.perf_counter()
    picked = sorted({k - 1, *_rng.sample(range(k - 1), min(PICKED - 1, k - 1))})
    opened = transport.Opened()
    outputs = r.read_calls(reply, payload, k, picked, opened)
    mapped = time.perf_counter()
    taken: list[list[Any]] = (
        [[_sample(o) for o in outs] for outs in outputs] if cuda
        else [[None for _ in outs] for outs in outputs])
    _sync(cuda)
    t1 = time.perf_counter()
    energy = ((e0, meter.millijoules(), (t1 - t0) * 1e3) if meter is not None else None)
    checks_from = time.perf_counter()
    r.count_as(CHECKING)
    reused = _reused(reply, payload, k, picked, cuda)
    entries = []
    for call, outs, samples in zip(picked, outputs, taken, strict=True):
        if call in reused:
            continue  # a later call of the batch wrote into the same memory
        # Every call read back in a precision batch gets the float64 comparison: a candidate
        # that lowers its precision in some timed calls cannot tell which ones are looked at.
        exp = ref.timing_expected(sets[call], exact=precision)
        if exp.ref_error is None:
            exp.ref_error = ref.timing_ref_errors()
        outs = r.take(outs)
        # a user's --atol applies exactly: no arbitration then (widen_atol is off)
        arbitrate = ref.req.widen_atol
        entry = compare_outputs(exp.outputs, outs, ref.req.tolerance, exp.ref_error,
                                exp.exact if arbitrate else None)
        if arbitrate and not entry["ok"] and entry["differ"] and exp.exact is None:
            # elements outside the tolerance: arbitrated by the float64 answer (correctness)
            exact = ref.exact_outputs(ref.model_seed_timing, sets[call])
            if exact is not None:
                entry = compare_outputs(exp.outputs, outs, ref.req.tolerance, exp.ref_error,
                                        exact)
        entry["label"] = f"timed call {call + 1} of batch {batch + 1}"
        if entry["ok"]:
            entry["late"] = _late(samples, outs)
            if precision:
                entry["precision"] = precision_shortfall(outs, exp.exact, exp.outputs)
        entries.append(entry)
    del sets, decoys, copies
    checks_s = time.perf_counter() - checks_from
    # Outputs counted from the picked calls, which are compared with the reference: each call
    # of the batch describes as many; what was read is what the judge mapped and sampled
    each = min((sum(1 for o in outs if o.numel()) for outs in outputs), default=0)
    reads = (count_reads(outputs, opened, r.overhead.read_bytes, r.events_seen)
             if cuda and r.overhead else None)
    # Unmapped before the process may free its outputs, and so that the next batch's reads map
    # afresh, as they are counted (the loop's last call holds them too; picked is never empty)
    del outputs, taken, outs, samples
    # The process's report of itself, made once the clock has stopped (a diagnostic)
    report, _ = r.ask("release", {})
    calibrated = (r.overhead.parts(k, k * each, reads) if r.overhead else (0.0, 0.0, 0.0))
    calibrated = within_phases(calibrated, ((written - t0) * 1e3, (replied - written) * 1e3,
                                            (t1 - replied) * 1e3))
    fixed = float(sum(calibrated))
    ms = max(0.0, (t1 - t0) * 1e3 - fixed) / k
    events = report.get("events_ms")
    valid = isinstance(events, list) and all(
        isinstance(e, int | float) and math.isfinite(e) and e >= 0 for e in events)
    times = [float(e) for e in events] if valid and isinstance(events, list) else []
    count = report.get("launches")
    launches = float(count) if isinstance(count, int) and count >= 0 else None
    parts: dict[str, float | None] = {
        "write_ms": (written - t0) * 1e3, "turn_ms": (replied - written) * 1e3,
        "read_ms": (t1 - replied) * 1e3, "map_ms": (mapped - replied) * 1e3,
        "fixed_ms": fixed, "write_fixed_ms": calibrated[0],
        "turn_fixed_ms": calibrated[1], "read_fixed_ms": calibrated[2],
        "map_fixed_ms": min(calibrated[2], r.overhead.mapping(reads)) if reads else None,
        "mapped_mb": sum(opened.allocations.values()) / 1e6 if cuda else None}
    parts |= {key: _reported_ms(report.get(key))
              for key in ("span_ms", "issue_ms", "forward_ms", "prelude_ms", "setup_ms", "run_ms",
                          "reply_ms", "busy_ms", "device_allocs", "alloc_retries")}
    return _Batch(ms, entries, times, launches, _per_name(report.get("launch_names")),
                  _per_name(report.get("launch_programs")), bool(reused), energy, parts,
                  checks_s)


def within_phases(calibrated: tuple[float, float, float],
                  measured: tuple[float, float, float]) -> tuple[float, float, float]:
    """Each phase's calibrated fixed cost (writing, the process's turn, reading back), never
    more than the phase took in this batch: the judge's own work in a phase cannot have cost
    more than the whole phase, and subtracting more would make the calls look faster than
    they ran (a calibration's minima can land above a batch's phase by chance)."""
    write, turn, read = (min(c, m) for c, m in zip(calibrated, measured, strict=True))
    return write, turn, read


def _reported_ms(value: Any) -> float | None:
    """A duration (or a count) the process reported of itself: a diagnostic, never a result."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value) if value >= 0 else None
    return None


def _per_name(counted: Any) -> dict[str, int] | None:
    """A reply's counts per kernel name, or None where they are malformed."""
    valid = isinstance(counted, dict) and all(
        isinstance(key, str) and isinstance(n, int) and n >= 0 for key, n in counted.items())
    return counted if valid else None


def _reused(reply: dict[str, Any], payload: bytes, k: int, picked: list[int],
            cuda: bool) -> set[int]:
    """Picked calls whose output memory a later call of the batch also returned (so it holds
    the later call's answer, legitimately)."""
    keys: list[set[str]] = []
    if cuda:
        for descs in reply.get("calls") or []:
            keys.append({f"{d.get('handle')}:{d.get('offset_bytes')}" for d in descs
                         if isinstance(d, dict)} if isinstance(descs, list) else set())
    else:
        data = transport.unpack(payload)
        for outs in data if isinstance(data, list) else []:
            keys.append({str(o.untyped_storage().data_ptr()) for o in outs}
                        if isinstance(outs, list) else set())
    if len(keys) != k:
        return set()
    later: set[str] = set()
    reused: set[int] = set()
    for call in range(k - 1, -1, -1):
        if call in picked and keys[call] & later:
            reused.add(call)
        later |= keys[call]
    return reused


def _sample(t: Any) -> tuple[Any, Any] | None:
    """Copy ``SAMPLE`` random elements of ``t`` now: (their row-major indices, on the CPU; their
    values, on ``t``'s device). The positions are drawn by the judge and turned into storage
    offsets on the CPU, so the copy is one gather from the storage (a launch, not the handful
    an index per dimension takes): inside the timed window it costs the same whatever the
    output's rank or strides."""
    import torch

    n = t.numel()
    if n == 0:
        return None
    if t.is_conj() or t.is_neg():  # lazy bits the raw storage does not hold: apply them
        t = t.resolve_conj().resolve_neg()
    idx = torch.randint(0, n, (min(SAMPLE, n),), generator=_cpu_generator())
    offsets = torch.full_like(idx, t.storage_offset())
    rest = idx
    for size, stride in zip(reversed(t.shape), reversed(t.stride()), strict=True):
        offsets += (rest % size) * stride
        rest = rest // size
    storage = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage())
    return idx, storage[offsets.to(t.device)]


def _cpu_generator() -> Any:
    """A generator seeded from the system's entropy (the positions sampled stay unpredictable
    to the process judged, and independent of torch's global seed, which tasks set)."""
    import torch

    return torch.Generator().manual_seed(_rng.getrandbits(63))


def _late(samples: list[Any], final: list[Any]) -> str:
    """Empty when the elements copied at t1 already held the values the outputs end with; else
    what changed after the call had returned. The final outputs are compared with the
    reference in full (with the tolerance and the fp32 reference-error widening), so a sample
    equal to them bit for bit (NaN equal to NaN) was already the answer: comparing the sample
    with the reference under the bare tolerance would refuse honest kernels whose rounding the
    widening admits."""
    import torch

    for i, (got, out) in enumerate(zip(samples, final, strict=False)):
        if got is None:
            continue
        idx, values = got
        later = out.reshape(-1)[idx.to(out.device)].to(values.device)
        same = (values == later) | (torch.isnan(values) & torch.isnan(later)) \
            if values.is_floating_point() or values.is_complex() else values == later
        if not bool(same.all()):
            k = int((~same).nonzero()[0, 0])
            return (f"output {i}: {int((~same).sum())} of {same.numel()} elements sampled when "
                    f"the call had returned changed afterwards (first at flat index "
                    f"{int(idx[k])}: {values[k].item():.6g}, then {later[k].item():.6g}); the "
                    "work finished later")
    return ""


def torch_device() -> int:
    import torch

    return int(torch.cuda.current_device())


def _flush_buffer() -> Any:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2 = int(getattr(props, "L2_cache_size", 64 << 20) or 64 << 20)
    return torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda")


def _sync(cuda: bool) -> None:
    if cuda:
        import torch

        torch.cuda.synchronize()
