"""Check and time kernelwright's GEMM templates against cuBLAS (eager torch) and torch.compile.

For each case (a KernelBench-format task of the suite: the 4096^3 square product, a tall-skinny
product, a split-K product, a level-2 linear + scale + residual + clamp, a matrix-vector product,
a transposed operand) and each precision policy (fp32: TF32 off; tf32: TF32 allowed; bf16:
bf16 inputs and weights), the script

  - plans the task with the structure stage (``kernelwright.design.plan_task``) and renders the
    top design and a few parameter variants of it (``DesignPlan.render``): TMA or pointer loads,
    a shallower pipeline, IEEE fp32 instead of 3xTF32, the narrower TMA tile for bf16;
  - runs each candidate's ``ModelNew``, the eager ``Model`` (cuBLAS) and ``torch.compile(Model)``
    on the same inputs, with the policy applied (``kernelwright.evaluate.precision``);
  - measures each one's largest error against the same Model run in float64 (from the same
    inputs and weights, after the policy's cast) and times it (``triton.testing.do_bench``:
    CUDA events, L2 flushed before each run, the median), and on a GPU the host time a call
    takes when calls are issued back to back (the wrapper's Python and launches: where it
    passes the GPU time, the GPU waits between calls);
  - with ``--verify``, also judges each case's default candidate under each policy with the
    harness (``kernelwright.evaluate``: trials, guard, tolerances), time permitting.

    python scripts/bench_gemm.py --out runs/bench_gemm                # on one H200, < 8 min
    TRITON_INTERPRET=1 python scripts/bench_gemm.py --small --out /tmp/bench_gemm   # on a CPU

Writes ``OUT/bench_gemm.jsonl`` (one row per measurement), ``OUT/candidates/*.py`` (every file
timed) and prints the table last. A deadline (``--budget-s``) skips what would not finish;
skipped rows say so. CPU timings (the interpreter) mean nothing; only the errors count there.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import functools
import importlib.util
import json
import logging
import os
import statistics
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# (case, task file): the order is the priority under the deadline
CASES = [
    ("square 4096^3", "benchmarks/level1/31_gemm_square.py"),
    ("linear+scale+res+clamp", "benchmarks/level2/02_gemm_scale_residual_clamp.py"),
    ("tall-skinny", "benchmarks/level1/32_gemm_tall_skinny.py"),
    ("matvec", "benchmarks/level1/35_matvec.py"),
    ("split-K", "benchmarks/level1/39_gemm_split_k.py"),
    ("A^T @ B", "benchmarks/level1/34_gemm_transposed_a.py"),
]
POLICIES = ("fp32", "tf32", "bf16")
# variant -> (GEMM parameters changed from the default design, policies it is timed under)
VARIANTS: dict[str, tuple[dict[str, int], tuple[str, ...]]] = {
    "stages3": ({"STAGES": 3}, POLICIES),  # the default is 4 (measurements.csv)
    "ieee": ({"FP32_MATH": 1}, ("fp32",)),
    # the TMA kernel's 128-column tile under bf16 (the wrapper doubles a 2-byte TMA tile's BLOCK_N)
    "bn64": ({"BLOCK_N": 64}, ("bf16",)),
    "bk64": ({"BLOCK_K": 64}, ("fp32", "tf32")),
}


@dataclass
class Row:
    """One measurement."""

    case: str
    policy: str
    name: str  # kw:<variant>, cublas (eager torch), compile
    ms: float | None = None
    max_err: float | None = None  # against the float64 run
    rel_err: float | None = None  # max_err / max |float64 result|
    tflops: float | None = None
    host_ms: float | None = None  # host time a call, issued without waiting (GPU only)
    note: str = ""
    skills: list[str] = field(default_factory=list)


class Deadline:
    """Seconds left of the budget."""

    def __init__(self, budget_s: float) -> None:
        self.end = time.monotonic() + budget_s

    def left(self) -> float:
        return self.end - time.monotonic()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--small", action="store_true", help="the tasks' small sizes (CPU runs)")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--no-variants", action="store_true", help="time the default design only")
    ap.add_argument("--compile", dest="compile", action="store_true", default=None)
    ap.add_argument("--no-compile", dest="compile", action="store_false")
    ap.add_argument("--verify", action="store_true", help="judge defaults with the harness")
    ap.add_argument("--budget-s", type=float, default=420.0)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    logging.getLogger("torch._export").setLevel(logging.ERROR)  # dynamic-shape notes at capture
    sys.path.insert(0, str(ROOT / "src"))

    device = pick_device()
    if device is None:
        return 2
    size = "small" if args.small else "full"
    use_compile = args.compile if args.compile is not None else device == "cuda"
    wanted = {c.strip() for c in args.cases.split(",") if c.strip()}
    cases = [(c, p) for c, p in CASES if not wanted or c in wanted]
    policies = [p for p in args.policies.split(",") if p]
    out: Path = args.out
    (out / "candidates").mkdir(parents=True, exist_ok=True)
    deadline = Deadline(args.budget_s)
    rows: list[Row] = []
    log = (out / "bench_gemm.jsonl").open("w")
    planned: list[tuple[str, Path, list[Candidate]]] = []
    for case, rel in cases:
        path = ROOT / rel
        if not path.exists():
            rows.append(Row(case, "-", "-", note=f"{rel} missing"))
            continue
        try:
            planned.append((case, path, plan_candidates(case, path, size, device, out)))
        except Exception as exc:  # a case that cannot be planned is a row, not the end
            rows.append(Row(case, "-", "plan", note=f"{type(exc).__name__}: {exc}"[:120]))
            traceback.print_exc()

    def record(found: list[Row]) -> None:
        for row in found:
            rows.append(row)
            log.write(json.dumps(row.__dict__) + "\n")
            log.flush()
            print(fmt(row), flush=True)

    # first every case's default design (TMA and pointer loads) and both baselines under every
    # policy, then the parameter variants while time remains, then the harness's verdicts
    for case, path, candidates in planned:
        first = [c for c in candidates if c.variant in ("default", "pointers")]
        for policy in policies:
            record(measure(case, path, size, device, policy, first, use_compile, True, deadline))
    if not args.no_variants:
        for case, path, candidates in planned:
            rest = [c for c in candidates if c.variant not in ("default", "pointers")]
            for policy in policies:
                if any(policy in c.policies for c in rest):
                    record(measure(case, path, size, device, policy, rest, False, False, deadline))
    if args.verify:
        for case, path, candidates in planned:
            record(verify(case, path, size, device, policies, candidates, deadline))
    log.close()
    print_table(rows, device)
    return 0


@dataclass
class Candidate:
    """A rendered design and the policies it is timed under."""

    variant: str
    file: Path
    skills: list[str]
    policies: tuple[str, ...]


def plan_candidates(case: str, path: Path, size: str, device: str, out: Path) -> list[Candidate]:
    """The top design and its variants (GEMM parameters changed), rendered to files."""
    from kernelwright.design.choices import Design
    from kernelwright.design.plan import plan_task
    from kernelwright.task import load_task

    task = load_task(path, size=size)
    plan = plan_task(task, device, size, isolate=False)
    if not plan.designs:
        raise RuntimeError(f"no design: {plan.framework_groups()}")
    top = plan.designs[0]
    designs: list[tuple[str, Any, tuple[str, ...]]] = [("default", top, POLICIES)]
    if "gemm-tma-loads" in top.skills:
        pointer = next((d for d in plan.designs if "gemm-tma-loads" not in d.skills), None)
        if pointer is not None:
            designs.append(("pointers", pointer, POLICIES))
    gemm = any(c.kind == "gemm" for c in top.choices)
    for variant, (params, policies) in VARIANTS.items():
        if not gemm:
            break
        choices = tuple(
            c.with_params({**c.params, **params}) if c.kind == "gemm" else c for c in top.choices
        )
        designs.append((variant, Design(choices, "tuning"), policies))
    found = []
    slug = "".join(ch if ch.isalnum() else "_" for ch in case)
    for variant, design, policies in designs:
        file = out / "candidates" / f"{slug}__{variant}.py"
        file.write_text(plan.render(design))
        found.append(Candidate(variant, file, list(design.skills), policies))
    return found


def pick_device() -> str | None:
    """cuda where there is a GPU, else cpu under Triton's interpreter, set up as for the
    harness's candidate processes on the CPU; None (said on stderr) on a CPU without the
    interpreter, where the emitted kernels cannot run."""
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if os.environ.get("TRITON_INTERPRET") != "1":
        print("no GPU: run under TRITON_INTERPRET=1 (with --small)", file=sys.stderr)
        return None
    from kernelwright.evaluate.interpreter import prepare_interpreter

    prepare_interpreter()
    return "cpu"


@contextlib.contextmanager
def csv_rows(path: Path, fields: list[str],
             show: Callable[[dict[str, Any]], str]) -> Iterator[Callable[[dict[str, Any]], None]]:
    """A writer of rows to a new CSV at ``path`` (its folder made): each row is flushed as it
    comes, so a crash keeps what was measured, and printed as ``show`` words it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fields, extrasaction="ignore")
        writer.writeheader()

        def write(row: dict[str, Any]) -> None:
            writer.writerow(row)
            fh.flush()
            print(show(row), flush=True)

        yield write


def load_module(file: Path) -> Any:
    """Import a rendered file (Triton reads kernel sources from the file)."""
    spec = importlib.util.spec_from_file_location(f"bench_{file.stem}", file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(
    case: str,
    path: Path,
    size: str,
    device: str,
    policy: str,
    candidates: list[Candidate],
    use_compile: bool,
    baselines: bool,
    deadline: Deadline,
) -> list[Row]:
    """The candidates (and eager PyTorch, and torch.compile) under one policy."""
    import torch

    from kernelwright.evaluate.precision import apply_policy, cast_value, prepare_model
    from kernelwright.records import Precision
    from kernelwright.task.module import import_task_module

    if deadline.left() < 20:
        return [Row(case, policy, "-", note="skipped: deadline")]
    precision = Precision(policy)
    apply_policy(precision)
    task = import_task_module(path, size)
    init = list(task.get_init_inputs()) if hasattr(task, "get_init_inputs") else []
    torch.manual_seed(0)
    inputs = [cast_value(x, precision) for x in task.get_inputs()]
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
    torch.manual_seed(1)
    reference = prepare_model(task.Model(*init), device, precision)
    with torch.no_grad():
        exact = copy.deepcopy(reference).double()(*[_double(x) for x in inputs])
    flops = _flops(path, size)
    rows: list[Row] = []

    def run(name: str, fn: Any, skills: list[str] | None = None) -> None:
        if deadline.left() < 10:
            rows.append(Row(case, policy, name, note="skipped: deadline"))
            return
        row = Row(case, policy, name, skills=skills or [])
        try:
            with torch.no_grad():
                got = fn()
                err = (got.double() - exact).abs().max().item()
                row.max_err = err
                row.rel_err = err / max(exact.abs().max().item(), 1e-30)
                row.ms = _time(fn, device)
                row.host_ms = _host_time(fn) if device == "cuda" else None
            if row.ms and flops:
                row.tflops = flops / row.ms / 1e9
        except Exception as exc:  # a failing candidate is a finding: record it, go on
            row.note = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            row.note = row.note[:160]
        rows.append(row)

    if baselines:
        run("cublas", lambda: reference(*inputs))
    if baselines and use_compile:
        compiled = torch.compile(reference)
        run("compile", lambda: compiled(*inputs))
    for cand in candidates:
        if policy not in cand.policies:
            continue
        module = load_module(cand.file)
        torch.manual_seed(1)
        model = prepare_model(module.ModelNew(*init), device, precision)
        run(f"kw:{cand.variant}", lambda model=model: model(*inputs), cand.skills)
    return rows


def verify(
    case: str,
    path: Path,
    size: str,
    device: str,
    policies: list[str],
    candidates: list[Candidate],
    deadline: Deadline,
) -> list[Row]:
    """The harness's verdict on the default candidate under each policy."""
    import kernelwright
    from kernelwright.records import Precision

    rows = []
    default = next(c for c in candidates if c.variant == "default")
    for policy in policies:
        if deadline.left() < 60:
            rows.append(Row(case, policy, "harness", note="skipped: deadline"))
            continue
        options = kernelwright.EvalOptions(
            device=device, precision=Precision(policy), size=size, compile_baseline=False
        )
        v = kernelwright.evaluate(str(path), str(default.file), options)
        t = v.timing.candidate
        rows.append(
            Row(
                case,
                policy,
                "harness",
                ms=t.median_ms if t else None,
                max_err=v.max_abs_err,
                note=f"{v.status.value}: {v.message}"[:160],
                skills=default.skills,
            )
        )
    return rows


def _double(x: Any) -> Any:
    import torch

    return x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x


def _time(fn: Any, device: str) -> float:
    """Median milliseconds: CUDA events with the L2 flushed (do_bench) on a GPU; wall clock on
    the CPU (the interpreter: not representative)."""
    if device == "cuda":
        import triton.testing

        return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1e3)
    return statistics.median(runs)


@functools.cache
def _host_time(fn: Any) -> float:
    """Milliseconds of host time a call, issued without waiting for the GPU (the wrapper's
    Python and its launches): the least of three rounds of 50 calls back to back (the host's
    time moves between rounds by more than the difference between designs). Where it passes
    the GPU time, calls made back to back leave the GPU idle between kernels, as in the
    harness's timed batches."""
    import torch

    best = float("inf")
    for _ in range(3):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(50):
            fn()
        best = min(best, (time.perf_counter() - start) * 1e3 / 50)
        torch.cuda.synchronize()
    return best


def _flops(path: Path, size: str) -> float | None:
    """Floating-point operations of the task's products (2 M N K each), from its graph."""
    from kernelwright.design.capture import capture_path

    graph = capture_path(path, size)
    total = 0
    for n in graph.nodes:
        if n.target in ("aten.mm.default", "aten.addmm.default", "aten.bmm.default"):
            a = n.args[1] if n.target == "aten.addmm.default" else n.args[0]
            k = graph.meta(a.name).hint[-1]  # type: ignore[union-attr]
            total += 2 * k * n.out.numel
    return float(total) or None


def fmt(r: Row) -> str:
    ms = f"{r.ms:9.4f}" if r.ms is not None else "        -"
    tf = f"{r.tflops:7.1f}" if r.tflops is not None else "      -"
    err = f"{r.max_err:9.2e}" if r.max_err is not None else "        -"
    rel = f"{r.rel_err:9.2e}" if r.rel_err is not None else "        -"
    host = f"{r.host_ms:9.4f}" if r.host_ms is not None else "        -"
    return f"{r.case:24} {r.policy:5} {r.name:14} {ms} {tf} {err} {rel} {host}  {r.note}"


def _ms(r: Row | None) -> str:
    return f"{r.ms:9.4f}" if r is not None and r.ms is not None else "        -"


def _ratio(base: Row | None, best: Row | None) -> str:
    """How many times faster ``best`` ran than ``base``."""
    if base is None or base.ms is None or best is None or not best.ms:
        return "-"
    return f"{base.ms / best.ms:.2f}x"


def _err(r: Row | None, width: int) -> str:
    return f"{r.max_err:{width}.2e}" if r is not None and r.max_err is not None else "-" * width


def print_table(rows: list[Row], device: str) -> None:
    """Every measurement, then per case and policy the best kernelwright candidate against
    cuBLAS (eager) and torch.compile."""
    print()
    print(
        "all measurements (ms median; TFLOP/s; max |err| and max |err| / max |x| vs float64;"
        " host ms a call, issued without waiting):"
    )
    print(
        f"{'case':24} {'pol':5} {'name':14} {'ms':>9} {'TFLOP/s':>7} {'max err':>9} {'rel':>9}"
        f" {'host ms':>9}"
    )
    for r in rows:
        print(fmt(r))
    print()
    print("summary" + (" (CPU interpreter: timings mean nothing)" if device == "cpu" else ""))
    print(
        f"{'case':24} {'pol':5} {'best kw':14} {'kw ms':>9} {'cuBLAS':>9} {'compile':>9} "
        f"{'x cuBLAS':>8} {'x comp':>7} {'kw err':>9} {'cuBLAS err':>10}"
    )
    keys = dict.fromkeys((r.case, r.policy) for r in rows if r.policy != "-")
    for case, policy in keys:
        mine = [r for r in rows if (r.case, r.policy) == (case, policy)]
        kw = [r for r in mine if r.name.startswith("kw:") and r.ms is not None]
        base = {r.name: r for r in mine if r.name in ("cublas", "compile")}
        best = min(kw, key=lambda r: r.ms or 0.0) if kw else None
        cub, comp = base.get("cublas"), base.get("compile")
        print(
            f"{case:24} {policy:5} {best.name if best else '-':14} {_ms(best)} {_ms(cub)} "
            f"{_ms(comp)} {_ratio(cub, best):>8} {_ratio(comp, best):>7} {_err(best, 9)} "
            f"{_err(cub, 10)}"
        )


if __name__ == "__main__":
    sys.exit(main())
