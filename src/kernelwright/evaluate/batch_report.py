"""A timed batch in the candidate's process, around the judge's clock.

``prepare`` (before the clock starts) resolves what the batch needs and takes the counts its
report is measured against; ``batch`` (on the clock) only issues the calls, copies the launch
monitor's counts once they are done (a launch made after the reply is not one of the batch's)
and describes their outputs; ``release`` (after the clock has stopped) turns what the process
saw into its report of itself: each call's CUDA-event time, its host times, its launches and
what PyTorch's allocator did. The report is a diagnostic and a second opinion, never a time the
judge keeps; computing it once the judge's clock has stopped keeps this process's own
bookkeeping (reading the allocator's statistics, a pair of event times a call) off every call's
time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class PreparedBatch:
    """What a timed batch runs (set up off the clock) and the counts before it."""

    order: list[int]  # the buffer set of each call
    model: Any
    sets: list[list[Any]]
    writers: list[list[Any]]
    staging: list[list[Any]]
    events: list[tuple[Any, Any]]  # (start, end) a call, on a GPU
    launches: dict[str, int]  # the launch monitor's counts before the batch
    programs: dict[str, int]
    allocator: tuple[int, int] | None

    @classmethod
    def make(cls, order: list[int], model: Any, sets: list[list[Any]],
             writers: list[list[Any]], staging: list[list[Any]], device: str,
             launches: dict[str, int], programs: dict[str, int]) -> PreparedBatch:
        events: list[tuple[Any, Any]] = []
        if device == "cuda":
            import torch

            events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                      for _ in order]
            for start, end in events:  # CUDA creates an event at its first record: now
                start.record()
                end.record()
        return cls(order, model, sets, writers, staging, events, launches, programs,
                   allocator_counts(device))


@dataclass(slots=True)
class FinishedBatch:
    """A batch's moments by the process's clock (s), reported at its release."""

    prepared: PreparedBatch
    times: list[float]  # ms a call by the process's clock, off CUDA (events on it)
    received: float  # the batch's message read
    issued: float  # the first call about to be issued
    issued_all: float  # the last call issued
    forward_s: float  # inside the forwards, in all
    prelude_s: float  # in the process's own steps before each call, in all
    idle: float  # the device idle (after the wait)
    ready: float  # the reply made
    launches: dict[str, int]  # the launch monitor's counts once the calls were done
    programs: dict[str, int]

    def report(self, device: str) -> dict[str, Any]:
        """The process's report of the batch (see ``records.CallBreakdown``), with its
        launches and programs per kernel name, from its preparation to its calls' end."""
        p = self.prepared
        names = launched_since(self.launches, p.launches)
        report: dict[str, Any] = {
            "launches": sum(names.values()), "launch_names": names,
            "launch_programs": launched_since(self.programs, p.programs),
            "reply_ms": (self.ready - self.idle) * 1e3,
            "busy_ms": (self.ready - self.received) * 1e3,
            **allocator_since(allocator_counts(device), p.allocator)}
        if device != "cuda":
            return report | {"events_ms": self.times}
        report["events_ms"] = [start.elapsed_time(end) for start, end in p.events]
        if p.order:
            report |= {
                # first call's start to the last one's end: the gaps between calls included
                "span_ms": p.events[0][0].elapsed_time(p.events[-1][1]),
                "issue_ms": (self.issued_all - self.issued) * 1e3,
                "forward_ms": self.forward_s * 1e3,
                "prelude_ms": self.prelude_s * 1e3,
                "setup_ms": (self.issued - self.received) * 1e3,
                # first call issued to the device idle: its span plus the device's start and
                # the wait's wake-up
                "run_ms": (self.idle - self.issued) * 1e3}
        return report


def launched_since(counts: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    """Launches (or programs) per kernel name since ``before`` was copied from ``counts``."""
    return {name: n - before.get(name, 0) for name, n in counts.items()
            if n > before.get(name, 0)}


def allocator_counts(device: str) -> tuple[int, int] | None:
    """(device allocations, cache flushes) of PyTorch's CUDA allocator so far; None off CUDA.

    A forward that needs fresh device memory waits for the driver's allocation; one that meets
    the process's memory cap first frees the allocator's whole cache, which waits for every
    kernel queued so far: its calls then stop overlapping, and the host's issuing time swells
    to the device's span. Counting both tells that apart from Python's own cost."""
    if device != "cuda":
        return None
    import torch

    stats = torch.cuda.memory_stats()
    return int(stats.get("num_device_alloc", 0)), int(stats.get("num_alloc_retries", 0))


def allocator_since(after: tuple[int, int] | None,
                    before: tuple[int, int] | None) -> dict[str, int]:
    """The allocator's counts over a batch, as its report gives them."""
    if after is None or before is None:
        return {}
    return {"device_allocs": after[0] - before[0], "alloc_retries": after[1] - before[1]}
