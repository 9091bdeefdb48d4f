"""The suite checks behind ``kernelwright check-task --suite``: every task of a suite loads, runs
at its small size on the CPU, is not degenerate, and fits at its full size.

At the small size (``KERNELWRIGHT["small"]``), in a child process per task:

    loads       ``load_task`` accepts the file; ``family`` is one of :data:`FAMILIES`
    runs        ``Model(*get_init_inputs())`` on ``get_inputs()`` and on every input variant
    finite      no NaN/Inf in any floating output (fp32, and again with bf16 weights and inputs)
    depends     fresh inputs (another seed) change every output; same inputs give the same outputs
    not zero    some output element is not near zero; outputs with more than one element vary
    intact      the forward leaves its inputs unchanged

The harness also reshapes floating inputs per trial (``scaled``, ``heavy_tailed``, ``shifted``,
``tiny``, see ``kernelwright.evaluate.inputs``); ``nonfinite_under`` names the ones whose
reference turns non-finite (the harness then falls back to the task's own inputs).

At the full size, on the ``meta`` device (:mod:`kernelwright.task.estimate`): the bytes of one
call stay under :data:`MAX_FULL_BYTES` and no input variant is larger than the task itself.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from kernelwright.evaluate.inputs import transform_inputs
from kernelwright.task.estimate import Estimate, estimate, variant_bytes

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
SMALL_BUDGET_MS = 100.0  # a small-size forward must stay well under this on the CPU
NEAR_ZERO = 1e-6
MAX_FULL_BYTES = 4.5e9  # the judge and the candidate each hold about ten calls' worth
EAGER_SIZING_MS = (1.0, 15.0)  # a full-size task should take this long in eager PyTorch


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
    from kernelwright.task import load_task, task_id, task_options
    from kernelwright.task.module import import_task_module

    result = SmallResult(task_id(path), "?")
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


def duplicate_ids(paths: Sequence[Path]) -> list[str]:
    """Task ids that occur more than once among ``paths``."""
    from kernelwright.task import task_id

    seen: dict[str, int] = {}
    for p in paths:
        seen[task_id(p)] = seen.get(task_id(p), 0) + 1
    return sorted(name for name, n in seen.items() if n > 1)


@dataclass
class SuiteCheck:
    """One task's suite checks: the small-size run (when asked for) and the full-size count."""

    task_id: str
    family: str
    small_ms: float | None = None
    n_variants: int = 0
    nonfinite_under: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    bytes: int | None = None
    gflop: float | None = None
    floor_ms: float | None = None
    eager_est_ms: float | None = None

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems


def check_for_suite(path: Path, size: str = "small") -> SuiteCheck:
    """Every suite check of one task, in this process (``size="full"``: the count only)."""
    from kernelwright.task import load_task, task_id, task_options

    check = SuiteCheck(task_id(path), "?")
    if size == "small":
        small = check_small(path)
        check.family, check.small_ms = small.family, small.ms
        check.n_variants, check.nonfinite_under = small.n_variants, small.nonfinite_under
        check.problems += small.problems
        check.notes += small.notes
    else:
        try:
            check.family = str(task_options(load_task(path)).get("family", "?"))
        except Exception as exc:  # a broken task is a row of the table, not a crash
            check.problems.append(f"{type(exc).__name__}: {exc}"[:300])
            return check
    try:
        est: Estimate = estimate(path, "full")
        larger = [v for v in variant_bytes(path, "full") if v > est.bytes]
    except Exception as exc:
        check.problems.append(f"full-size count failed: {type(exc).__name__}: {exc}"[:300])
        return check
    check.bytes, check.gflop = est.bytes, est.flops / 1e9
    check.floor_ms, check.eager_est_ms = est.floor_ms, est.eager_ms
    if est.bytes > MAX_FULL_BYTES:
        check.problems.append(f"a full-size call moves {est.bytes / 1e9:.1f} GB (> 4.5)")
    if larger:
        check.problems.append("an input variant is larger than the task")
    low, high = EAGER_SIZING_MS
    if not low <= est.eager_ms <= high:
        check.notes.append(f"eager estimate {est.eager_ms:.2f} ms (aim for {low:g}-{high:g})")
    return check


def check_in_child(path: Path, size: str = "small", timeout_s: float = 300.0) -> SuiteCheck:
    """:func:`check_for_suite` in a child process: a task that crashes or hangs is a problem
    in its row, and the task's code never runs in the caller's process."""
    from kernelwright.task import task_id

    command = [sys.executable, "-m", "kernelwright.task.suite_checks", str(path), size]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return SuiteCheck(task_id(path), "?", problems=[f"timed out after {timeout_s:.0f} s"])
    lines = done.stdout.strip().splitlines()
    try:
        return SuiteCheck(**json.loads(lines[-1]))
    except (IndexError, json.JSONDecodeError, TypeError):
        tail = done.stderr.strip().splitlines()[-1:] or [""]
        problem = f"the check crashed (exit code {done.returncode}) {tail[0]}".strip()
        return SuiteCheck(task_id(path), "?", problems=[problem[:300]])


@contextmanager
def single_thread() -> Iterator[None]:
    """Run torch on one CPU thread: tiny ops on a busy 2-core machine wait ~8 ms for a second."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def markdown_table(paths: Sequence[Path]) -> str:
    """The task table of ``docs/suite.md``: id, level, family, summary, full-size inputs."""
    from kernelwright.task import load_task, task_id, task_options

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
            f"| `{task_id(path)}` | {path.parent.name} | {family} | {summary} | {shapes} "
            f"| {'yes' if task.has_variants else ''} | {est.eager_ms:.2f} |"
        )
    return "\n".join(lines)


def _summary(source: str) -> str:
    """The first sentence of a task's module docstring, on one line."""
    import ast

    doc = ast.get_docstring(ast.parse(source)) or ""
    first = doc.split("\n\n")[0].replace("\n", " ").strip()
    return first.replace("|", "\\|")


def main(argv: Sequence[str] | None = None) -> None:
    """Child entry: ``python -m kernelwright.task.suite_checks PATH SIZE`` prints one JSON line."""
    path, size = (list(argv) if argv is not None else sys.argv[1:])[:2]
    with single_thread():
        check = check_for_suite(Path(path), size)
    print(json.dumps(asdict(check)))


if __name__ == "__main__":
    main()
