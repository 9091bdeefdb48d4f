"""The suite's metrics, as KernelBench defines them: pure functions of the per-task results.

Notation (over the N tasks of a run; failures stay in the denominator):

    correct_i     task i was judged correct and accepted by the guard
    s_i^b         speedup of task i over baseline b (``eager`` or ``compile``), measured under the
                  run's precision policy: baseline median time / candidate median time; defined
                  only when correct_i and both were timed
    fast_p^b      |{i : correct_i and s_i^b > p}| / N
    geomean^b     (prod_i  t_i)^(1/N)  with  t_i = s_i^b when defined, else 1.0 (a failed task
                  falls back to the baseline, so it neither helps nor hurts)
    geomean_c^b   (prod_{i in C} s_i^b)^(1/|C|)  over C = the tasks where s_i^b is defined
                  (correct and timed); None when C is empty
    sol_i         speed-of-light fraction of a correct task: floor time / candidate time
    median_sol    median of sol_i over the correct tasks that have one; None when none do

A metric against a baseline the run did not measure (``torch.compile`` on the CPU, say) is None,
never 0: "not measured" and "never faster" are different answers.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from kernelwright.bench.results import BASELINES, Baseline, BenchResult

FAST_P = (0, 1, 2)

# The keys of the ``summary`` object, in order (documented in docs/bench.md; tested).
SUMMARY_KEYS = (
    "n_tasks",
    "fast_0",
    "fast_1",
    "fast_2",
    "fast_0_vs_compile",
    "fast_1_vs_compile",
    "fast_2_vs_compile",
    "geomean_speedup",
    "geomean_speedup_correct_only",
    "geomean_speedup_vs_compile",
    "geomean_speedup_correct_only_vs_compile",
    "median_sol_fraction",
)


def fast_p(results: Sequence[BenchResult], p: float, baseline: Baseline = "eager") -> float | None:
    """Fraction of all tasks that are correct with a speedup over ``baseline`` above ``p``."""
    if not results:
        return None
    hits = sum(1 for r in results if (s := r.speedup(baseline)) is not None and s > p)
    return hits / len(results)


def fast_p_curve(
    results: Sequence[BenchResult], ps: Iterable[float], baseline: Baseline = "eager"
) -> list[tuple[float, float | None]]:
    """``fast_p`` at each threshold in ``ps`` (the report's curve)."""
    return [(p, fast_p(results, p, baseline)) for p in ps]


def geomean_speedup(
    results: Sequence[BenchResult], baseline: Baseline = "eager", correct_only: bool = False
) -> float | None:
    """Geometric-mean speedup; failures count as 1.0 unless ``correct_only``."""
    if correct_only:
        values = [s for r in results if (s := r.speedup(baseline)) is not None]
    else:
        values = [s if (s := r.speedup(baseline)) is not None else 1.0 for r in results]
    return geomean(values)


def geomean(values: Sequence[float]) -> float | None:
    """Geometric mean of positive values (None for none), computed in log space."""
    if not values:
        return None
    if any(v <= 0 for v in values):
        raise ValueError(f"a geometric mean needs positive values, got {min(values)}")
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def median_sol_fraction(results: Sequence[BenchResult]) -> float | None:
    """Median speed-of-light fraction over the correct tasks that have one."""
    values = [f for r in results if (f := r.sol_fraction) is not None]
    return statistics.median(values) if values else None


def summarise(
    results: Sequence[BenchResult], baselines: Collection[Baseline] = BASELINES
) -> dict[str, Any]:
    """The ``summary`` object: exactly :data:`SUMMARY_KEYS`.

    Args:
        results: one result per task (failures included).
        baselines: the baselines the run measured; metrics against the others are None.
    """
    summary: dict[str, Any] = {"n_tasks": len(results)}
    for baseline in BASELINES:
        suffix = "" if baseline == "eager" else "_vs_compile"
        measured = baseline in baselines
        for p in FAST_P:
            summary[f"fast_{p}{suffix}"] = fast_p(results, p, baseline) if measured else None
        summary[f"geomean_speedup{suffix}"] = (
            geomean_speedup(results, baseline) if measured else None
        )
        summary[f"geomean_speedup_correct_only{suffix}"] = (
            geomean_speedup(results, baseline, correct_only=True) if measured else None
        )
    summary["median_sol_fraction"] = median_sol_fraction(results)
    return {key: summary[key] for key in SUMMARY_KEYS}


def by_family(
    results: Sequence[BenchResult], baselines: Collection[Baseline] = BASELINES
) -> dict[str, dict[str, Any]]:
    """:func:`summarise` per task family, families in first-seen order."""
    groups: dict[str, list[BenchResult]] = {}
    for r in results:
        groups.setdefault(r.family, []).append(r)
    return {family: summarise(group, baselines) for family, group in groups.items()}


def status_counts(results: Sequence[BenchResult]) -> dict[str, int]:
    """How many tasks ended in each status (``correct``, ``incorrect``, ``missing``...)."""
    return dict(Counter(r.status for r in results))
