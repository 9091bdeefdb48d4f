"""Measured device ceilings: memory bandwidth and matrix rate, measured once and cached.

Datasheet numbers are leads, not ceilings: a device-to-device copy (bytes read + written) and a
large matrix product through the framework are what code on this device can actually reach.
Measured once per (device, torch version) and cached as JSON under the kernelwright home.

Notation:
    memory_gbps     copy bandwidth, GB/s (1e9 bytes), read + written bytes over time
    matrix_tflops   dense matrix-product rate per precision policy, TFLOP/s (1e12 FLOP)
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CEILINGS_VERSION = 1


@dataclass(frozen=True, slots=True)
class Ceilings:
    """Measured ceilings of one device."""

    device: str
    memory_gbps: float
    matrix_tflops: Mapping[str, float]
    source: str  # "measured <date>" or "cached <date>"

    def matrix_rate(self, precision: str) -> float:
        """The matrix rate (TFLOP/s) under a precision policy name."""
        return float(self.matrix_tflops.get(precision, self.matrix_tflops.get("fp32", 1.0)))


def load_or_measure_ceilings(device: str, cache_dir: Path | None) -> Ceilings:
    """Return cached ceilings for ``device`` (``"cuda"`` or ``"cpu"``) or measure and cache them.

    Must run in a process that may touch the device (a harness child); it allocates a few GB on a
    GPU for a fraction of a second.
    """
    import torch

    name = _device_name(device)
    key = f"{name}|torch {torch.__version__}|v{CEILINGS_VERSION}"
    path = cache_dir / "ceilings.json" if cache_dir is not None else None
    table: dict[str, Any] = {}
    if path is not None and path.exists():
        try:
            table = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            table = {}
    if key in table:
        entry = table[key]
        return Ceilings(
            device=name,
            memory_gbps=float(entry["memory_gbps"]),
            matrix_tflops=dict(entry["matrix_tflops"]),
            source=f"cached, measured {entry.get('date', '?')}",
        )
    measured = measure_cuda() if device == "cuda" else measure_cpu()
    date = time.strftime("%Y-%m-%d")
    ceilings = Ceilings(name, measured.memory_gbps, measured.matrix_tflops, f"measured {date}")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = dataclasses.asdict(ceilings) | {"date": date}
        table[key] = entry
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(table, indent=1))
        tmp.replace(path)
    return ceilings


def _device_name(device: str) -> str:
    import platform

    import torch

    if device == "cuda":
        return str(torch.cuda.get_device_name())
    return f"cpu {platform.machine()} ({torch.get_num_threads()} threads)"


def measure_cuda() -> Ceilings:
    """Copy bandwidth over 2 GiB and 8192^3 matrix products per policy (about one second)."""
    import torch

    n_bytes = 1 << 31
    memory_gbps = 2 * n_bytes / (_cuda_copy_ms(n_bytes) * 1e-3) / 1e9
    rates: dict[str, float] = {}
    n = 8192
    old_tf32 = torch.backends.cuda.matmul.allow_tf32
    try:
        for policy, dtype, tf32 in (
            ("fp32", torch.float32, False),
            ("tf32", torch.float32, True),
            ("bf16", torch.bfloat16, False),
        ):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            ms = _cuda_median_ms(lambda a=a, b=b: torch.mm(a, b), repeats=5)
            rates[policy] = 2 * n**3 / (ms * 1e-3) / 1e12
            del a, b
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old_tf32
    torch.cuda.empty_cache()
    return Ceilings(_device_name("cuda"), memory_gbps, rates, "measured")


def measure_cpu() -> Ceilings:
    """A quick CPU measurement; CPU numbers are labelled not representative wherever shown."""
    import torch

    n_bytes = 1 << 26
    src = torch.rand(n_bytes // 4)
    dst = torch.empty_like(src)
    copy_ms = _cpu_median_ms(lambda: dst.copy_(src), repeats=5)
    n = 512
    a, b = torch.randn(n, n), torch.randn(n, n)
    mm_ms = _cpu_median_ms(lambda: torch.mm(a, b), repeats=5)
    rate = 2 * n**3 / (mm_ms * 1e-3) / 1e12
    return Ceilings(
        _device_name("cpu"),
        2 * n_bytes / (copy_ms * 1e-3) / 1e9,
        {"fp32": rate, "tf32": rate, "bf16": rate},
        "measured",
    )


def _cuda_copy_ms(n_bytes: int) -> float:
    import torch

    src = torch.empty(n_bytes // 4, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    return _cuda_median_ms(lambda: dst.copy_(src), repeats=10)


def _cuda_median_ms(fn: Any, repeats: int) -> float:
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(sorted(times)[len(times) // 2])


def _cpu_median_ms(fn: Any, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[len(times) // 2]
