"""The judge's clock: timed calls in batches, on fresh inputs, proven finished by their outputs.

For each batch (``K`` calls, each on inputs of its own, drawn from seeds the process never saw):

    1. the judge writes the K input sets into the process's buffers, flushes the L2 (a write
       larger than it) and waits for the device: nothing of the batch is cached or computed yet
    2. t0; the process runs the K calls back to back and waits for its device; it reports its
       own CUDA-event time per call (a second opinion, never the result)
    3. the judge picks which calls to read, at random (always the last one, two others): the
       process cannot know which of its calls will be checked
    4. the judge maps those outputs and copies a random sample of their elements; t1 once the
       copy is done. A value still missing at t1 (work finishing later, on a thread, a stream or
       in another process) shows up as wrong in that sample
    5. untimed: the judge computes the reference for the picked calls and compares every element,
       and the sample taken at t1

The time of a call is ``(t1 - t0) / K``: it includes the process's launches, its device work on
any stream, and the judge's fixed cost of a batch (two messages and the sample), which ``K`` keeps
small. Baselines are timed the same way, in a process of their own. Statistics come from the
per-batch values. On the CPU the same protocol runs on the wall clock, labelled not representative.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kernelwright.evaluate import transport
from kernelwright.evaluate.correctness import compare_outputs, precision_shortfall
from kernelwright.evaluate.reference import Expected

if TYPE_CHECKING:
    from kernelwright.evaluate.referee import Referee

BATCH_TARGET_MS = 50.0  # per batch: the judge's fixed cost stays a few percent of it
TOTAL_TARGET_MS = 300.0
MIN_BATCHES, MAX_BATCHES = 5, 30
CPU_SETS, CPU_BATCHES = 2, 3
PICKED = 3  # calls read per batch (the last one and two chosen at random)
SAMPLE = 512  # elements per output copied at t1
_rng = random.SystemRandom()


def measure_overhead(r: Referee) -> float:
    """The judge's fixed cost of one batch, in ms: the same messages with no call in them.

    Measured before the candidate's code is imported, so nothing the candidate does can make it
    larger; it is less than a real batch's fixed cost (no output is read), so subtracting it
    never makes a call look faster than it is.
    """
    import torch

    cuda = r.device == "cuda"
    times = []
    for _ in range(7):
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        r.ask("batch", {"model": "", "buffers": "", "sets": []})
        r.ask("share", {"calls": []})
        if cuda:
            torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(statistics.median(times))


def time_batches(r: Referee) -> dict[str, Any]:
    """Time the process's model; the result goes into the report's ``timing``."""
    ref = r.ref
    cuda = r.device == "cuda"
    r.step("timing: first batch")
    r.ask("model", {"name": "timing", "seed": ref.model_seed_timing},
          transport.pack(ref.init_inputs) if ref.init_inputs else b"")
    flush = _flush_buffer() if cuda else None
    batch = 0
    # A batch of one, twice: how long a single call takes, to size the batches.
    probe = r.allocate("probe", [ref.timing_inputs(0, 0)])
    estimates = []
    checked: list[dict[str, Any]] = []
    for _ in range(2):
        result = _batch(r, "probe", probe, batch, 1, flush, precision=False)
        # Sizing only (no result depends on it): the process's own event time, when it gives
        # one, is free of the judge's fixed cost, which would make batches too short.
        estimates.append(min(result.events) if result.events else result.ms)
        checked += result.entries
        batch += 1
    r.ask("forget", {"buffers": ["probe"]})
    del probe
    per_call = max(min(estimates), 1e-4)
    if cuda:
        plan_sets = ref.plan.timing_sets if ref.plan else 2
        k = int(min(plan_sets, max(1, math.ceil(BATCH_TARGET_MS / per_call))))
        n = int(min(MAX_BATCHES, max(MIN_BATCHES, math.ceil(TOTAL_TARGET_MS / (k * per_call)))))
    else:
        k, n = CPU_SETS, CPU_BATCHES
    mapped = r.allocate("timing", [ref.timing_inputs(batch, 0)] * k)
    samples: list[float] = []
    events: list[float] = []
    aliased = False
    precision_batch = _rng.randrange(n)
    last_s = 0.0
    b = 0
    while b < n:
        if b >= 2 and r.time_left() < 2 * last_s + 2:
            break  # out of time: the batches so far are the result
        started = time.monotonic()
        calls = 1 if aliased else k
        r.step(f"timing: batch {b + 1}/{n} ({calls} calls)")
        result = _batch(r, "timing", mapped, batch, calls, flush, precision=b == precision_batch)
        checked += result.entries
        batch += 1
        last_s = time.monotonic() - started
        if result.aliased and not aliased:
            # Calls of one batch return the same memory (a preallocated output): only the last
            # call of a batch can be checked, so from now on every batch is a single call.
            aliased = True
            n = max(n, MIN_BATCHES)
            continue
        samples.append(result.ms)
        events += result.events
        b += 1
    r.ask("forget", {"models": ["timing"], "buffers": ["timing"]})
    calls = 1 if aliased else k
    what = (f"batches of {calls} call(s)" + (" (its calls share output memory)" if aliased else "")
            + f" on fresh inputs, the judge's fixed cost per batch ({r.overhead_ms:.3f} ms, "
            "measured before import) subtracted")
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
        "overhead_ms": r.overhead_ms,
        "aliased_outputs": aliased,
        "method": method,
        "checked": checked,
    }


@dataclass(slots=True)
class _Batch:
    ms: float
    entries: list[dict[str, Any]]
    events: list[float]
    aliased: bool


def _batch(
    r: Referee,
    name: str,
    mapped: list[list[Any]],
    batch: int,
    k: int,
    flush: Any,
    *,
    precision: bool,
) -> _Batch:
    import torch

    ref = r.ref
    cuda = r.device == "cuda"
    for call in range(k):  # one set at a time: the judge holds a single call's inputs at most
        values = ref.timing_inputs(batch, call)
        r.fill(name, mapped, [values], which=[call])
        del values
    if cuda:
        flush.zero_()
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    reply, _ = r.ask("batch", {"model": "timing", "buffers": name, "sets": list(range(k))})
    picked = sorted({k - 1, *_rng.sample(range(k - 1), min(PICKED - 1, k - 1))})
    shared, payload = r.ask("share", {"calls": picked})
    if cuda:
        calls = shared.get("calls")
        if not isinstance(calls, list) or len(calls) != len(picked):
            raise transport.TransportError("the shared outputs do not match the calls asked for")
        outputs = [[r.open(d) for d in descs] for descs in calls]
        taken = [[_sample(o) for o in outs] for outs in outputs]
        torch.cuda.synchronize()
        storages = [[(d.get("handle"), d.get("offset_bytes")) for d in descs if isinstance(d, dict)]
                    for descs in calls]
    else:
        outputs = transport.unpack(payload)
        if not isinstance(outputs, list) or len(outputs) != len(picked):
            raise transport.TransportError("the shared outputs do not match the calls asked for")
        taken = [[None for _ in outs] for outs in outputs]
        storages = [[o.untyped_storage().data_ptr() for o in outs] for outs in outputs]
    t1 = time.perf_counter()
    reused = _reused(picked, storages, reply.get("storages"), k)
    entries = []
    for call, outs, samples in zip(picked, outputs, taken, strict=True):
        if call in reused:
            continue  # a later call of the batch wrote into the same memory
        values = ref.timing_inputs(batch, call)
        want_exact = precision and call == k - 1
        exp = ref.timing_expected(values, exact=want_exact)
        if exp.ref_error is None:
            exp.ref_error = ref.timing_ref_errors()
        del values
        outs = r.take(outs)
        entry = compare_outputs(exp.outputs, outs, ref.req.tolerance, exp.ref_error)
        entry["label"] = f"timed call {call + 1} of batch {batch + 1}"
        if entry["ok"]:
            entry["late"] = _late(exp, samples, ref.req.tolerance)
            if want_exact:
                entry["precision"] = precision_shortfall(outs, exp.exact, exp.outputs)
        entries.append(entry)
    r.ask("release", {})
    ms = max(0.0, (t1 - t0) * 1e3 - r.overhead_ms) / k
    events = reply.get("events_ms")
    valid = isinstance(events, list) and all(
        isinstance(e, int | float) and math.isfinite(e) and e >= 0 for e in events)
    times = [float(e) for e in events] if valid and isinstance(events, list) else []
    return _Batch(ms, entries, times, bool(reused))


def _reused(picked: list[int], seen: list[list[Any]], reported: Any, k: int) -> set[int]:
    """Picked calls whose output memory a later call of the batch also returned: what the judge
    saw among the picked calls, and what the process says of all its calls (a process that says
    so falsely only gets more of its calls checked, one per batch)."""
    reused: set[int] = set()
    for i, a in enumerate(seen):
        for j in range(i + 1, len(seen)):
            if set(map(str, a)) & set(map(str, seen[j])):
                reused.add(picked[i])
    if isinstance(reported, list) and len(reported) == k:
        later: set[str] = set()
        for call in range(k - 1, -1, -1):
            mine = {str(p) for p in reported[call]} if isinstance(reported[call], list) else set()
            if call in picked and mine & later:
                reused.add(call)
            later |= mine
    return reused


def _sample(t: Any) -> tuple[Any, Any] | None:
    """Copy ``SAMPLE`` random elements of ``t`` now (positions drawn by the judge)."""
    import torch

    n = t.numel()
    if n == 0:
        return None
    idx = torch.randint(0, n, (min(SAMPLE, n),), device=t.device)
    coords = torch.unravel_index(idx, t.shape)
    return idx, t[coords].clone()


def _late(exp: Expected, samples: list[Any], tol: Any) -> str:
    """Empty when the elements copied at t1 already held the answer; else what was missing."""
    for i, (want, got) in enumerate(zip(exp.outputs, samples, strict=False)):
        if got is None:
            continue
        idx, values = got
        expected = want.reshape(-1)[idx.to(want.device)]
        same = compare_outputs([expected], [values.to(expected.device)], tol)
        if not same["ok"]:
            return (f"output {i}: when the call had returned, sampled elements were not yet "
                    f"the answer ({same['message']}); the work finished later")
    return ""


def _flush_buffer() -> Any:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2 = int(getattr(props, "L2_cache_size", 64 << 20) or 64 << 20)
    return torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda")


def summarise_samples(samples: list[float]) -> dict[str, float]:
    """Median and spread of per-call times (milliseconds)."""
    data = sorted(samples)
    q = statistics.quantiles(data, n=4) if len(data) >= 2 else [data[0]] * 3
    return {"median": statistics.median(data), "iqr": q[2] - q[0], "min": data[0]}
