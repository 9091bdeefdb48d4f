#!/usr/bin/env python
"""Check the benchmark suite under ``benchmarks/``: every task loads, runs and is not degenerate.

Usage::

    python scripts/check_suite.py                  # small sizes on the CPU + full-size estimates
    python scripts/check_suite.py --size full      # full-size estimates only (meta device)
    python scripts/check_suite.py level1/06_softmax_rows.py 37_sdpa   # some tasks only

``--size small`` (the default) imports each task with its ``KERNELWRIGHT["small"]`` constants
through :func:`kernelwright.task.module.import_task_module` and runs it on the CPU:

    loads       ``load_task`` accepts the file; ``family`` is one of :data:`FAMILIES`
    runs        ``Model(*get_init_inputs())`` on ``get_inputs()`` and on every input variant
    finite      no NaN/Inf in any floating output (fp32, and again with bf16 weights and inputs)
    depends     fresh inputs (another seed) change every output; same inputs give the same outputs
    not zero    some output element is not near zero; outputs with more than one element vary
    intact      the forward leaves its inputs unchanged

The harness also reshapes floating inputs per trial (``scaled``, ``heavy_tailed``, ``shifted``,
``tiny``, see ``kernelwright.evaluate.inputs``); the ``nonfinite under`` column names the ones
whose reference turns non-finite (the harness then falls back to the task's own inputs).

Both sizes also build the model and the inputs at full size on the ``meta`` device: shapes and
dtypes without memory, so nothing full-sized is ever allocated on this machine. From that run:

    bytes       inputs + outputs + parameters and buffers, each counted once (the harness's count)
    GFLOP       PyTorch's flop counter (matrix products, convolutions, attention)
    floor ms    max(bytes / 4.3 TB/s, FLOPs / 50 TFLOP/s): the H200 fp32 speed of light
    eager ms    a model of eager PyTorch: every dispatched operator is its own kernel that reads
                its inputs and writes its outputs at EAGER_GBPS, or runs its FLOPs at the
                operator's eager matrix rate, whichever is slower, and costs at least LAUNCH_MS.
                An estimate to size tasks with, not a measurement: the H200 baseline replaces it.

Exit status 1 when any task fails a check.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode, flop_registry

from kernelwright.evaluate.inputs import transform_inputs
from kernelwright.task import load_task, task_options
from kernelwright.task.module import import_task_module

ROOT = Path(__file__).resolve().parents[1]
SUITE_DIR = ROOT / "benchmarks"
LEVELS = ("level1", "level2", "level3", "serving")
FAMILIES = (
    "elementwise",
    "softmax",
    "norm",
    "reduction",
    "scan",
    "pool",
    "loss",
    "gemm",
    "attention",
    "gemm_epilogue",
    "conv_epilogue",
    "block",
    "serving",
)
DISTRIBUTIONS = ("scaled", "heavy_tailed", "shifted", "tiny")

# H200 figures (measured, see /work/shared/DESIGN.md) and the assumptions of the eager model.
COPY_GBPS = 4300.0  # device-to-device copy, bytes read + written
FP32_TFLOPS = 50.0  # fp32 matrix product without TF32
EAGER_GBPS = 0.75 * COPY_GBPS  # a streaming eager kernel; strided/scan/sort kernels do worse
EAGER_TFLOPS = {"matmul": 50.0, "conv": 35.0, "attention": 25.0}
LAUNCH_MS = 0.003  # smallest GPU time of one eager kernel
SMALL_BUDGET_MS = 100.0  # a small-size forward must stay well under this on the CPU
NEAR_ZERO = 1e-6

_NO_KERNEL = {"empty", "empty_like", "empty_strided", "detach", "lift_fresh", "alias"}


# --------------------------------------------------------------------------- discovery


def discover(root: Path = SUITE_DIR, selected: Sequence[str] = ()) -> list[Path]:
    """Task files ``root/<level>/NN_name.py`` in level order; ``selected`` filters by stem/path."""
    paths = [p for level in LEVELS for p in sorted((root / level).glob("[0-9][0-9]_*.py"))]
    if not selected:
        return paths
    chosen = [
        p
        for p in paths
        if any(s in (p.stem, f"{p.parent.name}/{p.name}") or p.stem.endswith(s) for s in selected)
    ]
    if not chosen:
        raise SystemExit(f"no task matches {list(selected)}; ids look like '06_softmax_rows'")
    return chosen


def duplicate_ids(paths: Sequence[Path]) -> list[str]:
    """Stems (task ids) that occur more than once across the suite."""
    seen: dict[str, int] = {}
    for p in paths:
        seen[p.stem] = seen.get(p.stem, 0) + 1
    return sorted(stem for stem, n in seen.items() if n > 1)


# --------------------------------------------------------------------------- small-size checks


@dataclass
class SmallResult:
    """What running one task at its small size on the CPU showed."""

    task_id: str
    family: str
    ms: float = math.nan
    n_variants: int = 0
    nonfinite_under: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_small(path: Path) -> SmallResult:
    """Run every small-size check on one task; problems are collected, never raised."""
    result = SmallResult(path.stem, "?")
    try:
        task = load_task(path, size="small")
        options = task_options(task)
        result.family = str(options.get("family", "?"))
        if result.family not in FAMILIES:
            result.problems.append(f"KERNELWRIGHT['family'] {result.family!r} not in {FAMILIES}")
        if not isinstance(options.get("small"), dict) or not options["small"]:
            result.problems.append("KERNELWRIGHT['small'] is missing or empty")
        module = import_task_module(path, size="small")
        _run_checks(module, result)
    except Exception as exc:  # a broken task is a line in the table, not a crash of the script
        result.problems.append(f"{type(exc).__name__}: {exc}"[:300])
    return result


def _run_checks(module: Any, result: SmallResult) -> None:
    init = list(getattr(module, "get_init_inputs", list)())
    model = _build(module, init, seed=0)
    inputs_a = _inputs(module.get_inputs, seed=1, what="get_inputs()")
    inputs_b = _inputs(module.get_inputs, seed=2, what="get_inputs()")
    for x in inputs_a:
        if isinstance(x, torch.Tensor) and x.device.type != "cpu":
            result.problems.append(f"get_inputs() made a tensor on {x.device}; make CPU tensors")

    given = [_clone(x) for x in inputs_a]
    _forward(model, given, clone=False)  # warm-up, on inputs the check below compares
    if not all(_same(x, y) for x, y in zip(given, inputs_a, strict=True)):
        result.problems.append("the forward mutates its inputs")
    start = time.perf_counter()
    out_a = _forward(model, inputs_a)
    result.ms = (time.perf_counter() - start) * 1e3
    if result.ms > SMALL_BUDGET_MS:
        result.problems.append(f"small forward takes {result.ms:.0f} ms (> {SMALL_BUDGET_MS:.0f})")
    result.problems += _output_problems(out_a, "outputs")
    if not all(_same(x, y) for x, y in zip(out_a, _forward(model, inputs_a), strict=True)):
        result.problems.append("the same inputs give different outputs (non-deterministic)")
    out_b = _forward(model, inputs_b)
    for i, (a, b) in enumerate(zip(out_a, out_b, strict=True)):
        if _same(a, b):
            result.problems.append(f"output {i} is the same for inputs of two seeds")

    variants = getattr(module, "get_input_variants", None)
    if variants is not None:
        torch.manual_seed(3)
        for v, inputs in enumerate(variants()):
            result.problems += _output_problems(_forward(model, list(inputs)), f"variant {v}")
            result.n_variants += 1

    for dist in DISTRIBUTIONS:
        outs = _forward(model, transform_inputs(inputs_a, dist, seed=4))
        if not _finite(outs):
            result.nonfinite_under.append(dist)

    bf16_model = _build(module, init, seed=0).to(torch.bfloat16)
    bf16_inputs = [x.to(torch.bfloat16) if _is_float(x) else x for x in inputs_a]
    try:
        bf16_outs = _forward(bf16_model, bf16_inputs)
    except (NotImplementedError, RuntimeError) as exc:  # a CPU kernel without bf16; CUDA has it
        if "BFloat16" not in str(exc):
            raise
        result.notes.append("no bf16 CPU kernel")
    else:
        result.problems += _output_problems(bf16_outs, "bf16")


def _build(module: Any, init: list[Any], seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    model: torch.nn.Module = module.Model(*init)
    return model.eval()


def _inputs(fn: Any, seed: int, what: str) -> list[Any]:
    torch.manual_seed(seed)
    value = fn()
    if not isinstance(value, list | tuple):
        raise TypeError(f"{what} returned {type(value).__name__}, expected a list")
    return list(value)


def _forward(model: torch.nn.Module, inputs: list[Any], clone: bool = True) -> list[torch.Tensor]:
    with torch.no_grad():
        out = model(*[_clone(x) for x in inputs] if clone else inputs)
    outs = list(out) if isinstance(out, list | tuple) else [out]
    for o in outs:
        if not isinstance(o, torch.Tensor):
            raise TypeError(f"forward returned a {type(o).__name__}; expected tensors")
    return outs


def _output_problems(outs: list[torch.Tensor], what: str) -> list[str]:
    problems = []
    if not _finite(outs):
        problems.append(f"{what}: non-finite values")
    for i, o in enumerate(outs):
        if o.numel() == 0:
            problems.append(f"{what}: output {i} is empty")
            continue
        if o.is_floating_point() and float(o.abs().max()) < NEAR_ZERO:
            problems.append(f"{what}: output {i} is near zero everywhere")
        if o.numel() > 1 and bool((o == o.reshape(-1)[0]).all()):
            problems.append(f"{what}: output {i} is constant")
    return problems


def _clone(x: Any) -> Any:
    return x.clone() if isinstance(x, torch.Tensor) else x


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a, b))
    return bool(a == b)


def _is_float(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def _finite(outs: list[torch.Tensor]) -> bool:
    return all(bool(torch.isfinite(o).all()) for o in outs if o.is_floating_point())


# --------------------------------------------------------------------------- full-size estimates


@dataclass(frozen=True)
class Estimate:
    """Full-size work of one task, counted on the meta device."""

    bytes: int
    flops: int
    floor_ms: float
    eager_ms: float
    kernels: int
    inputs: tuple[str, ...] = ()  # "4096x32768", "262144 int64": the full-size inputs


class _EagerModel(TorchDispatchMode):
    """Times each dispatched operator as one eager kernel (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.ms = 0.0
        self.kernels = 0
        self.paused = 0

    def add(self, nbytes: int, flops: float, tflops: float) -> None:
        self.ms += max(nbytes / (EAGER_GBPS * 1e9) * 1e3, flops / (tflops * 1e12) * 1e3, LAUNCH_MS)
        self.kernels += 1

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if self.paused or func.is_view or name in _NO_KERNEL:
            return out
        touched = [t for t in tree_leaves((args, kwargs, out)) if isinstance(t, torch.Tensor)]
        flops = 0.0
        if func.overloadpacket in flop_registry:
            flops = float(flop_registry[func.overloadpacket](*args, **kwargs, out_val=out))
        rate = EAGER_TFLOPS["conv" if "conv" in name else "matmul"]
        self.add(sum(_distinct_bytes(t) for t in touched), flops, rate)
        return out


class _FusedAttention(TorchFunctionMode):
    """Counts ``F.scaled_dot_product_attention`` as the one fused kernel it is on a GPU.

    On the meta device it decomposes into matmuls and a softmax over the full score matrix,
    which eager CUDA (the memory-efficient kernel for fp32) never writes to memory.
    """

    def __init__(self, eager: _EagerModel) -> None:
        super().__init__()
        self.eager = eager

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func is not F.scaled_dot_product_attention:
            return func(*args, **kwargs)
        self.eager.paused += 1
        try:
            out = func(*args, **kwargs)
        finally:
            self.eager.paused -= 1
        q, k = args[0], args[1]
        flops = 4.0 * q.numel() * k.shape[-2]  # QK^T and PV: 2 * 2 * (B*H*Sq*D) * Sk
        if kwargs.get("is_causal") or (len(args) > 5 and args[5]):
            flops /= 2
        touched = [t for t in tree_leaves((args, kwargs, out)) if isinstance(t, torch.Tensor)]
        self.eager.add(sum(_distinct_bytes(t) for t in touched), flops, EAGER_TFLOPS["attention"])
        return out


def _distinct_bytes(t: torch.Tensor) -> int:
    """Bytes of the distinct elements a tensor view covers (a broadcast dimension counts once)."""
    n = math.prod(s for s, st in zip(t.shape, t.stride(), strict=True) if st != 0)
    return int(n * t.element_size())


def _nbytes(values: Any) -> int:
    return sum(
        t.numel() * t.element_size() for t in tree_leaves(values) if isinstance(t, torch.Tensor)
    )


def estimate(path: Path, size: str = "full") -> Estimate:
    """Bytes, FLOPs and time estimates of one task at ``size``, without allocating memory.

    The model and inputs are made under ``torch.device("meta")``; the forward runs outside that
    context, so a tensor the forward creates without ``device=`` lands on the CPU and the run
    fails, as it would on a GPU.
    """
    module = import_task_module(path, size=size)
    with torch.device("meta"):
        model = module.Model(*getattr(module, "get_init_inputs", list)()).eval()
        inputs = list(module.get_inputs())
    with torch.no_grad():
        counter = FlopCounterMode(display=False)
        with counter:
            outputs = model(*inputs)
        eager = _EagerModel()
        with _FusedAttention(eager), eager:
            model(*inputs)
    state = list(model.parameters()) + list(model.buffers())
    nbytes = _nbytes(inputs) + _nbytes(outputs) + _nbytes(state)
    flops = int(counter.get_total_flops())
    floor_ms = max(nbytes / (COPY_GBPS * 1e9), flops / (FP32_TFLOPS * 1e12)) * 1e3
    shapes = tuple(_shape(t) for t in inputs if isinstance(t, torch.Tensor))
    return Estimate(nbytes, flops, floor_ms, eager.ms, eager.kernels, shapes)


def _shape(t: torch.Tensor) -> str:
    dims = "x".join(str(d) for d in t.shape) or "scalar"
    return dims if t.dtype == torch.float32 else f"{dims} {str(t.dtype).replace('torch.', '')}"


def variant_bytes(path: Path, size: str = "full") -> list[int]:
    """Input + output bytes of each input variant at ``size`` (meta device, nothing allocated)."""
    module = import_task_module(path, size=size)
    variants = getattr(module, "get_input_variants", None)
    if variants is None:
        return []
    with torch.device("meta"):
        model = module.Model(*getattr(module, "get_init_inputs", list)()).eval()
        sets = [list(v) for v in variants()]
    with torch.no_grad():
        return [_nbytes(inputs) + _nbytes(model(*inputs)) for inputs in sets]


# --------------------------------------------------------------------------- report


@contextmanager
def single_thread() -> Iterator[None]:
    """Run torch on one CPU thread: tiny ops on a busy 2-core machine wait ~8 ms for a second."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", help="task ids or level/file names (default: all)")
    parser.add_argument("--size", choices=("small", "full"), default="small")
    parser.add_argument("--root", type=Path, default=SUITE_DIR)
    parser.add_argument(
        "--markdown", action="store_true", help="print the docs/suite.md task table and exit"
    )
    args = parser.parse_args(argv)

    paths = discover(args.root, args.tasks)
    if args.markdown:
        print(markdown_table(paths))
        return 0
    failed = 0
    dupes = duplicate_ids(discover(args.root))
    if dupes:
        print(f"duplicate task ids: {dupes}")
        failed += 1
    header = (
        f"{'task':36} {'family':13} {'small ms':>8} {'var':>3} {'full bytes':>10} "
        f"{'GFLOP':>8} {'floor ms':>8} {'eager ms':>8} {'kern':>4}  notes"
    )
    print(header)
    print("-" * len(header))
    families: dict[str, int] = {}
    n_variants = 0
    for path in paths:
        small = check_small(path) if args.size == "small" else None
        family = small.family if small else str(task_options(load_task(path)).get("family"))
        families[family] = families.get(family, 0) + 1
        notes: list[str] = []
        try:
            est = estimate(path, "full")
            cols = (
                f"{_gb(est.bytes):>10} {est.flops / 1e9:8.1f} {est.floor_ms:8.3f} "
                f"{est.eager_ms:8.3f} {est.kernels:4d}"
            )
            if not 1.0 <= est.eager_ms <= 15.0:
                notes.append("eager est outside 1-15 ms")
            if est.bytes > 4.5e9:
                notes.append("over 4.5 GB")
            if any(v > est.bytes for v in variant_bytes(path, "full")):
                notes.append("a variant is larger than the task")
        except Exception as exc:
            cols = f"{'-':>10} {'-':>8} {'-':>8} {'-':>8} {'-':>4}"
            notes.append(f"FULL-SIZE ESTIMATE FAILED: {type(exc).__name__}: {exc}"[:200])
            failed += 1
        ms = f"{small.ms:8.2f}" if small else f"{'-':>8}"
        var = f"{small.n_variants:3d}" if small else f"{'-':>3}"
        if small:
            n_variants += small.n_variants > 0
            notes += small.notes
            if small.nonfinite_under:
                notes.append("nonfinite under " + ",".join(small.nonfinite_under))
            if small.problems:
                failed += 1
                notes = ["FAIL: " + "; ".join(small.problems)] + notes
        print(f"{path.stem:36} {family:13} {ms} {var} {cols}  {'; '.join(notes)}")
    print("-" * len(header))
    print(
        f"{len(paths)} tasks; families: "
        + ", ".join(f"{k} {v}" for k, v in sorted(families.items()))
    )
    if args.size == "small":
        print(f"tasks with input variants: {n_variants}")
    print("FAILED" if failed else "all checks passed")
    return 1 if failed else 0


def markdown_table(paths: Sequence[Path]) -> str:
    """The task table of ``docs/suite.md``: id, level, family, summary, full-size inputs."""
    lines = [
        "| id | level | family | computes | full-size inputs (fp32 unless noted) | variants "
        "| eager est. ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for path in paths:
        task = load_task(path)
        family = task_options(task).get("family", "?")
        summary = _summary(task.source)
        est = estimate(path, "full")
        shapes = ", ".join(f"`{s}`" for s in est.inputs)
        lines.append(
            f"| `{path.stem}` | {path.parent.name} | {family} | {summary} | {shapes} "
            f"| {'yes' if task.has_variants else ''} | {est.eager_ms:.2f} |"
        )
    return "\n".join(lines)


def _summary(source: str) -> str:
    """The first sentence of a task's module docstring, on one line."""
    import ast

    doc = ast.get_docstring(ast.parse(source)) or ""
    first = doc.split("\n\n")[0].replace("\n", " ").strip()
    return first.replace("|", "\\|")


def _gb(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


if __name__ == "__main__":
    with single_thread():
        sys.exit(main())
