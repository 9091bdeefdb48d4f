"""What a timed call's first steps cost the host after its process waited, as a judged process
waits between batches while the judge checks the calls it read back.

    python scripts/probe_prelude.py --out runs/prelude

A development instrument, like ``probe_confinement.py``, in a plain process of its own (no
confinement). Each round copies a held-back region into an input of ``--elements`` fp32 values
(``reveal.apply``'s copy: 1/256 of the input), makes a fresh view of it and records a CUDA
event (a timed call's prelude), then calls eager ReLU on it (a forward), timing the host for
each; before each round the process waits in one of these ways:

    none        nothing: rounds back to back
    sleep       sleeps ``--idle`` seconds
    spin        polls the clock for ``--idle`` seconds without sleeping
    sleep+dry   sleeps, then rehearses the prelude on the same tensors (what a process could
                do before the judge's clock starts)
    spin+dry    polls, then rehearses

Writes ``OUT/prelude.csv`` row by row: wait, round, copy_ms, views_event_ms, forward_ms.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

WAITS = ("none", "sleep", "spin", "sleep+dry", "spin+dry")
FIELDS = ["wait", "round", "copy_ms", "views_event_ms", "forward_ms"]


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class Call:
    """An input, its held-back region's staging values and a timed call's steps on them."""

    def __init__(self, elements: int) -> None:
        import torch

        self.torch = torch
        self.x = torch.empty(elements, device="cuda").normal_()
        self.stage = torch.randn(max(4096, elements // 256), device="cuda")
        self.event = torch.cuda.Event(enable_timing=True)

    def prelude(self, start: int) -> Any:
        self.x.narrow(0, start, self.stage.numel()).copy_(self.stage)
        view = self.x.as_strided(self.x.shape, self.x.stride(), self.x.storage_offset())
        self.event.record()
        return view

    def timed(self, start: int) -> tuple[float, float, float]:
        """Host ms of the region's copy, of the view and event, and of the forward."""
        t0 = time.perf_counter()
        self.x.narrow(0, start, self.stage.numel()).copy_(self.stage)
        t1 = time.perf_counter()
        view = self.x.as_strided(self.x.shape, self.x.stride(), self.x.storage_offset())
        self.event.record()
        t2 = time.perf_counter()
        self.torch.relu(view)
        t3 = time.perf_counter()
        self.torch.cuda.synchronize()
        return (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3

    def dry(self) -> None:
        self.prelude(0)
        self.torch.cuda.synchronize()


def waits(call: Call, idle_s: float) -> dict[str, Callable[[], None]]:
    return {
        "none": lambda: None,
        "sleep": lambda: time.sleep(idle_s),
        "spin": lambda: spin(idle_s),
        "sleep+dry": lambda: (time.sleep(idle_s), call.dry()),
        "spin+dry": lambda: (spin(idle_s), call.dry()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=float, default=float(1 << 28),
                        help="fp32 elements of the input (default 2^28: 1 GB)")
    parser.add_argument("--rounds", type=int, default=12, help="rounds a way of waiting")
    parser.add_argument("--idle", type=float, default=0.2, help="seconds waited before a round")
    parser.add_argument("--out", type=Path, required=True, help="folder for prelude.csv")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("probe_prelude: needs a CUDA device", file=sys.stderr)
        return 2
    call = Call(int(args.elements))
    span = call.x.numel() - call.stage.numel()
    for _ in range(3):  # the first calls' one-time costs
        call.timed(0)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "prelude.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for name, wait in waits(call, args.idle).items():
            for r in range(args.rounds):
                wait()
                copy_ms, views_ms, forward_ms = call.timed((r * 7919) % (span + 1))
                row = {"wait": name, "round": r, "copy_ms": f"{copy_ms:.4f}",
                       "views_event_ms": f"{views_ms:.4f}", "forward_ms": f"{forward_ms:.4f}"}
                writer.writerow(row)
                f.flush()
                print(", ".join(f"{k} {row[k]}" for k in FIELDS), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
