"""The baseline table: one row per task, fp32 and bf16 side by side, and the geometric means.

eager ms / compile ms     medians under the harness's timing (L2 flushed, rotated inputs)
compile x                 eager / compile: torch.compile's speedup over eager
floor ms                  bytes / 4.3 TB/s (the H200's measured copy bandwidth): the fp32
                          speed-of-light floor of a memory-bound task
GFLOP                     matrix FLOPs of one forward: where it is large, the task is
                          compute-bound and its floor is FLOPs / matrix rate instead
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kernelwright.formatting import fmt_ms, fmt_x

COPY_GBPS = 4300.0
MEASURED = ("ok", "eager_only")


@dataclass(frozen=True, slots=True)
class Row:
    """One task's baselines, both precisions."""

    task: str
    group: str
    family: str
    by_precision: dict[str, dict[str, Any]]

    def get(self, precision: str, key: str) -> Any:
        """A field of the precision's record (None when absent)."""
        return self.by_precision.get(precision, {}).get(key)

    def speedup(self, precision: str) -> float | None:
        """torch.compile over eager under ``precision``."""
        eager, compiled = self.get(precision, "eager_ms"), self.get(precision, "compile_ms")
        if not eager or not compiled:
            return None
        return float(eager) / float(compiled)

    def floor_ms(self, precision: str) -> float | None:
        """bytes / 4.3 TB/s."""
        nbytes = self.get(precision, "bytes")
        return nbytes / (COPY_GBPS * 1e9) * 1e3 if nbytes else None


def rows(records: Sequence[dict[str, Any]], task_order: Sequence[str] = ()) -> list[Row]:
    """The latest measurement per (task, precision), as rows in ``task_order`` (else first seen)."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    meta: dict[str, tuple[str, str]] = {}
    for r in records:
        if r.get("kind") != "measure":
            continue
        key = (r["task"], r["precision"])
        # A measurement replaces an earlier one; "not_run" never hides a real one.
        if r.get("status") == "not_run" and key in latest:
            continue
        latest[key] = r
        meta.setdefault(r["task"], (r.get("group", ""), r.get("family", "")))
    tasks = [t for t in task_order if t in meta] + [t for t in meta if t not in task_order]
    out = []
    for task in tasks:
        group, family = meta[task]
        by_p = {p: rec for (t, p), rec in latest.items() if t == task}
        out.append(Row(task, group, family, by_p))
    return out


def geomean(values: Sequence[float]) -> float | None:
    """Geometric mean (None for none)."""
    if not values:
        return None
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def geomeans(table: Sequence[Row], precisions: Sequence[str]) -> list[tuple[str, str, int, float]]:
    """(scope, precision, n, geomean compile speedup) overall and per group."""
    scopes = ["all", *dict.fromkeys(r.group for r in table)]
    out = []
    for scope in scopes:
        for p in precisions:
            values = [
                s for r in table if scope in ("all", r.group) and (s := r.speedup(p)) is not None
            ]
            g = geomean(values)
            if g is not None:
                out.append((scope, p, len(values), g))
    return out


def _cell(row: Row, precision: str, key: str) -> str:
    status = row.get(precision, "status")
    if status is None:
        return "-"
    if status not in MEASURED:
        return str(status)  # error, timeout, crashed, not_run
    return fmt_ms(row.get(precision, key))


def _columns(row: Row) -> list[str]:
    gflop = row.get("fp32", "flops") or row.get("bf16", "flops")
    return [
        row.task,
        row.family,
        _cell(row, "fp32", "eager_ms"),
        _cell(row, "fp32", "compile_ms"),
        fmt_x(row.speedup("fp32")),
        _cell(row, "bf16", "eager_ms"),
        _cell(row, "bf16", "compile_ms"),
        fmt_x(row.speedup("bf16")),
        fmt_ms(row.floor_ms("fp32") or row.floor_ms("bf16")),
        f"{gflop / 1e9:.1f}" if gflop else "-",
    ]


HEADERS = [
    "task",
    "family",
    "eager fp32 ms",
    "compile fp32 ms",
    "compile x fp32",
    "eager bf16 ms",
    "compile bf16 ms",
    "compile x bf16",
    "floor ms (bytes @ 4.3 TB/s)",
    "GFLOP",
]


def text_table(table: Sequence[Row], precisions: Sequence[str] = ("fp32", "bf16")) -> str:
    """A compact fixed-width table and the geometric means, for a terminal."""
    short = [
        "task",
        "family",
        "eager32",
        "comp32",
        "x32",
        "eager16",
        "comp16",
        "x16",
        "floor",
        "GFLOP",
    ]
    body = [_columns(r) for r in table]
    widths = [
        max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(short)
    ]
    lines = [
        "  ".join(
            h.ljust(w) if i < 2 else h.rjust(w)
            for i, (h, w) in enumerate(zip(short, widths, strict=True))
        )
    ]
    lines.append("-" * len(lines[0]))
    for b in body:
        lines.append(
            "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w)
                for i, (c, w) in enumerate(zip(b, widths, strict=True))
            )
        )
    lines.append("-" * len(lines[0]))
    lines.append("times in ms (median); x = eager / torch.compile; floor = bytes / 4.3 TB/s")
    lines += _geomean_lines(table, precisions)
    return "\n".join(lines)


def _geomean_lines(table: Sequence[Row], precisions: Sequence[str]) -> list[str]:
    out = []
    for scope, p, n, g in geomeans(table, precisions):
        out.append(f"geomean torch.compile speedup over eager, {p}, {scope}: {g:.2f}x (n={n})")
    for p in precisions:
        fractions = [
            f / e
            for r in table
            if (f := r.floor_ms(p)) is not None
            and isinstance(e := r.get(p, "eager_ms"), int | float)
            and e > 0
        ]
        if fractions:
            fractions.sort()
            out.append(
                f"median eager speed-of-light fraction (bytes floor), {p}: "
                f"{fractions[len(fractions) // 2]:.1%} (n={len(fractions)})"
            )
    return out


def markdown(
    table: Sequence[Row], header: dict[str, str], precisions: Sequence[str] = ("fp32", "bf16")
) -> str:
    """A markdown section (BENCHMARKS.md's form): provenance, table, geometric means."""
    gpu = header.get("GPU", "?")
    lines = [f"## Baselines on {gpu}: eager PyTorch and torch.compile", ""]
    lines += [f"- **{k}**: {v}" for k, v in header.items()]
    lines += ["", "| " + " | ".join(HEADERS) + " |", "|---|---|" + "---:|" * (len(HEADERS) - 2)]
    for r in table:
        cells = _columns(r)
        cells[0] = f"`{cells[0]}`"
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Geometric means of torch.compile's speedup over eager (tasks measured in both):",
        "",
    ]
    lines += ["| scope | precision | tasks | geomean |", "|---|---|---:|---:|"]
    for scope, p, n, g in geomeans(table, precisions):
        lines.append(f"| {scope} | {p} | {n} | {g:.2f}x |")
    lines += [
        "",
        *(f"- {line}" for line in _geomean_lines(table, precisions) if "speed-of-light" in line),
    ]
    lines += [
        "",
        "Times are medians of CUDA-event timings with the L2 flushed before each run and input "
        "sets rotated (kernelwright's harness timing); fp32 is strict (TF32 off); bf16 casts "
        "inputs and weights. `floor` is bytes / 4.3 TB/s; compute-bound tasks (large GFLOP) have "
        "a higher floor (FLOPs / matrix rate).",
    ]
    return "\n".join(lines)
