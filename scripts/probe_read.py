"""What reading a timed call's output back costs the judge: mapping another process's output
through CUDA IPC and sampling it, as a timed batch does, by output size and by how the output
was made.

    python scripts/probe_read.py --bytes 6442450944 --out runs/read

A development instrument, like ``probe_confinement.py``. A second process (the producer, as a
candidate's) holds an output of ``--bytes`` and describes it each round with the harness's own
``transport.describe_cuda``; this process maps it with ``transport.open_cuda`` and takes the
clock's 512-element sample (``clock._sample``), timing each step and the wait for the device.
Three ways the output is made, each for ``--rounds`` rounds:

    same       the same allocation each round, untouched (as the clock's calibration reads)
    written    the same allocation, written by a kernel right before it is described (as a
               timed call's output, returned to the allocator and handed out again)
    fresh      a new allocation each round (the previous one freed to the allocator's cache
               first, then emptied), as an output the allocator cannot reuse

With ``--hold BYTES`` the producer also holds an allocation of that size which this process
maps once and keeps mapped through every round, writing it before each (as the judge maps and
writes a timed batch's input buffers before reading its outputs): whether what else the judge
maps and writes changes what reading an output costs.

Writes ``OUT/read.csv`` row by row: scenario, round, bytes, held bytes, map_ms, sample_ms,
total_ms.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SCENARIOS = ("same", "written", "fresh")
FIELDS = ["scenario", "round", "bytes", "held", "map_ms", "sample_ms", "total_ms"]
WAIT_S = 120.0  # the producer's allocation and write of an output, at most


def produce(conn: Any, n_bytes: int, scenario: str, rounds: int, hold: int = 0) -> None:
    """The producer's side: the held allocation described once (``hold`` bytes, if any), then
    an output per round, described; waits for the reader each time."""
    import torch

    from kernelwright.evaluate import transport

    held = torch.empty(hold, dtype=torch.uint8, device="cuda") if hold else None
    if held is not None:
        conn.send(transport.describe_cuda(held))
    out = torch.empty(n_bytes, dtype=torch.uint8, device="cuda")
    for _ in range(rounds):
        if scenario == "fresh":
            del out
            torch.cuda.empty_cache()
            out = torch.empty(n_bytes, dtype=torch.uint8, device="cuda")
        elif scenario == "written":
            out.fill_(7)
        torch.cuda.synchronize()
        conn.send(transport.describe_cuda(out))
        conn.recv()  # the reader is done with this round's mapping
    conn.send(None)
    conn.recv()  # the reader has closed its mappings: only now may they be freed
    del held, out


def read_rounds(conn: Any, scenario: str, n_bytes: int, writer: Any, hold: int = 0) -> None:
    """The judge's side: map and sample each round's output, one row a round (the held
    allocation, if any, mapped first and written before each round)."""
    import torch

    from kernelwright.evaluate import transport
    from kernelwright.evaluate.clock import _sample

    def receive() -> Any:
        if not conn.poll(WAIT_S):
            raise RuntimeError(f"the producer sent nothing for {WAIT_S:.0f} s")
        return conn.recv()

    kept = transport.open_cuda(receive()) if hold else None
    for i in itertools.count():
        desc = receive()
        if desc is None:
            del kept
            conn.send("closed")
            return
        if kept is not None:
            kept.fill_(i % 251)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        mapped = transport.open_cuda(desc)
        t1 = time.perf_counter()
        taken = _sample(mapped)
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        writer({"scenario": scenario, "round": i, "bytes": n_bytes, "held": hold,
                "map_ms": f"{(t1 - t0) * 1e3:.4f}", "sample_ms": f"{(t2 - t1) * 1e3:.4f}",
                "total_ms": f"{(t2 - t0) * 1e3:.4f}"})
        del mapped, taken
        conn.send("done")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=float, default=float(1 << 30),
                        help="size of the output, bytes (default 1 GiB)")
    parser.add_argument("--rounds", type=int, default=8, help="rounds a scenario")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS,
                        help="scenario to run (repeatable; default all)")
    parser.add_argument("--hold", type=float, default=0.0,
                        help="bytes of another allocation the reader keeps mapped and writes "
                             "(default none)")
    parser.add_argument("--out", type=Path, required=True, help="folder for read.csv")
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("probe_read: needs a CUDA device (CUDA IPC between two processes)",
              file=sys.stderr)
        return 2
    n_bytes = int(args.bytes)
    args.out.mkdir(parents=True, exist_ok=True)
    ctx = mp.get_context("spawn")
    with (args.out / "read.csv").open("w", newline="") as fh:
        rows = csv.DictWriter(fh, fieldnames=FIELDS)
        rows.writeheader()

        def write(row: dict[str, Any]) -> None:
            rows.writerow(row)
            fh.flush()
            print(", ".join(f"{k} {row[k]}" for k in FIELDS), flush=True)

        for scenario in args.scenario or SCENARIOS:
            mine, theirs = ctx.Pipe()
            producer = ctx.Process(target=produce, args=(theirs, n_bytes, scenario,
                                                         args.rounds, int(args.hold)))
            producer.start()
            try:
                read_rounds(mine, scenario, n_bytes, write, int(args.hold))
            finally:
                producer.join(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
