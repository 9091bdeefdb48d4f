"""kernelwright's flash-attention design against each of PyTorch's attention backends, with
variants of the design's loads, blocks and key loop.

    python scripts/probe_attention.py --out runs/probe-attention            # on a GPU, ~3 min
    TRITON_INTERPRET=1 python scripts/probe_attention.py --small --variants 2 --out DIR

A development instrument, like ``sweep_design.py``: trusted generated kernels imported in this
process and timed with ``triton.testing.do_bench`` (CUDA events, L2 flushed, the median). For
each task (default: the suite's bf16-capable SDPA tasks, causal and not), under ``--precision``:

    eager      the task's model as PyTorch runs it, then with each attention backend forced
               (``torch.nn.attention.sdpa_kernel``: flash, cuDNN, memory-efficient; on a GPU)
    design     the first ranked ``attention-flash`` design, rendered with each combination of
               ``TMA`` (descriptor loads), (``BLOCK_N``, ``WARPS``, ``STAGES``) and ``WS``:
               1 asks Triton to warp-specialise the unmasked key loop
               (``tl.range(..., warp_specialize=True)``), a source edit, not a parameter of the
               skill; each variant's largest error against the model is recorded

Writes ``OUT/attention.csv`` row by row (task, variant, max_abs_err, ms, note): a variant that
fails to compile is a row with its error, not the end of the probe.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import re
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gemm import _time, csv_rows, load_module, pick_device  # noqa: E402

TASKS = ["benchmarks/level1/37_sdpa.py", "benchmarks/level1/38_sdpa_causal.py"]
FIELDS = ["task", "variant", "max_abs_err", "ms", "note"]
# (BLOCK_N, WARPS, STAGES): the default, then the shapes Triton's Hopper attention tries
SHAPES = [(64, 8, 3), (64, 4, 3), (128, 8, 2), (128, 4, 2)]
UNMASKED_LOOP = "for start_n in range(0, whole, BLOCK_N):"


def warp_specialized(source: str) -> str:
    """``source`` with its unmasked key loop (the split-keys kernel's first) warp-specialised."""
    edited, n = re.subn(re.escape(UNMASKED_LOOP),
                        "for start_n in tl.range(0, whole, BLOCK_N, warp_specialize=True):",
                        source, count=1)
    if not n:
        raise ValueError("the design has no unmasked key loop (SPLIT_KEYS 0?)")
    return edited


def grid() -> list[dict[str, int]]:
    """Every variant, the default shape first."""
    return [{"TMA": tma, "BLOCK_N": bn, "WARPS": w, "STAGES": s, "WS": ws}
            for tma, (bn, w, s), ws in itertools.product((0, 1), SHAPES, (0, 1))]


def probe_task(path: Path, args: argparse.Namespace, device: str, write: Any) -> None:
    import torch
    import torch.nn.functional as F

    from kernelwright.design.plan import plan_task
    from kernelwright.evaluate.precision import apply_policy, cast_value, prepare_model
    from kernelwright.records import Precision
    from kernelwright.task import load_task
    from kernelwright.task.module import import_task_module

    size = "small" if args.small else "full"
    policy = Precision(args.precision)
    apply_policy(policy)
    plan = plan_task(load_task(path, size=size), device, size, isolate=False,
                     precision=args.precision)
    base = next((d for d in plan.designs if "attention-flash" in d.skills), None)
    if base is None:
        write({"task": path.stem, "note": "no attention-flash design"})
        return
    module = import_task_module(path, size)
    torch.manual_seed(0)
    inputs = [x.to(device) for x in cast_value(module.get_inputs(), policy)]
    init = list(module.get_init_inputs()) if hasattr(module, "get_init_inputs") else []
    torch.manual_seed(1)
    model = prepare_model(module.Model(*init), device, policy)
    row = {"task": path.stem}
    with torch.no_grad():
        want = model(*inputs)
        write({**row, "variant": "eager", "ms": f"{_time(lambda: model(*inputs), device):.4f}"})
        if device == "cuda":
            from torch.nn.attention import SDPBackend, sdpa_kernel

            backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                        "efficient": SDPBackend.EFFICIENT_ATTENTION}
            original = F.scaled_dot_product_attention
            for name, backend in backends.items():
                def forced(*a: Any, backend: Any = backend, **kw: Any) -> Any:
                    with sdpa_kernel([backend]):
                        return original(*a, **kw)
                try:  # the task's own model, its attention calls on one backend
                    F.scaled_dot_product_attention = forced
                    ms = _time(lambda: model(*inputs), device)
                    write({**row, "variant": f"eager, {name} backend", "ms": f"{ms:.4f}"})
                except Exception as exc:  # a backend that cannot run these inputs is a row
                    write({**row, "variant": f"eager, {name} backend", "note": _first_line(exc)})
                finally:
                    F.scaled_dot_product_attention = original
    folder = args.out / "candidates"
    folder.mkdir(parents=True, exist_ok=True)
    for n, g in enumerate(grid()[: args.variants]):
        label = " ".join(f"{k}={v}" for k, v in g.items())
        out = {**row, "variant": label}
        choices = tuple(c.with_params({k: g.get(k, v) for k, v in c.params.items()})
                        for c in base.choices)
        try:
            source = plan.render(dataclasses.replace(base, choices=choices))
            if g["WS"]:
                source = warp_specialized(source)
            file = folder / f"{path.stem}__{n}.py"
            file.write_text(source)
            torch.manual_seed(1)  # the same weights as the model's
            new = prepare_model(load_module(file).ModelNew(*init), device, policy)
            with torch.no_grad():
                got = new(*inputs)
                out["max_abs_err"] = f"{(got.float() - want.float()).abs().max().item():.3g}"
                out["ms"] = f"{_time(lambda new=new: new(*inputs), device):.4f}"
        except Exception as exc:  # a variant that fails to render or compile is a row
            out["note"] = _first_line(exc)
        write(out)


def _first_line(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:160]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="*", type=Path, default=[Path(t) for t in TASKS])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--precision", choices=["fp32", "tf32", "bf16"], default="bf16")
    ap.add_argument("--small", action="store_true", help="the tasks' small sizes (CPU runs)")
    ap.add_argument("--variants", type=int, default=len(grid()), help="the first N variants")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT / "src"))
    device = pick_device()
    if device is None:
        return 2
    with csv_rows(args.out / "attention.csv", FIELDS,
                  lambda row: " | ".join(str(row.get(k, "")) for k in FIELDS)) as write:
        for path in args.tasks:
            probe_task(path, args, device, write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
