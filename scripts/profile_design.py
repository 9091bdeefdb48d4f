"""Where a call's time goes: each kernel of a task's designs, eager PyTorch and torch.compile,
and the host's time to issue a call.

    python scripts/profile_design.py kernelbench/level2/1_Conv2D_ReLU_BiasAdd.py \\
        --precision bf16 --designs 2 --out runs/profile-conv
    TRITON_INTERPRET=1 python scripts/profile_design.py TASK --small --out DIR   # a CPU check

A development instrument, like ``sweep_design.py``, not a verdict: kernelwright's own generated
kernels (trusted code) are imported in this process. For each contender (the task's ``Model``,
``torch.compile`` of it, then the first ``--designs`` ranked designs at their defaults) the
script times a call with ``triton.testing.do_bench`` (the median; on a CPU the wall clock of
the interpreter, which means nothing), checks its largest error against the task's model and
records five calls under ``torch.profiler`` (each kernel's name, launches a call and device
time a call). On a GPU it also measures the host's time to issue a call (calls made back to
back without waiting: where it passes the call's device time, the device waits for the host
and a faster kernel does not make the call faster), the calls of a batch made as the harness's
timed batches make them (each on inputs of its own, two events around it, the outputs kept:
host issuing, device span and events a call, which the verdict's breakdown of the same design
less these leaves as the harness's own time) and, for kernelwright's designs, where the host
time goes (the forward with its Triton launches skipped, then each launch timed in place).
Model, inputs and plan follow ``--precision`` as the harness applies it. Writes
``OUT/profile.csv`` row by row (a crash keeps what was measured) and ``OUT/candidates/*.py``,
and prints each contender's kernels, slowest first.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gemm import _host_time, _time, csv_rows, load_module, pick_device  # noqa: E402

FIELDS = [
    "task", "contender", "precision", "call_ms", "host_ms", "max_err", "kernel", "launches",
    "us_a_call", "host_us", "batch_issue_ms", "batch_span_ms", "batch_events_ms",
    "batch_forward_ms",
]
BATCH_CALLS = 64  # calls of a batch made as the harness makes them (fewer for large inputs)
BATCH_BYTES = 8 << 30  # the batch's own input copies at most
CALLS = 5  # profiled calls a contender
WRAPPERS = "(host) the forward without its Triton launches"  # the host rows' first kernel name


def launch_costs(fn: Any) -> list[tuple[str, float]]:
    """Where a design's host time goes, on a GPU: µs a call of ``fn`` with every Triton launch
    skipped (its wrappers' Python and PyTorch's own calls), then µs a launch of each kernel,
    timed in place inside calls of ``fn`` (the least of its launches: one that found the
    device's queue full waited for the GPU), whichever way it is launched (Triton's JIT path, or
    the compiled kernel a wrapper keeps). Never made alone again: a kernel whose wrapper
    prepares state for it each call (a team's zeroed arrival counts) could wait forever."""
    from triton.compiler.compiler import CompiledKernel
    from triton.runtime.jit import JITFunction

    run, getitem = JITFunction.run, CompiledKernel.__getitem__
    spent: dict[str, list[float]] = {}

    def timed_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return run(self, *args, **kwargs)
        finally:
            spent.setdefault(self.__name__, []).append(time.perf_counter() - start)

    def timed_getitem(self: Any, grid: Any) -> Any:
        start = time.perf_counter()
        runner = getitem(self, grid)

        def launch(*args: Any, **kwargs: Any) -> Any:
            try:
                return runner(*args, **kwargs)
            finally:
                spent.setdefault(self.name, []).append(time.perf_counter() - start)

        return launch

    def skip_run(self: Any, *args: Any, **kwargs: Any) -> None:
        return None

    def skip_getitem(self: Any, grid: Any) -> Any:
        return lambda *args, **kwargs: None

    try:
        JITFunction.run, CompiledKernel.__getitem__ = skip_run, skip_getitem  # type: ignore
        costs = [(WRAPPERS, _host_time(fn) * 1e3)]
        JITFunction.run, CompiledKernel.__getitem__ = timed_run, timed_getitem  # type: ignore
        fn()  # not kept: a specialisation's first launch takes Triton's own path
        spent.clear()
        _host_time.__wrapped__(fn)  # type: ignore[attr-defined]
    finally:
        JITFunction.run, CompiledKernel.__getitem__ = run, getitem  # type: ignore
    for name, times in spent.items():
        costs.append((f"(host) launch of {name}", min(times) * 1e6))
    return costs


def batched(model: Any, inputs: list[Any], reveal: bool = False,
            idle_s: float = 0.0) -> tuple[float, float, float, float]:
    """(host issuing, device span, median events, host time inside the forwards), ms a call, of
    calls made as the harness's timed batches make them: back to back, each on inputs of its
    own (fresh tensor objects over them), two CUDA events around each, every output kept until
    the batch ends; the least of three batches (by issuing). ``reveal``: each call's held-back
    regions copied into its inputs right before it, as the harness's runner does; ``idle_s``:
    the process sleeps that long before each batch, as a judged one waits while the judge
    checks the previous batch (a core left idle may wake slower and clocked lower). Beside the
    verdict's breakdown of the same design, what is left over is the harness's own host time a
    call."""
    import torch

    from kernelwright.evaluate import reveal as held_back

    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    size = sum(t.numel() * t.element_size() for t in tensors) or 1
    k = max(2, min(BATCH_CALLS, BATCH_BYTES // size))
    sets = [[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs] for _ in range(k)]
    places = [held_back.draw(values) if reveal else [None] * len(values) for values in sets]
    stages = [[s.clone() if s is not None else None for s in held_back.staged(values, spots)]
              for values, spots in zip(sets, places, strict=True)]
    best = (float("inf"), float("inf"), float("inf"), float("inf"))
    for _ in range(3):
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in sets]
        outputs = []
        forward = 0.0
        torch.cuda.synchronize()
        if idle_s:
            time.sleep(idle_s)
        start = time.perf_counter()
        for (before, after), values, staged, spots in zip(events, sets, stages, places,
                                                           strict=True):
            if reveal:
                held_back.apply(values, staged, spots)
            args = [v.as_strided(v.shape, v.stride(), v.storage_offset())
                    if isinstance(v, torch.Tensor) else v for v in values]
            before.record()
            entered = time.perf_counter()
            outputs.append(model(*args))
            forward += time.perf_counter() - entered
            after.record()
        issue = (time.perf_counter() - start) * 1e3 / k
        torch.cuda.synchronize()
        span = events[0][0].elapsed_time(events[-1][1]) / k
        each = sorted(b.elapsed_time(a) for b, a in events)
        best = min(best, (issue, span, each[k // 2], forward * 1e3 / k))
        del outputs
    return best


def kernel_times(fn: Any, device: str) -> list[tuple[str, float, float]]:
    """(kernel, launches a call, device µs a call) of ``CALLS`` calls of ``fn``, slowest first."""
    import torch

    activities = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(CALLS):
            fn()
        if device == "cuda":
            torch.cuda.synchronize()
    rows = []
    for event in prof.key_averages():
        total = getattr(event, "device_time_total", 0.0) or getattr(event, "cuda_time_total", 0.0)
        if device == "cuda" and total <= 0:
            continue  # host-side only (launch calls, Python)
        if device != "cuda" and not event.key.startswith("aten::"):
            continue
        total = total if device == "cuda" else event.cpu_time_total
        rows.append((event.key, event.count / CALLS, total / CALLS))
    return sorted(rows, key=lambda r: -r[2])


def task_contenders(path: Path, precision: str, small: bool, device: str, designs: int,
                    folder: Path) -> tuple[Any, list[Any], dict[str, Any]]:
    """(the task's model, its inputs, the first ``designs`` ranked designs by name), all under
    the precision policy as the harness applies it, seeded alike; each design's file is
    written to ``folder`` as ``STEM__I.py``."""
    import torch

    from kernelwright.design.plan import plan_task
    from kernelwright.evaluate.precision import apply_policy, cast_value, prepare_model
    from kernelwright.records import Precision
    from kernelwright.task import load_task
    from kernelwright.task.module import import_task_module

    size = "small" if small else "full"
    policy = Precision(precision)
    apply_policy(policy)
    plan = plan_task(load_task(path, size=size), device, size, isolate=False,
                     precision=precision)
    module = import_task_module(path, size)
    init = list(module.get_init_inputs()) if hasattr(module, "get_init_inputs") else []
    torch.manual_seed(0)
    with torch.device(device):
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
        inputs = list(cast_value(inputs, policy))
        torch.manual_seed(1)
        model = prepare_model(module.Model(*init), device, policy)
    folder.mkdir(parents=True, exist_ok=True)
    found: dict[str, Any] = {}
    for i, design in enumerate(plan.designs[:designs]):
        file = folder / f"{path.stem}__{i}.py"
        file.write_text(plan.render(design))
        torch.manual_seed(1)
        with torch.device(device):
            new = prepare_model(load_module(file).ModelNew(*init), device, policy)
        found[f"design {i}: {' + '.join(design.skills)}"] = new
    return model, inputs, found


def profile_task(path: Path, args: argparse.Namespace, device: str, write: Any) -> None:
    import torch

    model, inputs, designs = task_contenders(path, args.precision, args.small, device,
                                             args.designs, args.out / "candidates")
    contenders: dict[str, Any] = {"eager": model}
    if args.compile and device == "cuda":
        contenders["torch.compile"] = torch.compile(model)
    contenders.update(designs)
    with torch.no_grad():
        want = model(*inputs)
        for name, fn in contenders.items():
            row = {"task": path.stem, "contender": name, "precision": args.precision}
            try:
                got = fn(*inputs)
                err = (got.float() - want.float()).abs().max().item()
                ms = _time(lambda fn=fn: fn(*inputs), device)
                host = _host_time(lambda fn=fn: fn(*inputs)) if device == "cuda" else None
                kernels = kernel_times(lambda fn=fn: fn(*inputs), device)
            except Exception as exc:  # one contender's failure is a row, not the end
                write({**row, "kernel": f"{type(exc).__name__}: {exc}"[:200]})
                continue
            issued = f", issued in {host:.4f} ms" if host is not None else ""
            bound = " (host-bound)" if host is not None and host > ms else ""
            print(f"== {path.stem} | {name}: {ms:.4f} ms a call{issued}{bound}, "
                  f"max error {err:.3g}")
            for kernel, launches, us in kernels[: args.top]:
                write({**row, "call_ms": f"{ms:.4f}",
                       "host_ms": f"{host:.4f}" if host is not None else "",
                       "max_err": f"{err:.3g}", "kernel": kernel,
                       "launches": f"{launches:g}", "us_a_call": f"{us:.1f}"})
            if device == "cuda":
                issue, span, events, forward = batched(fn, inputs)
                write({**row, "kernel": "(batch) calls on inputs of their own, two events each",
                       "batch_issue_ms": f"{issue:.4f}", "batch_span_ms": f"{span:.4f}",
                       "batch_events_ms": f"{events:.4f}", "batch_forward_ms": f"{forward:.4f}"})
            if device == "cuda" and name.startswith("design"):
                for what, us in launch_costs(lambda fn=fn: fn(*inputs)):
                    write({**row, "kernel": what, "host_us": f"{us:.1f}"})


def _line(row: dict[str, Any]) -> str:
    """A profile row in a line: a kernel's time, the host's, the batches', or a contender."""
    if row.get("us_a_call"):
        return f"   {row['us_a_call']:>10} µs  x{row['launches']:<4} {row['kernel'][:90]}"
    if row.get("host_us"):
        return f"   {row['host_us']:>10} µs  host   {row['kernel'][:90]}"
    if row.get("batch_issue_ms"):
        return (f"   in batches as the harness makes them: host issuing "
                f"{row['batch_issue_ms']} ms a call (in the forward "
                f"{row['batch_forward_ms']}), device span {row['batch_span_ms']}, "
                f"events {row['batch_events_ms']}")
    return f"   {row['contender']}: {row['kernel']}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+", type=Path)
    ap.add_argument("--precision", choices=["fp32", "tf32", "bf16"], default="fp32")
    ap.add_argument("--designs", type=int, default=1, help="ranked designs profiled")
    ap.add_argument("--top", type=int, default=8, help="kernels listed a contender")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--small", action="store_true", help="the tasks' small sizes (CPU runs)")
    ap.add_argument("--no-compile", dest="compile", action="store_false")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT / "src"))
    device = pick_device()
    if device is None:
        return 2
    with csv_rows(args.out / "profile.csv", FIELDS, _line) as write:
        for path in args.tasks:
            try:
                profile_task(path, args, device, write)
            except Exception as exc:  # one task's failure leaves the others to run
                print(f"{path}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
