"""The report's tables as plain rows of strings, shared by the Markdown and HTML renderings.

Every speedup column and summary line names the precision policy it was measured under.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernelwright.bench.results import Baseline, BenchResult
from kernelwright.formatting import fmt_frac, fmt_mj, fmt_ms, fmt_x


@dataclass(frozen=True, slots=True)
class Table:
    """Column headers and rows of cell strings; ``align`` is ``l`` or ``r`` per column."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: tuple[str, ...]


def summary_table(summary: Mapping[str, Any], precision: str) -> Table:
    """The summary metrics, one per row, each named with its baseline and policy."""
    rows: list[tuple[str, str]] = [("tasks", str(summary["n_tasks"]))]
    for suffix, name in (("", "eager"), ("_vs_compile", "torch.compile")):
        for p in (0, 1, 2):
            rows.append(
                (f"fast_{p} vs {name} ({precision})", fmt_frac(summary[f"fast_{p}{suffix}"]))
            )
        rows.append(
            (
                f"geomean speedup vs {name} ({precision}; failures count 1.0)",
                fmt_x(summary[f"geomean_speedup{suffix}"]),
            )
        )
        rows.append(
            (
                f"geomean speedup vs {name} ({precision}; correct tasks only)",
                fmt_x(summary[f"geomean_speedup_correct_only{suffix}"]),
            )
        )
    rows.append(
        ("median speed-of-light fraction (correct tasks)", fmt_frac(summary["median_sol_fraction"]))
    )
    return Table(("metric", "value"), tuple(rows), ("l", "r"))


def family_table(families: Mapping[str, Mapping[str, Any]], precision: str) -> Table:
    """One row per family: tasks, fast_1 and geomeans against both baselines."""
    rows = []
    for family, s in families.items():
        rows.append(
            (
                family,
                str(s["n_tasks"]),
                fmt_frac(s["fast_0"]),
                fmt_frac(s["fast_1"]),
                fmt_x(s["geomean_speedup"]),
                fmt_frac(s["fast_1_vs_compile"]),
                fmt_x(s["geomean_speedup_vs_compile"]),
                fmt_frac(s["median_sol_fraction"]),
            )
        )
    headers = (
        "family",
        "tasks",
        "fast_0",
        f"fast_1 vs eager ({precision})",
        f"geomean vs eager ({precision})",
        f"fast_1 vs compile ({precision})",
        f"geomean vs compile ({precision})",
        "median SOL",
    )
    return Table(headers, tuple(rows), ("l",) + ("r",) * 7)


def task_table(
    results: Sequence[BenchResult], precision: str, baselines: Sequence[Baseline]
) -> Table:
    """One row per task: status, times, speedups (with the policy) and SOL fraction; the
    energy a call of the candidate and of eager where the GPU's energy counter measured it."""
    metered = any(r.energy_mj("candidate") is not None for r in results)
    rows = []
    for r in results:
        energy = (fmt_mj(r.energy_mj("candidate")), fmt_mj(r.energy_mj("eager")))
        rows.append(
            (
                r.task_id,
                r.family,
                r.status,
                fmt_ms(r.candidate_ms),
                fmt_ms(r.baseline_ms("eager")),
                fmt_ms(r.baseline_ms("compile")),
                fmt_x(r.speedup("eager")),
                fmt_x(r.speedup("compile")) if "compile" in baselines else "-",
                fmt_frac(r.sol_fraction),
                *(energy if metered else ()),
                "" if r.correct else _one_line(r.message),
            )
        )
    headers = (
        "task",
        "family",
        "status",
        "candidate ms",
        "eager ms",
        "compile ms",
        f"x eager ({precision})",
        f"x compile ({precision})",
        "SOL",
        *(("candidate mJ", "eager mJ") if metered else ()),
        "note",
    )
    numbers = 8 if metered else 6
    return Table(headers, tuple(rows), ("l", "l", "l") + ("r",) * numbers + ("l",))



def _one_line(text: str, limit: int = 120) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"
