"""Compare GP kernels on a measured space: LOO-CRPS on a sample, CRPS on the configs held out.

    sample n random configs that ran; standardise their log times
    score the default kernel, the GPU-aware kernel, and the kernel discovered on the sample
    report LOO-CRPS (what discovery ranks by) and CRPS on every other config (held out)

The held-out column guards against reading too much into LOO-CRPS: discovery picks the minimum
of many noisy LOO estimates, so its LOO score is optimistic; the held-out CRPS is not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kernelwright.errors import ConfigError
from kernelwright.tuning.discovery import DiscoverySettings, discover, score_kernel
from kernelwright.tuning.gp.features import FeatureTable
from kernelwright.tuning.gp.kernels import Kernel
from kernelwright.tuning.gp.library import default_kernel, gpu_kernel
from kernelwright.tuning.gp.loo import gaussian_crps
from kernelwright.tuning.gp.model import condition
from kernelwright.tuning.measured import MeasuredSpace


@dataclass(frozen=True)
class KernelComparison:
    """One kernel's scores."""

    label: str
    expression: str
    loo_crps: float
    test_crps: float


def compare_kernels(
    measured: MeasuredSpace,
    *,
    samples: int,
    seed: int,
    settings: DiscoverySettings | None = None,
) -> list[KernelComparison]:
    """Default, GPU-aware and discovered kernels scored on ``samples`` random configs."""
    settings = settings or DiscoverySettings()
    settings = settings or DiscoverySettings()
    ok_rows = np.flatnonzero(measured.ok)
    if not 4 <= samples < len(ok_rows):
        raise ConfigError(
            f"--samples {samples} must be between 4 and {len(ok_rows) - 1} (configs that ran)"
        )
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(ok_rows, size=samples, replace=False))
    test = np.setdiff1d(ok_rows, rows)
    log_t = np.log(measured.times_ms)
    mu, sd = float(log_t[rows].mean()), float(log_t[rows].std())
    y, y_test = (log_t[rows] - mu) / sd, (log_t[test] - mu) / sd
    table = FeatureTable(measured.space)
    default, gpu = default_kernel(measured.space), gpu_kernel(measured.space)
    found = discover(table, rows, y, seeds=(gpu, default), rng=rng, settings=settings).best.kernel
    out = []
    for label, kernel in (
        ("default (M52 ARD, raw)", default),
        ("gpu-aware", gpu),
        ("discovered", found),
    ):
        out.append(_score(label, kernel, table, rows, y, test, y_test, settings.max_iter))
    return out


def _score(
    label: str,
    kernel: Kernel,
    table: FeatureTable,
    rows: npt.NDArray[np.intp],
    y: npt.NDArray[np.float64],
    test: npt.NDArray[np.intp],
    y_test: npt.NDArray[np.float64],
    max_iter: int,
) -> KernelComparison:
    scored = score_kernel(kernel, table, rows, y, max_iter=max_iter)
    if scored.hypers is None:
        return KernelComparison(label, str(kernel), float("inf"), float("inf"))
    gp = condition(kernel, scored.hypers, table, rows, y)
    mean, var = gp.predict(test)
    test_crps = float(np.mean(gaussian_crps(y_test, mean, var + gp.noise)))
    return KernelComparison(label, str(kernel), scored.crps, test_crps)
