"""Measured device ceilings: memory bandwidth and matrix rate, measured once and cached.

Datasheet numbers are leads, not ceilings: a device-to-device copy (bytes read + written) and a
large matrix product through the framework are what code on this device can actually reach:
the fastest of several repetitions, once the work has run long enough for the clocks to rise.
Measured once per (device, torch version) and cached as JSON under the kernelwright home.

Notation:
    memory_gbps     copy bandwidth, GB/s (1e9 bytes), read + written bytes over time
    matrix_tflops   dense matrix-product rate per precision policy, TFLOP/s (1e12 FLOP): cuBLAS
                    with TF32 off (fp32), on (tf32), and on bf16 operands (bf16)
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# 2: the best of the repetitions after the clocks have ramped up (1: the median, from a cold
# start: an H100's copy read 2.6 TB/s in one measurement and 3.0 in another)
CEILINGS_VERSION = 2
# Seconds of the measured work run before the repetitions count: a GPU that was idle (or
# busy with small work) raises its clocks only after a while
WARMUP_S = 0.2


@dataclass(frozen=True, slots=True)
class Ceilings:
    """Measured ceilings of one device."""

    device: str
    memory_gbps: float
    matrix_tflops: Mapping[str, float]
    source: str  # "measured <date>" or "cached <date>"

    def matrix_rate(self, precision: str) -> float:
        """The fastest matrix rate (TFLOP/s) a kernel may reach under a precision policy name.

        The fp32 policy admits split-precision tensor-core math (3xTF32: as accurate as fp32,
        which the harness checks against float64), so its ceiling is the TF32 rate where that
        is higher than plain fp32's: no fp32-accurate product beats one TF32 pass.
        """
        rates = self.matrix_tflops
        rate = float(rates.get(precision, rates.get("fp32", 1.0)))
        if precision == "fp32" and "tf32" in rates:
            rate = max(rate, float(rates["tf32"]))
        return rate


def load_ceilings(device: str, cache_dir: Path | None) -> Ceilings | None:
    """Cached ceilings for ``device`` (``"cuda"`` or ``"cpu"``) on this software, or None."""
    path = cache_dir / "ceilings.json" if cache_dir is not None else None
    if path is None or not path.exists():
        return None
    try:
        table = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    entry = table.get(_key(device)) if isinstance(table, dict) else None
    if not isinstance(entry, dict):
        return None
    return Ceilings(
        device=_device_name(device),
        memory_gbps=float(entry["memory_gbps"]),
        matrix_tflops=dict(entry["matrix_tflops"]),
        source=f"cached, measured {entry.get('date', '?')}",
    )


def measure_ceilings(device: str) -> Ceilings:
    """Measure now; must run in a process that may use the device (a few GB for a second)."""
    measured = measure_cuda() if device == "cuda" else measure_cpu()
    return dataclasses.replace(measured, source=f"measured {time.strftime('%Y-%m-%d')}")


def store_ceilings(cache_dir: Path, device: str, ceilings: Mapping[str, Any]) -> None:
    """Add measured ceilings (a dict with ``memory_gbps`` and ``matrix_tflops``) to the cache.

    ``device`` is the measured device's name as :func:`load_ceilings` keys it.
    """
    path = cache_dir / "ceilings.json"
    try:
        table = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, json.JSONDecodeError):
        table = {}
    table[device] = {
        "memory_gbps": float(ceilings["memory_gbps"]),
        "matrix_tflops": dict(ceilings["matrix_tflops"]),
        "date": time.strftime("%Y-%m-%d"),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(table, indent=1))
    tmp.replace(path)


def ceilings_key(device: str) -> str:
    """The cache key of this device and software (what :func:`store_ceilings` is given)."""
    return _key(device)


def _key(device: str) -> str:
    import torch

    return f"{_device_name(device)}|torch {torch.__version__}|v{CEILINGS_VERSION}"


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
            ms = _cuda_best_ms(lambda a=a, b=b: torch.mm(a, b), repeats=5)
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
    return _cuda_best_ms(lambda: dst.copy_(src), repeats=10)


def _cuda_best_ms(fn: Any, repeats: int) -> float:
    """The least time of ``fn`` over ``repeats`` once WARMUP_S of it has run: a ceiling is
    what the device reaches, and a slower repetition says nothing of the ceiling."""
    import torch

    started = time.perf_counter()
    while True:
        fn()
        torch.cuda.synchronize()
        if time.perf_counter() - started >= WARMUP_S:
            break
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(min(times))


def _cpu_median_ms(fn: Any, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[len(times) // 2]
