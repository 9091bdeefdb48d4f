#!/usr/bin/env python
"""Eager PyTorch and torch.compile baselines of the whole suite, fp32 and bf16, on one GPU.

Usage (on the GPU machine, from the repository root)::

    PYTHONPATH=src python scripts/gpu_baselines.py --markdown
    PYTHONPATH=src python scripts/gpu_baselines.py --size small --device cpu --tasks 3 --no-compile

Phases, all under one deadline (``--deadline``, default 540 s from start):

    1. warm     torch.compile every (task, precision) once, ``--workers`` processes at a time,
                with Inductor's caches (FX graph, autotuning, Triton kernels) in one shared
                folder under ``--state``; stops starting new compiles after ``--warm-budget``
    2. measure  one process per (task, precision); ``--ahead`` of them prepare at once (CPU
                inputs, model, compile from the warm caches) while exactly one has the GPU and
                times eager and torch.compile with the harness's own timing (L2 flushed, input
                sets rotated, CUDA events, median): the numbers match ``kernelwright eval``'s

Each record is appended to ``$OUT/gpu_baselines.jsonl`` (when ``$OUT`` or ``--out`` is set) and
to ``STATE/results.jsonl`` as soon as it exists; a second call with the same ``--state`` skips
what is measured (so a run cut by the deadline can be finished by running the command again while
the machine is still warm). At the end: a table, the geometric means, and with ``--markdown``
the section for BENCHMARKS.md (also written to ``$OUT/baselines.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kernelwright.bench.baselines import schedule, table  # noqa: E402
from kernelwright.bench.suite import discover_tasks, pair_solutions  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", help="task ids to run (default: the whole suite)")
    parser.add_argument("--root", type=Path, default=ROOT / "benchmarks", help="suite folder")
    parser.add_argument("--tasks", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--precisions", default="fp32,bf16", help="comma-separated policies")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--size", default="full", choices=("full", "small"))
    parser.add_argument("--no-compile", action="store_true", help="eager baselines only")
    parser.add_argument("--seed", type=int, default=0, help="base seed of inputs and weights")
    parser.add_argument("--workers", type=int, default=12, help="parallel compiles in phase 1")
    parser.add_argument("--ahead", type=int, default=6, help="items prepared at once in phase 2")
    parser.add_argument(
        "--compile-threads",
        type=int,
        default=1,
        help="Inductor compile threads per process (1: no worker pool to start in each)",
    )
    parser.add_argument("--deadline", type=float, default=540.0, help="seconds for everything")
    parser.add_argument(
        "--warm-budget",
        type=float,
        default=None,
        help="seconds for phase 1 (default: 55%% of the deadline)",
    )
    parser.add_argument("--warm-timeout", type=float, default=240.0, help="per compile in phase 1")
    parser.add_argument(
        "--item-timeout",
        type=float,
        default=180.0,
        help="per item to get ready in phase 2 (inputs, model, compile)",
    )
    parser.add_argument(
        "--timing-timeout", type=float, default=90.0, help="per item on the GPU in phase 2"
    )
    parser.add_argument(
        "--state",
        type=Path,
        default=Path("/tmp/kw-gpu-baselines"),
        help="Inductor/Triton caches and results.jsonl, kept between calls",
    )
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: $OUT)")
    parser.add_argument("--fresh", action="store_true", help="measure again what is measured")
    parser.add_argument(
        "--fill-cache",
        action="store_true",
        help="also store the timings in kernelwright's baseline cache, so "
        "`kernelwright eval/bench` on this machine reuse them",
    )
    parser.add_argument("--markdown", action="store_true", help="print the BENCHMARKS.md section")
    parser.add_argument("--commit", default=None, help="commit to name (default: git, if any)")
    args = parser.parse_args(argv)

    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    paths = discover_tasks([args.root])
    if args.ids:
        unknown = sorted(set(args.ids) - {p.stem for p in paths})
        if unknown:
            parser.error(f"unknown task ids {unknown}")
        paths = [p for p in paths if p.stem in set(args.ids)]
    if args.tasks is not None:
        paths = paths[: args.tasks]
    precisions = [p.strip() for p in args.precisions.split(",") if p.strip()]
    suite = pair_solutions(paths, None)
    # Precision-major: all fp32 first, so a run cut short still has a complete first column.
    items = tuple(
        schedule.Item(i.task_id, i.task_path, i.group, i.family, p)
        for p in precisions
        for i in suite
    )
    out_dir = args.out or (Path(os.environ["OUT"]) if os.environ.get("OUT") else None)
    config = schedule.Config(
        items=items,
        device=args.device,
        size=args.size,
        compile=not args.no_compile,
        seed=args.seed,
        workers=args.workers,
        ahead=args.ahead,
        compile_threads=args.compile_threads,
        deadline_s=args.deadline,
        warm_budget_s=args.warm_budget,
        warm_timeout_s=args.warm_timeout,
        item_timeout_s=args.item_timeout,
        timing_timeout_s=args.timing_timeout,
        state_dir=args.state,
        out_dir=out_dir,
        fill_cache=args.fill_cache,
        fresh=args.fresh,
    )
    print(
        f"{len(suite)} tasks x {precisions} = {len(items)} items; deadline {args.deadline:.0f} s",
        flush=True,
    )
    try:
        records = schedule.run(config, echo=lambda line: print(line, flush=True))
    except schedule.ProbeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    everything = schedule.previous_records(config.state_dir.resolve())
    rows = table.rows(everything, [i.task_id for i in suite])
    rows = [r for r in rows if r.task in {i.task_id for i in suite}]
    print()
    print(table.text_table(rows, precisions))
    probe = next((r for r in records if r.get("kind") == "probe"), {})
    header = {
        "date": started,
        "GPU": str(probe.get("name", "?")),
        "software": f"torch {probe.get('torch')}, triton {probe.get('triton')}, CUDA "
        f"{probe.get('cuda')}",
        "commit": args.commit or _git_commit(),
        "command": "PYTHONPATH=src python scripts/gpu_baselines.py " + " ".join(sys.argv[1:]),
        "size": f"{args.size} ({len(rows)} tasks)",
    }
    md = table.markdown(rows, header, precisions)
    if out_dir is not None:
        (out_dir / "baselines.md").write_text(md + "\n")
        (out_dir / "baselines.json").write_text(
            json.dumps(
                {"header": header, "rows": [r.by_precision | {"task": r.task} for r in rows]},
                indent=1,
            )
        )
    if args.markdown:
        print()
        print(md)
    counts: dict[str, int] = {}
    for r in records:
        if r.get("kind") == "measure":
            counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"\nthis call: {counts or 'nothing to measure'}")
    return 0


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
            timeout=10,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return out.stdout.strip() + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git here; pass --commit)"


if __name__ == "__main__":
    sys.exit(main())
