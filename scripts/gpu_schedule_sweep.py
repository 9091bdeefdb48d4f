#!/usr/bin/env python
"""Measure the structure stage's design space on one GPU: every design x sampled parameters.

Usage (on the GPU machine, from the repository root; one call of at most ~9 minutes)::

    PYTHONPATH=src python scripts/gpu_schedule_sweep.py --configs 8 --designs 3
    PYTHONPATH=src python scripts/gpu_schedule_sweep.py --only 06_softmax_rows --full-space
    PYTHONPATH=src python scripts/gpu_schedule_sweep.py --device cpu --only 06_softmax_rows

This is a development instrument, not a verdict: kernelwright's own generated kernels (trusted
code) are imported in-process and timed with ``triton.testing.do_bench`` (L2 cleared before each
run, median), so hundreds of variants fit in one call; the harness (``kernelwright optimize``)
still verifies and times whatever is published as a result. Per task it

1. plans the task at full size (capture, fusion, skills: ``plan_task``) and takes the first
   ``--designs`` designs; for each, the skills' default parameters plus ``--configs - 1``
   configurations sampled (seeded) from the tunable parameters that meet the skill's
   constraints, or every such configuration with ``--full-space``;
2. phase A, ``--workers`` processes: imports each variant, runs it once on the task's inputs
   (this compiles its kernels into the shared Triton cache) and compares with the reference
   (``torch.allclose`` at the task's tolerance; a quick check, not the harness);
3. phase B, this process alone on the GPU: times eager PyTorch and every variant that passed.

Writes, as it goes: ``OUT/sweep.jsonl`` (one line per variant), ``OUT/spaces/<task>__d<i>.csv``
(one measured space per design, in ``kernelwright tune replay``'s CSV format) and, last, a table
per task: eager, the default design's time, the best variant, its design and parameters, and the
fraction of the bytes floor (``--bandwidth`` GB/s; the harness's measured copy bandwidth on the
H200 is 4238).
"""

from __future__ import annotations

import argparse
import csv
import faulthandler
import importlib.util
import itertools
import json
import math
import os
import random
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

from gpu_optimize_suite import discover, fmt  # noqa: E402


def variants_for(plan: Any, designs: int, configs: int, full: bool, seed: str) -> list[Any]:
    """(design index, Design) pairs: defaults first, then sampled or every valid configuration."""
    from kernelwright.design.choices import Design
    from kernelwright.search.tunable import params_key, tunable

    out: list[tuple[int, Any]] = []
    for di, base in enumerate(plan.designs[:designs]):
        axes: list[tuple[int, str, tuple[int, ...]]] = []
        for ci, choice in enumerate(base.choices):
            for name, values in tunable(plan.library, choice):
                axes.append((ci, name, values))
        grid = []
        for combo in itertools.product(*(values for _, _, values in axes)):
            choices = list(base.choices)
            for (ci, name, _), value in zip(axes, combo, strict=True):
                choices[ci] = choices[ci].with_params({**choices[ci].params, name: value})
            if all(plan.library.get(c.skill).satisfies(c.params) for c in choices):
                grid.append(Design(tuple(choices), stage="tuning"))
        rng = random.Random(f"{seed}:{di}")
        picked = grid if full else rng.sample(grid, min(len(grid), max(0, configs - 1)))
        seen = {params_key(base)}
        out.append((di, base))
        for d in picked:
            if params_key(d) not in seen:
                seen.add(params_key(d))
                out.append((di, d))
    return out


def load_solution(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"sweep_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Reference:
    """The task's model, inputs (drawn on the device, fixed seed) and outputs."""

    def __init__(self, task_path: Path, device: str, size: str) -> None:
        import torch

        from kernelwright.task import load_task, task_options
        from kernelwright.task.module import import_task_module

        self.module = import_task_module(task_path, size=size)
        opts = task_options(load_task(task_path, size=size))
        self.atol = max(float(opts.get("atol", 1e-4)), 1e-4)
        self.rtol = max(float(opts.get("rtol", 1e-4)), 1e-4)
        self.device = device
        init = getattr(self.module, "get_init_inputs", list)()
        torch.manual_seed(0)
        self.model = self.module.Model(*init).to(device).eval()
        self.init = init
        torch.manual_seed(1)
        with torch.device(device):
            self.inputs = list(self.module.get_inputs())
        self.inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in self.inputs]
        with torch.no_grad():
            self.outputs = _as_list(self.model(*self.inputs))

    def build(self, module: Any) -> Any:
        import torch

        torch.manual_seed(0)
        return module.ModelNew(*self.init).to(self.device).eval()

    def check(self, outputs: Any) -> tuple[bool, float, str]:
        import torch

        got = _as_list(outputs)
        if len(got) != len(self.outputs):
            return False, math.inf, f"{len(got)} outputs, expected {len(self.outputs)}"
        worst = 0.0
        for g, r in zip(got, self.outputs, strict=True):
            if g.shape != r.shape:
                return False, math.inf, f"shape {tuple(g.shape)}, expected {tuple(r.shape)}"
            if not r.is_floating_point():
                if not torch.equal(g, r):
                    return False, math.inf, "integer output differs"
                continue
            err = (g.float() - r.float()).abs().max().item() if g.numel() else 0.0
            worst = max(worst, err)
            if not torch.allclose(g.float(), r.float(), atol=self.atol, rtol=self.rtol):
                return False, worst, f"max abs error {err:.3g}"
        return True, worst, ""

    def release(self) -> None:
        """Drop the task's tensors (the next task may need the memory)."""
        self.inputs, self.outputs = [], []

    def bytes_moved(self) -> int:
        import torch

        tensors = [x for x in self.inputs if isinstance(x, torch.Tensor)] + self.outputs
        params = [p for p in self.model.parameters()] + [b for b in self.model.buffers()]
        return sum(t.numel() * t.element_size() for t in tensors + params)


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


_WORKER_REF: dict[str, Reference] = {}


class Workers:
    """Phase-A processes; a chunk that hangs past the timeout costs the pool, not the run."""

    def __init__(self, n: int) -> None:
        import multiprocessing as mp

        self.n = n
        self.context = mp.get_context("spawn")
        self.pool = ProcessPoolExecutor(n, mp_context=self.context, initializer=_watchdog)

    def run(self, jobs: list[Any], timeout_s: float) -> list[dict[str, Any]]:
        futures = {self.pool.submit(phase_a, job): job for job in jobs}
        done, late = wait(futures, timeout=timeout_s)
        rows = [r for f in done if f.exception() is None for r in f.result()]
        rows += [
            {"file": fname, "status": "error", "why": f"worker: {f.exception()}"[:300]}
            for f in done
            if f.exception() is not None
            for fname in futures[f][3]
        ]
        if late:
            rows += [
                {"file": fname, "status": "timeout", "why": f"phase A over {timeout_s:.0f} s"}
                for f in late
                for fname in futures[f][3]
            ]
            self.restart()
        return rows

    def restart(self) -> None:
        for proc in list(getattr(self.pool, "_processes", {}).values()):
            proc.kill()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.pool = ProcessPoolExecutor(self.n, mp_context=self.context, initializer=_watchdog)

    def close(self) -> None:
        self.restart()
        self.pool.shutdown(wait=False, cancel_futures=True)


def _watchdog() -> None:
    """Print every thread's stack when a process is stuck, so a hang names its variant."""
    faulthandler.dump_traceback_later(90, repeat=True)


def phase_a(job: tuple[str, str, str, list[str]]) -> list[dict[str, Any]]:
    """Compile and check a chunk of one task's variants (runs in a worker process)."""
    import torch

    task_path, device, size, files = job
    key = f"{task_path}:{size}"
    if key not in _WORKER_REF:
        _WORKER_REF.clear()  # one task's tensors at a time
        if device == "cuda":
            torch.cuda.empty_cache()
        _WORKER_REF[key] = Reference(Path(task_path), device, size)
    ref = _WORKER_REF[key]
    rows = []
    for f in files:
        t0 = time.monotonic()
        try:
            model = ref.build(load_solution(Path(f)))
            with torch.no_grad():
                out = model(*ref.inputs)
            if device == "cuda":
                torch.cuda.synchronize()
            compile_ms = (time.monotonic() - t0) * 1e3
            ok, err, why = ref.check(out)
            t1 = time.monotonic()
            with torch.no_grad():
                model(*ref.inputs)
            if device == "cuda":
                torch.cuda.synchronize()
            rows.append(
                {
                    "file": f,
                    "status": "ok" if ok else "incorrect",
                    "max_err": err,
                    "why": why,
                    "compile_ms": compile_ms,
                    "run_ms": (time.monotonic() - t1) * 1e3,
                }
            )
        except Exception as exc:
            rows.append(
                {
                    "file": f,
                    "status": "error",
                    "why": f"{type(exc).__name__}: {exc}"[:300],
                    "compile_ms": (time.monotonic() - t0) * 1e3,
                }
            )
    return rows


def bench(fn: Any, device: str) -> tuple[float, float, int]:
    """(median ms, std ms, runs) with the L2 cleared before each run (do_bench) on a GPU."""
    if device == "cuda":
        import triton.testing

        times = triton.testing.do_bench(fn, warmup=10, rep=60, return_mode="all")
        times = sorted(times)
        med = times[len(times) // 2]
        mean = sum(times) / len(times)
        std = math.sqrt(sum((t - mean) ** 2 for t in times) / max(1, len(times) - 1))
        return med, std, len(times)
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3, 0.0, 1


def sweep_task(
    task_id: str, path: Path, args: argparse.Namespace, workers: Workers, out: Path
) -> dict[str, Any]:
    import torch

    from kernelwright.design import plan_task

    t_start = time.monotonic()
    plan = plan_task(_load(path, args.size), args.device, args.size, isolate=False)
    variants = variants_for(plan, args.designs, args.configs, args.full_space, task_id)
    src_dir = out / "src" / task_id
    src_dir.mkdir(parents=True, exist_ok=True)
    files: list[tuple[int, Any, Path]] = []
    for k, (di, design) in enumerate(variants):
        f = src_dir / f"d{di}_{k:03d}.py"
        try:
            f.write_text(plan.render(design))
        except Exception as exc:
            print(f"    render failed d{di}: {type(exc).__name__}: {exc}", flush=True)
            continue
        files.append((di, design, f))
    chunks = [
        (str(path), args.device, args.size, [str(f) for _, _, f in files[i :: args.workers]])
        for i in range(args.workers)
    ]
    checked: dict[str, dict[str, Any]] = {}
    for r in workers.run([c for c in chunks if c[3]], args.task_timeout):
        checked[r["file"]] = r
    t_compiled = time.monotonic()
    ref = Reference(path, args.device, args.size)
    with torch.no_grad():
        eager = bench(lambda: ref.model(*ref.inputs), args.device)
    floor_ms = ref.bytes_moved() / (args.bandwidth * 1e9) * 1e3
    results: list[dict[str, Any]] = []
    for di, design, f in files:
        row = dict(checked.get(str(f), {"status": "error", "why": "not checked"}))
        row.update(
            task=task_id,
            design=di,
            structure=design.structure_key(),
            params=design.params_json(),
            default=design.stage == "structure",
        )
        slow = max(args.slow_ms, 20 * eager[0])
        if row["status"] == "ok" and row.get("run_ms", 0) > slow:
            # one run is enough to know it loses; timing it would eat the call
            row.update(status="too_slow", time_ms=row["run_ms"], time_std_ms=0.0, n_rep=1)
        elif row["status"] == "ok":
            try:
                model = ref.build(load_solution(f))
                with torch.no_grad():
                    ms, std, n = bench(lambda m=model: m(*ref.inputs), args.device)
                row.update(time_ms=ms, time_std_ms=std, n_rep=n)
            except Exception as exc:
                row.update(status="error", why=f"timing: {type(exc).__name__}: {exc}"[:300])
        results.append(row)
        with (out / "sweep.jsonl").open("a") as fh:
            fh.write(json.dumps(row) + "\n")
    write_spaces(task_id, results, out / "spaces")
    ok = [r for r in results if r.get("time_ms")]
    best = min(ok, key=lambda r: r["time_ms"]) if ok else None
    default = next((r for r in ok if r["default"] and r["design"] == 0), None)
    ref.release()
    if args.device == "cuda":
        torch.cuda.empty_cache()
    return {
        "task": task_id,
        "variants": len(results),
        "ok": len(ok),
        "eager_ms": eager[0],
        "default_ms": default["time_ms"] if default else None,
        "best_ms": best["time_ms"] if best else None,
        "best_structure": best["structure"] if best else None,
        "best_params": best["params"] if best else None,
        "floor_ms": floor_ms,
        "compile_s": round(t_compiled - t_start, 1),
        "timing_s": round(time.monotonic() - t_compiled, 1),
        "failures": sorted({r.get("why", "")[:80] for r in results if r["status"] != "ok"})[:3],
    }


def _load(path: Path, size: str) -> Any:
    from kernelwright.task import load_task

    return load_task(path, size=size)


def write_spaces(task_id: str, rows: list[dict[str, Any]], folder: Path) -> None:
    """One replay CSV per design: parameters, time_ms, time_std_ms, n_rep, compile_ms, status."""
    folder.mkdir(parents=True, exist_ok=True)
    by_design: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        by_design.setdefault(r["design"], []).append(r)
    for di, rs in by_design.items():
        names = sorted({k for r in rs for k in r["params"]})
        with (folder / f"{task_id}__d{di}.csv").open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(
                [n.replace(".", "_") for n in names]
                + ["time_ms", "time_std_ms", "n_rep", "compile_ms", "status"]
            )
            for r in rs:
                timed = r.get("time_ms") is not None  # too_slow: one run, still a measurement
                w.writerow(
                    [r["params"].get(n, "") for n in names]
                    + [
                        f"{r['time_ms']:.5f}" if timed else "",
                        f"{r.get('time_std_ms', 0):.5f}" if timed else "",
                        r.get("n_rep", 0),
                        f"{r.get('compile_ms', 0):.0f}",
                        "ok" if timed else r["status"],
                    ]
                )


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (
        f"{'task':30} {'n':>4} {'ok':>4} {'eager':>8} {'default':>8} {'best':>8} {'floor':>8} "
        f"{'SOL':>5}  best design / params"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        sol = r["floor_ms"] / r["best_ms"] if r.get("best_ms") else None
        params = ",".join(
            f"{k.split('.')[-1]}={v}" for k, v in (r.get("best_params") or {}).items()
        )
        print(
            f"{r['task'][:30]:30} {r.get('variants', 0):4d} {r.get('ok', 0):4d} "
            f"{fmt(r.get('eager_ms'), '8.4f')} {fmt(r.get('default_ms'), '8.4f')} "
            f"{fmt(r.get('best_ms'), '8.4f')} {fmt(r.get('floor_ms'), '8.4f')} "
            f"{fmt(sol * 100 if sol else None, '4.0f')}%  "
            f"{r.get('best_structure') or r.get('error', '')} {params}"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=ROOT / "benchmarks")
    p.add_argument("--only", default="", help="comma-separated task ids")
    p.add_argument("--shard", default="1/1", help="k/n: every n-th task starting at the k-th")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--size", default=None, choices=("full", "small"))
    p.add_argument("--designs", type=int, default=3, help="designs per task")
    p.add_argument("--configs", type=int, default=8, help="variants per design (with defaults)")
    p.add_argument("--full-space", action="store_true", help="every valid configuration")
    p.add_argument("--workers", type=int, default=6, help="phase-A processes")
    p.add_argument("--bandwidth", type=float, default=4238.0, help="GB/s for the floor")
    p.add_argument("--deadline", type=float, default=520.0, help="seconds for the whole run")
    p.add_argument("--min-task-s", type=float, default=25.0)
    p.add_argument("--task-timeout", type=float, default=150.0, help="phase A cap per task (s)")
    p.add_argument("--slow-ms", type=float, default=50.0, help="don't time variants slower")
    p.add_argument("--out", type=Path, default=None, help="default: $OUT/sweep")
    args = p.parse_args(argv)
    if args.size is None:
        args.size = "full" if args.device == "cuda" else "small"
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # before the workers start: they inherit it
    start = time.monotonic()
    out = args.out or Path(os.environ.get("OUT") or ".") / "sweep"
    out.mkdir(parents=True, exist_ok=True)
    only = {s for s in args.only.split(",") if s}
    tasks = discover(args.root, only)
    k, n = (int(x) for x in args.shard.split("/"))
    tasks = tasks[k - 1 :: n]
    print(f"{len(tasks)} tasks, {args.designs} designs x {args.configs} configs", flush=True)
    rows: list[dict[str, Any]] = []
    _watchdog()
    workers = Workers(args.workers)
    try:
        for task_id, _family, path in tasks:
            if start + args.deadline - time.monotonic() < args.min_task_s:
                rows.append({"task": task_id, "error": "skipped: deadline"})
                continue
            print(f"[{time.monotonic() - start:6.1f}s] {task_id}", flush=True)
            try:
                row = sweep_task(task_id, path, args, workers, out)
            except Exception as exc:
                row = {"task": task_id, "error": f"{type(exc).__name__}: {exc}"[:200]}
                traceback.print_exc(limit=3)
            rows.append(row)
            with (out / "tasks.jsonl").open("a") as fh:
                fh.write(json.dumps(row) + "\n")
            print(
                f"    {row.get('ok', 0)}/{row.get('variants', 0)} ok, best "
                f"{fmt(row.get('best_ms'), '.4f')} ms "
                f"(default {fmt(row.get('default_ms'), '.4f')}, "
                f"eager {fmt(row.get('eager_ms'), '.4f')}, "
                f"floor {fmt(row.get('floor_ms'), '.4f')}); "
                f"compile {row.get('compile_s')} s, timing {row.get('timing_s')} s "
                f"{row.get('failures') or row.get('error') or ''}",
                flush=True,
            )
    finally:
        workers.close()
    print()
    print_table(rows)
    print(f"\n{time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
