"""Eager fp32 time of every suite task at full size, to check the suite's sizing on a GPU.

    PYTHONPATH=src python scripts/gpu_eager_sweep.py [--deadline 240] [benchmarks]

One subprocess per task (a failure or an out-of-memory never stops the sweep), the harness's
own timing (CUDA events, L2 flushed, rotated input sets). Prints task, family, eager ms,
bytes moved, achieved GB/s; writes JSON lines to $OUT/eager_sweep.jsonl when OUT is set.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, sys, torch
from kernelwright.task.module import import_task_module
from kernelwright.evaluate.timing import time_forward, summarise
from kernelwright.evaluate.runs import as_output_list, nbytes
from kernelwright.evaluate.precision import apply_policy
from kernelwright.records import Precision
apply_policy(Precision.FP32)
m = import_task_module(sys.argv[1], "full")
torch.manual_seed(0)
model = m.Model(*m.get_init_inputs()).cuda().eval()
sets = []
for s in range(2):
    torch.manual_seed(s + 1)
    sets.append([v.cuda() if isinstance(v, torch.Tensor) else v for v in m.get_inputs()])
with torch.no_grad():
    outs = as_output_list(model(*sets[0]), strict=False)
    raw = time_forward(model, sets, "cuda")
st = summarise(raw.samples_ms)
total = nbytes(sets[0]) + nbytes(outs) + nbytes(list(model.parameters()) + list(model.buffers()))
print(json.dumps({"median_ms": st.median_ms, "iqr_ms": st.iqr_ms, "bytes": total}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", nargs="?", default="benchmarks")
    parser.add_argument("--deadline", type=float, default=240.0)
    args = parser.parse_args()
    out_dir = Path(os.environ["OUT"]) if os.environ.get("OUT") else None
    tasks = sorted(Path(args.root).rglob("*.py"))
    start = time.monotonic()
    rows = []
    for path in tasks:
        if time.monotonic() - start > args.deadline:
            rows.append((path.stem, "-", "skipped: deadline", None))
            continue
        family = "?"
        for line in path.read_text().splitlines():
            if '"family"' in line:
                family = line.split('"family"')[1].split('"')[1]
                break
        try:
            proc = subprocess.run(
                [sys.executable, "-c", CHILD, str(path)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            data = (
                json.loads(proc.stdout.strip().splitlines()[-1])
                if proc.returncode == 0
                else {"error": proc.stderr.strip().splitlines()[-1][:200] if proc.stderr else "?"}
            )
        except Exception as exc:  # a hang or unparsable output: record, go on
            data = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        data |= {"task": path.stem, "family": family}
        rows.append((path.stem, family, data.get("error"), data))
        if out_dir:
            with (out_dir / "eager_sweep.jsonl").open("a") as fh:
                fh.write(json.dumps(data) + "\n")
        print(json.dumps(data), flush=True)
    print(f"\n{'task':40s} {'family':14s} {'eager ms':>9s} {'MB':>8s} {'GB/s':>7s}")
    for name, family, error, data in rows:
        if error or not data:
            print(f"{name:40s} {family:14s} {error}")
            continue
        gbps = data["bytes"] / (data["median_ms"] * 1e-3) / 1e9
        print(
            f"{name:40s} {family:14s} {data['median_ms']:9.3f} {data['bytes'] / 1e6:8.0f} "
            f"{gbps:7.0f}"
        )


if __name__ == "__main__":
    main()
