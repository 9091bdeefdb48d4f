#!/usr/bin/env python
"""Optimize the suite's memory-bound tasks with kernelwright's templates (no LLM), on one GPU.

Usage (on the GPU machine, from the repository root; one call of at most ~9 minutes)::

    PYTHONPATH=src python scripts/gpu_optimize_suite.py                   # defaults below
    PYTHONPATH=src python scripts/gpu_optimize_suite.py --budget 3 --compile --shard 1/2
    PYTHONPATH=src python scripts/gpu_optimize_suite.py --size small --device cpu \
        --only 06_softmax_rows,27_mse_loss

For every task of the families elementwise, softmax, norm, reduction, scan, pool, loss and the
memory-bound serving tasks (families interleaved, so a run cut by the deadline still covers each
family), it runs ``kernelwright optimize`` with a small budget (default: the two best designs),
through the real harness (correctness trials, guard, timing with L2 flushed), and reads eager,
torch.compile (with ``--compile``) and the best candidate's time from the verdicts. It prints one
row per task and the geometric means, appends one JSON line per task to
``$OUT/optimize_suite.jsonl`` (or ``--out``) as soon as the task ends, and writes each task's
report and best.py under ``$OUT/optimize/<task>/``.

Expect 25-35 s per task at full size with the defaults (one judge per task, two candidates, two
correctness trials), plus 10-40 s per task with ``--compile``: the 35 tasks take three calls,
``--shard 1/3``, ``--shard 2/3``, ``--shard 3/3`` (each resumes nothing and skips nothing of the
others; rows from every call append to the same ``optimize_suite.jsonl`` when ``--out`` is the
same folder).

Time-boxed: a global deadline (``--deadline``, seconds from start, default 510); a task starts only
when the remaining time covers ``--min-task-s``, each candidate's timeout is clipped to what is
left, and the remaining tasks are listed as skipped. One task's failure never stops the run.
Timings are fp32 unless ``--precision`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

FAMILIES = ("elementwise", "softmax", "norm", "reduction", "scan", "pool", "loss", "serving")
NOT_MEMORY_BOUND = ("attention", "gemm", "matmul", "conv")


def discover(root: Path, only: set[str]) -> list[tuple[str, str, Path]]:
    """(task id, family, path) of the memory-bound tasks, families interleaved."""
    from kernelwright.task import load_task, task_options

    by_family: dict[str, list[tuple[str, str, Path]]] = {}
    for path in sorted(root.glob("*/*.py")):
        if path.name.startswith("_"):
            continue
        if only and path.stem not in only:
            continue
        try:
            opts = task_options(load_task(path))
        except Exception:  # not a task file
            continue
        family = str(opts.get("family", ""))
        if family not in FAMILIES:
            continue
        if family == "serving" and any(
            w in str(opts.get("notes", "")).lower() for w in NOT_MEMORY_BOUND
        ):
            continue
        by_family.setdefault(family, []).append((path.stem, family, path))
    ordered: list[tuple[str, str, Path]] = []
    queues = [by_family[f] for f in FAMILIES if f in by_family]
    while any(queues):
        for q in queues:
            if q:
                ordered.append(q.pop(0))
    return ordered


def run_task(
    task_id: str,
    family: str,
    path: Path,
    args: argparse.Namespace,
    archive: Any,
    out_dir: Path,
    deadline: float,
) -> dict[str, Any]:
    from kernelwright.evaluate.options import EvalOptions
    from kernelwright.optimize import OptimizeOptions, optimize_task
    from kernelwright.records import Precision
    from kernelwright.search.controller import Budget

    left = deadline - time.monotonic()
    options = OptimizeOptions(
        evaluation=EvalOptions(
            device=args.device,
            precision=Precision(args.precision),
            size=args.size or "auto",
            trials=args.trials,
            timeout_s=max(30.0, min(args.timeout, left - 5)),
            compile_baseline=args.compile,
        ),
        structures=args.budget,
        tuner=args.tuner,
        isolate_capture=False,
    )
    minutes = max(0.25, min(args.task_minutes, (left - 10) / 60.0))
    budget = Budget(candidates=args.budget + args.tune, minutes=minutes)
    started = time.monotonic()
    result = optimize_task(path, options, budget, out_dir / task_id, archive)
    row: dict[str, Any] = {
        "task": task_id,
        "family": family,
        "evaluated": len(result.trials),
        "correct": sum(1 for t in result.trials if t.verdict.correct),
        "seconds": round(time.monotonic() - started, 1),
        "left_to_framework": [g["ops"] for g in result.plan.framework_groups()],
    }
    eager = compiled = None
    for t in result.trials:  # baselines are the same for every candidate of a task
        if t.verdict.timing.eager and eager is None:
            eager = t.verdict.timing.eager.median_ms
        if t.verdict.timing.compile and compiled is None:
            compiled = t.verdict.timing.compile.median_ms
    best = result.best
    row.update(eager_ms=eager, compile_ms=compiled)
    if best is None:
        statuses = sorted({t.verdict.status.value for t in result.trials})
        row.update(
            status="no correct candidate" if result.trials else "no template", statuses=statuses
        )
        if result.trials:
            row["message"] = result.trials[-1].verdict.message[:300]
        return row
    v = best.verdict
    ms = v.timing.candidate.median_ms if v.timing.candidate else None
    row.update(
        status="ok",
        best_ms=ms,
        speedup_eager=(eager / ms) if eager and ms else None,
        speedup_compile=(compiled / ms) if compiled and ms else None,
        sol_fraction=v.sol.fraction if v.sol else None,
        gbps=(v.sol.bytes / ms / 1e6) if v.sol and ms else None,
        design=" + ".join(best.candidate.design.get("skills", [])),
        params=best.candidate.params,
        representative=v.timing.representative,
    )
    return row


def recorded_compile_ms(path: Path, precision: str) -> dict[str, float]:
    """torch.compile times per task from BENCHMARKS.md's suite-baseline table (same harness,
    same GPU model, another run): used when this run does not time torch.compile itself."""
    column = {"fp32": 4, "bf16": 7}.get(precision)
    found: dict[str, float] = {}
    if column is None or not path.exists():
        return found
    in_table = False
    for line in path.read_text().splitlines():
        if line.startswith("| task | family | eager fp32 ms | compile fp32 ms"):
            in_table = True
            continue
        if in_table and not line.startswith("|"):
            break
        cells = [c.strip() for c in line.split("|")]
        if in_table and len(cells) > column and cells[1].startswith("`"):
            try:
                found[cells[1].strip("`")] = float(cells[column])
            except ValueError:
                continue
    return found


def geomean(values: list[float]) -> float | None:
    vals = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def fmt(v: Any, spec: str) -> str:
    return format(v, spec) if isinstance(v, int | float) else "-"


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (
        f"{'task':32} {'family':11} {'eager ms':>9} {'compile':>9} {'best ms':>9} "
        f"{'x eager':>8} {'x comp':>7} {'SOL':>5} {'GB/s':>7}  design"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        sol = r.get("sol_fraction")
        print(
            f"{r['task'][:32]:32} {r['family'][:11]:11} {fmt(r.get('eager_ms'), '9.4f')} "
            f"{fmt(r.get('compile_ms'), '9.4f')} {fmt(r.get('best_ms'), '9.4f')} "
            f"{fmt(r.get('speedup_eager'), '8.2f')} {fmt(r.get('speedup_compile'), '7.2f')} "
            f"{fmt(sol * 100 if isinstance(sol, float) else None, '4.0f')}% "
            f"{fmt(r.get('gbps'), '7.0f')}  " + (r.get("design") or r.get("status", ""))
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=ROOT / "benchmarks")
    p.add_argument("--only", default="", help="comma-separated task ids")
    p.add_argument("--shard", default="1/1", help="k/n: every n-th task starting at the k-th")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--size", default=None, choices=("full", "small"), help="default: full on cuda")
    p.add_argument("--precision", default="fp32", choices=("fp32", "tf32", "bf16"))
    p.add_argument("--budget", type=int, default=2, help="stage-1 designs per task")
    p.add_argument("--tune", type=int, default=0, help="extra stage-2 candidates per task")
    p.add_argument("--tuner", default="auto", choices=("auto", "bo", "neighbours"))
    p.add_argument("--trials", type=int, default=2, help="correctness trials per candidate")
    p.add_argument(
        "--compile", action="store_true", help="also time torch.compile (10-40 s per task)"
    )
    p.add_argument(
        "--compile-from",
        type=Path,
        default=ROOT / "BENCHMARKS.md",
        help="without --compile: torch.compile times from this file's suite-baseline table",
    )
    p.add_argument("--deadline", type=float, default=510.0, help="seconds for the whole run")
    p.add_argument(
        "--min-task-s", type=float, default=25.0, help="start a task only with this much left"
    )
    p.add_argument("--task-minutes", type=float, default=2.0, help="cap per task")
    p.add_argument("--timeout", type=float, default=120.0, help="cap per candidate (seconds)")
    p.add_argument("--out", type=Path, default=None, help="default: $OUT, else ./gpu_optimize_out")
    p.add_argument("--archive", type=Path, default=None, help="default: OUT/archive.sqlite")
    args = p.parse_args(argv)
    start = time.monotonic()
    deadline = start + args.deadline
    out = args.out or Path(os.environ.get("OUT") or "gpu_optimize_out")
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("KERNELWRIGHT_HOME", str(out / "kwhome"))
    if args.size is None:
        args.size = "full" if args.device == "cuda" else "small"

    from kernelwright.archive import Archive

    only = {s for s in args.only.split(",") if s}
    tasks = discover(args.root, only)
    k, n = (int(x) for x in args.shard.split("/"))
    tasks = tasks[k - 1 :: n]
    archive = Archive(args.archive or out / "archive.sqlite")
    recorded = {} if args.compile else recorded_compile_ms(args.compile_from, args.precision)
    jsonl = out / "optimize_suite.jsonl"
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    print(
        f"{len(tasks)} tasks, {args.device}/{args.size}/{args.precision}, "
        f"budget {args.budget}+{args.tune}, deadline {args.deadline:.0f} s",
        flush=True,
    )
    for task_id, family, path in tasks:
        left = deadline - time.monotonic()
        if left < args.min_task_s:
            skipped.append(task_id)
            continue
        print(f"[{time.monotonic() - start:6.1f}s] {task_id} ({family})", flush=True)
        try:
            row = run_task(task_id, family, path, args, archive, out / "optimize", deadline)
            if row.get("compile_ms") is None and task_id in recorded:
                row["compile_ms"] = recorded[task_id]
                row["compile_source"] = str(args.compile_from.name)
                if row.get("best_ms"):
                    row["speedup_compile"] = recorded[task_id] / row["best_ms"]
        except Exception as exc:  # one task's failure never stops the run
            row = {
                "task": task_id,
                "family": family,
                "status": f"error: {type(exc).__name__}: {exc}"[:300],
                "traceback": traceback.format_exc(limit=4),
            }
        rows.append(row)
        with jsonl.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(
            f"    -> {row.get('status')} best {fmt(row.get('best_ms'), '.4f')} ms, "
            f"{fmt(row.get('speedup_eager'), '.2f')}x eager, "
            f"{fmt(row.get('speedup_compile'), '.2f')}x compile, "
            f"SOL {fmt((row.get('sol_fraction') or 0) * 100, '.0f')}% "
            f"({row.get('seconds', '-')} s)",
            flush=True,
        )
    archive.close()
    print()
    print_table(rows)
    ok = [r for r in rows if r.get("status") == "ok"]
    ge = geomean([r["speedup_eager"] for r in ok if r.get("speedup_eager")])
    gc = geomean([r["speedup_compile"] for r in ok if r.get("speedup_compile")])
    all_c = geomean([r.get("speedup_compile") or 1.0 for r in rows])
    sols = sorted(r["sol_fraction"] for r in ok if r.get("sol_fraction") is not None)
    summary = {
        "tasks": len(rows),
        "correct": len(ok),
        "skipped_by_deadline": skipped,
        "geomean_vs_eager_correct": ge,
        "geomean_vs_compile_correct": gc,
        "geomean_vs_compile_all_failed_as_1": all_c,
        "slower_than_eager": [r["task"] for r in ok if (r.get("speedup_eager") or 1) < 1],
        "median_sol_fraction": sols[len(sols) // 2] if sols else None,
        "seconds": round(time.monotonic() - start, 1),
    }
    print()
    print(json.dumps(summary, indent=2))
    (out / "optimize_suite_summary.json").write_text(
        json.dumps({"summary": summary, "rows": rows}, indent=2)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
