"""The report's plots, drawn with matplotlib's object API (no pyplot, no global state) as PNG.

    speedup   per task, against eager and torch.compile: horizontal bars on a log axis with the
              1.0 line (left of it: slower than the baseline); failed tasks marked with their
              status instead of a bar
    fast_p    the fraction of all tasks that are correct and more than p times faster, for p
              from 0 to 4, against each baseline (KernelBench's fast_p curve)
    sol       speed-of-light fraction per correct task (1.0 is the roofline floor)

Every title names the precision policy, and says so when timings are not representative (CPU).
matplotlib is optional (``pip install kernelwright[report]``): :func:`available` says whether
plots can be drawn, and the reports fall back to tables without it.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from kernelwright.bench.metrics import fast_p_curve
from kernelwright.bench.results import BASELINES, Baseline, BenchResult
from kernelwright.formatting import fmt_frac

COLORS = {"eager": "#1f77b4", "compile": "#9467bd", "fail": "#d62728", "sol": "#2ca02c"}
LABELS = {"eager": "vs eager PyTorch", "compile": "vs torch.compile"}
ROW_INCHES = 0.26
DPI = 110


def available() -> bool:
    """matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def _policy_note(precision: str, representative: bool) -> str:
    note = f"{precision} policy"
    return note if representative else f"{note}; CPU timings, not representative of a GPU"


def speedup_chart(
    results: Sequence[BenchResult],
    baselines: Sequence[Baseline],
    precision: str,
    representative: bool = True,
) -> bytes:
    """Per-task speedup bars against each measured baseline, log scale, 1.0 line."""
    shown = [b for b in BASELINES if b in baselines] or ["eager"]
    n = len(results)
    fig = _figure(9.0, max(2.5, 1.4 + ROW_INCHES * n * max(1, len(shown)) * 0.75))
    ax = fig.add_subplot()
    height = 0.8 / len(shown)
    values = [s for r in results for b in shown if (s := r.speedup(b)) is not None]
    lo = min([*values, 1.0]) / 2.5
    hi = max([*values, 1.0]) * 2.5
    for j, baseline in enumerate(shown):
        ys, xs = [], []
        for i, r in enumerate(results):
            s = r.speedup(baseline)
            if s is not None:
                ys.append(i + (j - (len(shown) - 1) / 2) * height)
                xs.append(s)
        # Bars grow from 1.0: right is faster than the baseline, left is slower.
        ax.barh(
            ys,
            [x - 1.0 for x in xs],
            left=1.0,
            height=height,
            color=COLORS[baseline],
            label=LABELS[baseline],
        )
        for x, y in zip(xs, ys, strict=True):
            ax.annotate(
                f"{x:.2f}x",
                (x, y),
                xytext=(3 if x >= 1 else -3, 0),
                textcoords="offset points",
                ha="left" if x >= 1 else "right",
                va="center",
                fontsize=6,
            )
    for i, r in enumerate(results):
        if not r.correct:
            ax.plot([1.0], [i], marker="x", color=COLORS["fail"], markersize=7)
            ax.annotate(f" {r.status}", (1.0, i), color=COLORS["fail"], fontsize=7, va="center")
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    _task_axis(ax, results)
    ax.set_xlabel("speedup (x, log scale; > 1 is faster than the baseline)")
    ax.set_title(f"Speedup per task ({_policy_note(precision, representative)})", fontsize=10)
    ax.xaxis.set_major_formatter(_times())
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.legend(loc="outside upper center", ncols=len(shown), fontsize=8)
    return _png(fig)


def fast_p_chart(
    results: Sequence[BenchResult],
    baselines: Sequence[Baseline],
    precision: str,
    representative: bool = True,
    p_max: float = 4.0,
) -> bytes:
    """fast_p for p in [0, p_max], one line per measured baseline."""
    fig = _figure(7.0, 4.0)
    ax = fig.add_subplot()
    steps = 400
    ps = [p_max * k / steps for k in range(steps + 1)]
    for baseline in [b for b in BASELINES if b in baselines]:
        curve = fast_p_curve(results, ps, baseline)
        ax.plot(
            [p for p, _ in curve],
            [v or 0.0 for _, v in curve],
            color=COLORS[baseline],
            label=f"fast_p {LABELS[baseline]}",
            linewidth=2,
        )
        marks = fast_p_curve(results, (0.0, 1.0, 2.0), baseline)
        ax.plot([p for p, _ in marks], [v or 0.0 for _, v in marks], "o", color=COLORS[baseline])
        for p, v in marks:
            ax.annotate(
                f"fast_{p:g} {fmt_frac(v)}",
                (p, v or 0.0),
                xytext=(5, 4 if baseline == "eager" else -11),
                textcoords="offset points",
                fontsize=7,
                color=COLORS[baseline],
            )
    ax.set_xlim(0, p_max)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("p (speedup threshold)")
    ax.set_ylabel("fraction of all tasks correct and faster than p")
    ax.yaxis.set_major_formatter(_percent())
    ax.set_title(f"fast_p ({_policy_note(precision, representative)})", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def sol_chart(results: Sequence[BenchResult], precision: str, representative: bool = True) -> bytes:
    """Speed-of-light fraction per task; failures marked."""
    n = len(results)
    fig = _figure(9.0, max(2.5, 1.4 + ROW_INCHES * n * 0.75))
    ax = fig.add_subplot()
    fractions = [r.sol_fraction for r in results]
    top = max([1.0, *[f for f in fractions if f is not None]]) * 1.05
    for i, (r, f) in enumerate(zip(results, fractions, strict=True)):
        if f is not None:
            color = COLORS["fail"] if f > 1.0 else COLORS["sol"]
            ax.barh([i], [f], color=color, height=0.7)
            ax.annotate(f" {fmt_frac(f)}", (f, i), fontsize=7, va="center")
        else:
            label = "correct, not timed" if r.correct else r.status
            ax.annotate(
                label,
                (0.0, i),
                xytext=(4, 0),
                textcoords="offset points",
                fontsize=7,
                va="center",
                color=COLORS["fail"],
            )
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xlim(0, top)
    _task_axis(ax, results)
    ax.xaxis.set_major_formatter(_percent())
    ax.set_xlabel("fraction of the speed of light (roofline floor / candidate time)")
    ax.set_title(
        f"Speed-of-light fraction per task ({_policy_note(precision, representative)})",
        fontsize=10,
    )
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def _task_axis(ax: Any, results: Sequence[BenchResult]) -> None:
    """One row per task, the first at the top (an empty run keeps a one-row axis)."""
    n = len(results)
    ax.set_yticks(range(n), [r.task_id for r in results], fontsize=7)
    ax.set_ylim(max(n, 1) - 0.5, -0.5)


def _times() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _pos: f"{value:g}x")


def _percent() -> Any:
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(xmax=1.0)
