"""Compile an emitted file's kernels for a GPU architecture on a machine without a GPU.

Triton compiles ahead of time to PTX and (with the ``ptxas`` its wheel ships) to a cubin without
a driver. This runs the file's ``ModelNew`` on PyTorch's ``meta`` device at the task's real
shapes, intercepts every kernel launch, and compiles it for ``sm_<arch>`` with the arguments
the wrapper chose (block sizes, warps, the integer specialisations Triton would make), then asks
``ptxas -v`` for registers and spills. A kernel that would fail to compile on the GPU, or that
spills, is caught here, before any GPU time is spent.

    reports = compile_check(source, task_path, size="full")      # one KernelReport per launch
    global_loads(report.ptx)   # with keep_ptx=True: {"ld.global.v4.b32": 12, ...}
    global_stores(report.ptx)  # {"st.global.v4.b32": 2, ...}
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class KernelReport:
    """One compiled launch: its kernel, constexprs, warps, registers and spilled bytes."""

    kernel: str
    constexprs: str
    num_warps: int
    ok: bool
    registers: int | None = None
    spill_bytes: int | None = None
    shared_bytes: int | None = None
    error: str = ""
    ptx: str = ""  # with compile_check(..., keep_ptx=True)


@contextmanager
def _interpreter_off() -> Iterator[None]:
    saved = os.environ.pop("TRITON_INTERPRET", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["TRITON_INTERPRET"] = saved


def compile_check(
    source: str,
    task_path: str | Path,
    size: str = "full",
    arch: int = 90,
    keep_ptx: bool = False,
    precision: str = "fp32",
) -> list[KernelReport]:
    """Compile every kernel the file launches for one forward at ``size`` (see module doc);
    ``keep_ptx``: each report carries its kernel's PTX; ``precision``: under ``bf16`` the
    model's floating parameters and the inputs are cast to bfloat16, as the harness's bf16
    policy does (the matmul flags are the caller's: ``evaluate.precision.apply_policy``)."""
    import torch
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, compile, make_backend
    from triton.runtime.jit import JITFunction, create_function_from_signature

    from kernelwright.task.module import import_task_module

    target = GPUTarget("cuda", arch, 32)
    backend = make_backend(target)
    reports: list[KernelReport] = []
    seen: set[tuple[str, str]] = set()

    def run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> None:
        kwargs.setdefault("debug", False)
        binder = create_function_from_signature(self.signature, self.params, backend)
        bound, spec, options = binder(*args, **kwargs)
        opts, sig, consts, attrs = self._pack_args(backend, kwargs, bound, spec, options)
        cname = ", ".join(f"{self.arg_names[k[0]]}={v}" for k, v in consts.items())
        key = (self.__name__, cname + str(opts.num_warps))
        if key in seen:
            return
        seen.add(key)
        try:
            kernel = compile(
                ASTSource(self, sig, consts, attrs), target=target, options=opts.__dict__
            )
            regs, spills = _ptxas_usage(kernel.asm["ptx"], arch)
            reports.append(
                KernelReport(
                    self.__name__,
                    cname,
                    opts.num_warps,
                    True,
                    regs,
                    spills,
                    kernel.metadata.shared,
                    ptx=kernel.asm["ptx"] if keep_ptx else "",
                )
            )
        except Exception as exc:  # a compile failure is the finding, not a crash
            reports.append(
                KernelReport(
                    self.__name__,
                    cname,
                    opts.num_warps,
                    False,
                    error=f"{type(exc).__name__}: {exc}",
                )
            )

    with _interpreter_off():
        module = types.ModuleType("kw_compile_check")
        exec(compile_source(source), module.__dict__)
        task = import_task_module(task_path, size)
        original = JITFunction.run
        JITFunction.run = run  # type: ignore[method-assign]
        try:
            with torch.device("meta"):
                torch.manual_seed(0)
                init = list(getattr(task, "get_init_inputs", list)())
                inputs = list(task.get_inputs())
                model = _meta_model(module.ModelNew, init)
                if precision == "bf16":
                    from kernelwright.evaluate.precision import cast_value
                    from kernelwright.records import Precision

                    model = model.to(torch.bfloat16)
                    inputs = list(cast_value(inputs, Precision.BF16))
                with torch.no_grad():
                    model(*inputs)
        finally:
            JITFunction.run = original  # type: ignore[method-assign]
    return reports


def _meta_model(model_cls: Any, init: list[Any]) -> Any:
    """``model_cls(*init)`` on the meta device (the caller's default device); a model whose
    ``__init__`` reads a value (``.item()`` of a drop-path schedule) is built on the CPU
    instead, then moved: its weights cost host memory once, no GPU."""
    import torch

    try:
        return model_cls(*init)
    except (RuntimeError, NotImplementedError):  # data-dependent construction
        with torch.device("cpu"):
            return model_cls(*init).to("meta")


def compile_source(source: str) -> types.CodeType:
    """Compile the emitted file's text (its own filename for tracebacks, and for Triton, which
    reads a kernel's source from its file: named by the text's hash, so that checks running at
    once in other processes never overwrite the file one of them is reading)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"kernelwright_compile_check_{digest}.py"
    path.write_text(source)
    return compile(source, str(path), "exec")


def global_loads(ptx: str) -> dict[str, int]:
    """How many global loads of each form the PTX holds (``ld.global.v4.b32``: 16-byte vector
    loads of 32-bit lanes; ``ld.global.b32``: scalar ones), cache modifiers left out."""
    return _global_accesses(ptx, "ld")


def global_stores(ptx: str) -> dict[str, int]:
    """The same count for global stores (``st.global.v4.b32``, ``st.global.b32``...)."""
    return _global_accesses(ptx, "st")


def _global_accesses(ptx: str, op: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for m in re.finditer(rf"\b{op}\.global((?:\.[\w:]+)*)", ptx):
        parts = [p for p in m.group(1).split(".") if p]
        kept = [p for p in parts if re.fullmatch(r"v\d|[bfsu]\d+", p)]
        form = ".".join([f"{op}.global", *kept])
        counts[form] = counts.get(form, 0) + 1
    return counts


def _ptxas_usage(ptx: str, arch: int) -> tuple[int | None, int | None]:
    """Registers and spill-store bytes reported by ``ptxas -v`` (None when ptxas is missing),
    remembered per PTX text: a model's unchanged kernels cost one ptxas run per process, so a
    tuning move of one group of a whole model compiles only that group's kernels (Triton's own
    cache serves the rest of its compile)."""
    key = (hashlib.sha256(ptx.encode()).hexdigest(), arch)
    if key not in _USAGE:
        _USAGE[key] = _run_ptxas(ptx, arch)
    return _USAGE[key]


_USAGE: dict[tuple[str, int], tuple[int | None, int | None]] = {}


def _run_ptxas(ptx: str, arch: int) -> tuple[int | None, int | None]:
    import triton

    ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    if not ptxas.exists():
        return None, None
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        proc = subprocess.run(
            # Triton targets sm_90a (and later "a" architectures) for Hopper's wgmma and TMA
            [str(ptxas), f"-arch=sm_{arch}{'a' if arch >= 90 else ''}", "-v", str(src), "-o",
             str(Path(tmp) / "k.cubin")],
            capture_output=True,
            text=True,
            timeout=120,
        )
    text = proc.stdout + proc.stderr
    regs = re.search(r"Used (\d+) registers", text)
    spills = re.search(r"(\d+) bytes spill stores", text)
    return (int(regs.group(1)) if regs else None, int(spills.group(1)) if spills else None)
