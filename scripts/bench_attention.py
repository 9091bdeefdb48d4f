"""Check and time kernelwright's flash-attention template against PyTorch's attention kernels.

For each case (a task of the suite: non-causal and causal attention at head dim 64) and each
math (``FP32_MATH``: 0 = 3xTF32, 1 = IEEE fp32 on CUDA cores) with a few block shapes, the
script renders the top design with those parameters (``DesignPlan.render``), then under the
fp32 policy

  - measures each kernel's largest error, and eager PyTorch's, against the same attention in
    float64, on the task's inputs and on the inputs scaled by 64 (the harness's ``scaled``
    trial: scores in the thousands, where the softmax magnifies a score's error);
  - times each one (``triton.testing.do_bench``: CUDA events, L2 flushed, the median), with
    eager PyTorch (its memory-efficient kernel) and torch.compile.

    python scripts/bench_attention.py --out runs/bench_attention      # on one H200, < 4 min
    TRITON_INTERPRET=1 python scripts/bench_attention.py --small --out /tmp/bench_attention

Writes ``OUT/bench_attention.jsonl`` (one row per measurement) and ``OUT/candidates/*.py``.
A kernel whose error on either input set exceeds 4x eager fp32's (the harness's tolerance rule)
would be refused under the fp32 policy: the table marks it.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gemm import Deadline, _time, load_module, pick_device  # noqa: E402

CASES = [
    ("sdpa d64", "benchmarks/level1/37_sdpa.py"),
    ("sdpa causal d64", "benchmarks/level1/38_sdpa_causal.py"),
]
# variant -> attention parameters over the default design's
VARIANTS: dict[str, dict[str, int]] = {
    "3xtf32 128x64": {"FP32_MATH": 0, "BLOCK_M": 128, "BLOCK_N": 64, "WARPS": 8},
    "3xtf32 128x32": {"FP32_MATH": 0, "BLOCK_M": 128, "BLOCK_N": 32, "WARPS": 8},
    "3xtf32 64x64": {"FP32_MATH": 0, "BLOCK_M": 64, "BLOCK_N": 64, "WARPS": 4},
    "ieee 64x32": {"FP32_MATH": 1, "BLOCK_M": 64, "BLOCK_N": 32, "WARPS": 8},
}
SCALE = 64.0  # the harness's scaled trial (evaluate/inputs.py)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--small", action="store_true", help="the tasks' small sizes (CPU runs)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--budget-s", type=float, default=300.0)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT / "src"))

    device = pick_device()
    if device is None:
        return 2
    size = "small" if args.small else "full"
    out: Path = args.out
    (out / "candidates").mkdir(parents=True, exist_ok=True)
    deadline = Deadline(args.budget_s)
    rows: list[dict[str, Any]] = []
    with (out / "bench_attention.jsonl").open("w") as log:
        for case, rel in CASES:
            try:
                found = measure_case(
                    case,
                    ROOT / rel,
                    size,
                    device,
                    out,
                    deadline,
                    not args.no_compile and device == "cuda",
                )
            except Exception as exc:  # a case that fails is a row, not the end
                traceback.print_exc()
                found = [{"case": case, "name": "-", "note": f"{type(exc).__name__}: {exc}"}]
            for row in found:
                rows.append(row)
                log.write(json.dumps(row) + "\n")
                log.flush()
                print(fmt(row), flush=True)
    print()
    print("ms: median; err: max |x - float64| on the task's inputs / on inputs scaled by 64;")
    print("refused: an error past 4x eager fp32's on either set (the harness's tolerance rule)")
    for row in rows:
        print(fmt(row))
    return 0


def measure_case(
    case: str,
    path: Path,
    size: str,
    device: str,
    out: Path,
    deadline: Deadline,
    use_compile: bool,
) -> list[dict[str, Any]]:
    import torch

    from kernelwright.design.choices import Design
    from kernelwright.design.plan import plan_task
    from kernelwright.evaluate.precision import apply_policy
    from kernelwright.records import Precision
    from kernelwright.task import load_task
    from kernelwright.task.module import import_task_module

    apply_policy(Precision.FP32)
    plan = plan_task(load_task(path, size=size), device, size, isolate=False)
    top = plan.designs[0]
    task = import_task_module(path, size)
    torch.manual_seed(0)
    inputs = [x.to(device) for x in task.get_inputs()]
    sets = {"task": inputs, "scaled": [x * SCALE for x in inputs]}
    model = task.Model().to(device)
    exact = {k: model(*[x.double() for x in v]) for k, v in sets.items()}
    b, h, m, d = inputs[0].shape
    n = inputs[1].shape[2]
    flops = 4.0 * b * h * m * n * d * (0.5 if "causal" in case else 1.0)
    rows: list[dict[str, Any]] = []

    def run(name: str, fn: Any, params: dict[str, int] | None = None) -> None:
        row: dict[str, Any] = {"case": case, "name": name, "params": params or {}}
        if deadline.left() < 10:
            row["note"] = "skipped: deadline"
            rows.append(row)
            return
        try:
            with torch.no_grad():
                for k, xs in sets.items():
                    row[f"err_{k}"] = (fn(*xs).double() - exact[k]).abs().max().item()
                row["ms"] = _time(lambda: fn(*inputs), device)
                row["tflops"] = flops / row["ms"] / 1e9
        except Exception as exc:  # a failing kernel is a finding: record it, go on
            row["note"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:140]}"
        rows.append(row)

    run("eager", model)
    if use_compile:
        run("compile", torch.compile(model))
    for variant, params in VARIANTS.items():
        choices = tuple(
            c.with_params({**c.params, **params}) if c.kind == "attention" else c
            for c in top.choices
        )
        slug = "".join(ch if ch.isalnum() else "_" for ch in f"{case}__{variant}")
        file = out / "candidates" / f"{slug}.py"
        file.write_text(plan.render(Design(choices, "tuning")))
        run(f"kw {variant}", load_module(file).ModelNew().to(device), params)
    eager = next((r for r in rows if r["name"] == "eager"), {})
    for row in rows:
        worse = [
            k
            for k in ("task", "scaled")
            if f"err_{k}" in row and f"err_{k}" in eager and row[f"err_{k}"] > 4 * eager[f"err_{k}"]
        ]
        if worse:
            row["note"] = (row.get("note", "") + f" refused ({', '.join(worse)})").strip()
    return rows


def fmt(r: dict[str, Any]) -> str:
    def num(key: str, spec: str) -> str:
        v = r.get(key)
        return format(v, spec) if isinstance(v, float) else "-"

    return (
        f"{r['case']:16} {r['name']:16} ms {num('ms', '8.4f')} TFLOP/s {num('tflops', '6.1f')} "
        f"err {num('err_task', '.2e')} / {num('err_scaled', '.2e')}  {r.get('note', '')}"
    )


if __name__ == "__main__":
    sys.exit(main())
