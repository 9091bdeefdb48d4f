"""One GPU call that measures the harness itself (issues 2 and 3) and runs the GPU tests.

    PYTHONPATH=src python scripts/gpu_check.py [--deadline 420]

Measures, on the examples at full size:
  * the speed-of-light fraction a plain streaming Triton kernel is reported to reach
    (examples/scale: y = 2x, 512 MB in, 512 MB out);
  * per-candidate harness overhead: an evaluation's wall time minus the candidate's own
    compile-and-first-run and timing loop (read from the phase timeline);
  * the spread of the candidate's median over 3 repeated evaluations (target < 3%);
  * what the guard adds to an evaluation's time (guard on vs off, warm caches);
then runs tests/gpu. Everything goes to $OUT (when set) as JSON; a short table is printed last.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("OUT", ROOT / "runs" / "gpu_check"))


def timeline_eval(task: str, solution: str, **opts: Any) -> dict[str, Any]:
    """Evaluate with phase timestamps; returns the verdict dict plus the phase durations."""
    from kernelwright.evaluate import EvalOptions, evaluate

    marks: list[tuple[float, str]] = []
    t0 = time.monotonic()
    verdict = evaluate(
        ROOT / task,
        ROOT / solution,
        EvalOptions(device="cuda", **opts),
        on_progress=lambda p: marks.append((time.monotonic() - t0, p)),
    )
    total = time.monotonic() - t0
    marks.append((total, "end"))
    phases: dict[str, float] = {}
    for (t, name), (t_next, _) in zip(marks, marks[1:], strict=False):
        phases[name] = phases.get(name, 0.0) + (t_next - t)
    first_run = next((d for n, d in phases.items() if n.startswith("candidate: trial 1")), 0.0)
    own = first_run + phases.get("candidate: timing", 0.0)
    return {
        "task": task,
        "status": verdict.status.value,
        "message": verdict.message,
        "total_s": total,
        "candidate_own_s": own,
        "overhead_s": total - own,
        "candidate_ms": verdict.timing.candidate.median_ms if verdict.timing.candidate else None,
        "eager_ms": verdict.timing.eager.median_ms if verdict.timing.eager else None,
        "compile_ms": verdict.timing.compile.median_ms if verdict.timing.compile else None,
        "sol_fraction": verdict.sol.fraction if verdict.sol else None,
        "sol_floor_ms": verdict.sol.floor_ms if verdict.sol else None,
        "memory_gbps": verdict.sol.memory_gbps if verdict.sol else None,
        "bytes": verdict.sol.bytes if verdict.sol else None,
        "violations": [v.check for v in verdict.violations],
        "phases": phases,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deadline", type=float, default=420.0, help="seconds for measurements")
    parser.add_argument("--skip-tests", action="store_true")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("KERNELWRIGHT_HOME", str(OUT / "home"))
    start = time.monotonic()
    results: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M:%S")}
    log = OUT / "gpu_check.jsonl"

    def record(key: str, value: Any) -> None:
        results[key] = value
        with log.open("a") as fh:
            fh.write(json.dumps({key: value}) + "\n")
        print(f"[{time.monotonic() - start:6.1f}s] {key}: {json.dumps(value)[:400]}", flush=True)

    def time_left() -> bool:
        return time.monotonic() - start < args.deadline

    steps = [
        ("scale_cold", ("examples/scale/task.py", "examples/scale/solution.py", {})),
        ("softmax_cold", ("examples/softmax/task.py", "examples/softmax/solution.py", {})),
        ("rmsnorm_cold", ("examples/rmsnorm/task.py", "examples/rmsnorm/solution.py", {})),
        ("relu_cuda_cold", ("examples/relu_cuda/task.py", "examples/relu_cuda/solution.py", {})),
    ]
    for key, (task, sol, opts) in steps:
        if not time_left():
            record(key, "skipped: deadline")
            continue
        try:
            record(key, timeline_eval(task, sol, **opts))
        except Exception as exc:  # keep measuring the rest
            record(key, f"error: {type(exc).__name__}: {exc}")

    repeats = []
    for i in range(3):
        if not time_left():
            break
        try:
            r = timeline_eval("examples/rmsnorm/task.py", "examples/rmsnorm/solution.py")
            repeats.append(r)
            record(f"rmsnorm_warm_{i}", r)
        except Exception as exc:
            record(f"rmsnorm_warm_{i}", f"error: {type(exc).__name__}: {exc}")
    medians = [r["candidate_ms"] for r in repeats if r.get("candidate_ms")]
    if len(medians) >= 2:
        record(
            "spread",
            {"medians_ms": medians, "spread": (max(medians) - min(medians)) / min(medians)},
        )
    guard_times: dict[str, list[float]] = {"on": [r["total_s"] for r in repeats], "off": []}
    for _ in range(2):
        if not time_left():
            break
        try:
            r = timeline_eval(
                "examples/rmsnorm/task.py", "examples/rmsnorm/solution.py", guard=False
            )
            guard_times["off"].append(r["total_s"])
        except Exception as exc:
            record("guard_off", f"error: {type(exc).__name__}: {exc}")
    if guard_times["on"] and guard_times["off"]:
        on, off = statistics.median(guard_times["on"]), statistics.median(guard_times["off"])
        record("guard_overhead", {"on_s": on, "off_s": off, "fraction": (on - off) / off})

    if not args.skip_tests:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "tests/gpu",
                "-x",
                "--timeout=600",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
        )
        record(
            "gpu_tests",
            {"returncode": proc.returncode, "tail": (proc.stdout + proc.stderr)[-3000:]},
        )

    (OUT / "gpu_check.json").write_text(json.dumps(results, indent=1, default=str))
    print("\n== summary ==")
    for key in ("scale_cold", "softmax_cold", "rmsnorm_cold", "relu_cuda_cold"):
        r = results.get(key)
        if isinstance(r, dict):
            gbps = (
                r["bytes"] / (r["candidate_ms"] * 1e-3) / 1e9
                if r.get("bytes") and r.get("candidate_ms")
                else None
            )
            print(
                f"{key:16s} {r['status']:10s} cand {r['candidate_ms'] or 0:8.4f} ms  eager "
                f"{r['eager_ms'] or 0:8.4f}  compile {r['compile_ms'] or 0:8.4f}  SOL "
                f"{(r['sol_fraction'] or 0):5.1%}  {gbps or 0:7.0f} GB/s  total "
                f"{r['total_s']:5.1f}s overhead {r['overhead_s']:5.1f}s"
            )
        else:
            print(f"{key:16s} {r}")
    for i in range(3):
        r = results.get(f"rmsnorm_warm_{i}")
        if isinstance(r, dict):
            print(
                f"rmsnorm warm {i}: {r['candidate_ms']:.4f} ms total {r['total_s']:.1f}s "
                f"overhead {r['overhead_s']:.1f}s"
            )
    print("spread", results.get("spread"))
    print("guard", results.get("guard_overhead"))
    tests = results.get("gpu_tests")
    if isinstance(tests, dict):
        print("gpu tests rc", tests["returncode"], tests["tail"][-600:])


if __name__ == "__main__":
    main()
