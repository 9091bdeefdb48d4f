"""Turning what the harness gathered into a :class:`~kernelwright.records.Verdict`.

A pure function of plain data (the judge's summary and report, the candidate's job result, the
guard's violations), so every status can be tested without a subprocess.

Status precedence: ``timeout`` > ``rejected`` (any guard violation, even if the candidate also
failed: reaching for protected files or patching timers is never excused by crashing) >
``compile_error`` / ``runtime_error`` > ``incorrect`` (a trial mismatched) > ``correct``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from kernelwright.evaluate.correctness import REF_ERROR_FACTOR
from kernelwright.evaluate.executor import JobResult
from kernelwright.evaluate.oplog import VENDOR_OPS, compute_ops
from kernelwright.evaluate.timing import summarise
from kernelwright.hardware.ceilings import Ceilings
from kernelwright.hardware.roofline import Work, speed_of_light
from kernelwright.records import (
    DeviceInfo,
    Precision,
    SpeedOfLight,
    Status,
    Timing,
    TimingStats,
    Tolerance,
    Verdict,
    Violation,
)

REVIEW_SPEEDUP = 10.0


@dataclass(frozen=True, slots=True)
class Evidence:
    """Everything one evaluation produced, before it is judged."""

    precision: Precision
    tolerance: Tolerance
    device: str
    seed: int
    trials: int
    task_sha256: str
    solution_sha256: str
    prepared: dict[str, Any]
    job: JobResult | None
    report: dict[str, Any]
    violations: tuple[Violation, ...]
    baselines: dict[str, Any]
    baselines_cached: bool
    timeout_s: float
    duration_s: float


def build_verdict(ev: Evidence) -> Verdict:
    """Decide the status and fill in errors, timing and speed of light."""
    base = _base_fields(ev)
    job = ev.job
    if job is None:  # rejected statically: never ran
        return Verdict(
            status=Status.REJECTED,
            correct=False,
            violations=ev.violations,
            message=_violation_message(ev.violations),
            **base,
        )
    if job.timed_out:
        return Verdict(
            status=Status.TIMEOUT,
            correct=False,
            message=f"no result within {ev.timeout_s:.0f}s (last phase: "
            f"{job.last_phase or 'start-up'}); a hang or a very slow kernel",
            **base,
        )
    result = job.result
    if result is None:
        return Verdict(
            status=Status.RUNTIME_ERROR,
            correct=False,
            message=f"the candidate's process {job.describe_exit()} during "
            f"'{job.last_phase or 'start-up'}'{_stderr_hint(job.stderr_tail)}",
            **base,
        )
    status_hint = result.get("status")
    if ev.violations:  # a guard finding outranks whatever else went wrong
        return Verdict(
            status=Status.REJECTED,
            correct=False,
            violations=ev.violations,
            message=_violation_message(ev.violations),
            **base,
        )
    if status_hint in ("compile_error", "runtime_error"):
        return Verdict(
            status=Status(status_hint),
            correct=False,
            message=result.get("message") or status_hint,
            **base,
        )
    if ev.report.get("error"):
        return Verdict(
            status=Status.RUNTIME_ERROR,
            correct=False,
            message=f"the candidate's outputs could not be read: {ev.report['error']}",
            **base,
        )
    runs = ev.report.get("runs", [])
    stats = _error_stats(runs)
    trial_runs = [r for r in runs if r.get("kind") == "trial"]
    passed = sum(1 for r in trial_runs if r.get("ok"))
    base["tolerance"], widened = _applied_tolerance(ev.tolerance, runs)
    base |= stats | {"trials_passed": passed}
    if ev.violations or status_hint == "rejected":
        return Verdict(
            status=Status.REJECTED,
            correct=False,
            violations=ev.violations,
            message=_violation_message(ev.violations) or result.get("message", ""),
            **base,
        )
    failed = next((r for r in trial_runs if not r.get("ok")), None)
    if failed is not None or len(trial_runs) < ev.trials:
        message = (
            f"{failed.get('label')}: {failed.get('message')}"
            if failed
            else "not every trial produced outputs"
        )
        return Verdict(status=Status.INCORRECT, correct=False, message=message, **base)
    base["timing"] = _timing(ev, result)
    sol = _speed_of_light(ev, base["timing"])
    return Verdict(
        status=Status.CORRECT,
        correct=True,
        sol=sol,
        flags=_flags(base["timing"], sol),
        labels=_labels(ev) + widened,
        message=f"correct on {passed} trial(s)",
        **base,
    )


def _base_fields(ev: Evidence) -> dict[str, Any]:
    info = ev.prepared.get("device_info")
    return {
        "trials": ev.trials,
        "precision": ev.precision,
        "tolerance": ev.tolerance,
        "device": DeviceInfo(**info) if isinstance(info, dict) else None,
        "task_sha256": ev.task_sha256,
        "solution_sha256": ev.solution_sha256,
        "seed": ev.seed,
        "duration_s": ev.duration_s,
        "timing": Timing(
            eager=_stats(ev.baselines.get("eager")),
            compile=_stats(ev.baselines.get("compile")),
            representative=ev.device == "cuda",
            baselines_cached=ev.baselines_cached,
        ),
    }


def _applied_tolerance(
    tol: Tolerance, runs: list[dict[str, Any]]
) -> tuple[Tolerance, tuple[str, ...]]:
    """The tolerance as applied: its atol is the loosest any run's output was compared with.

    Under the fp32 policy an output's atol widens to a multiple of the reference's own error
    against float64 (see :mod:`~kernelwright.evaluate.correctness`); each run's report lists
    the atol per output. Also returns a label saying so when it widened (empty otherwise).
    """
    applied = [a for r in runs for a in (r.get("atol") or []) if a is not None]
    widest = max(applied, default=tol.atol)
    if widest <= tol.atol:
        return tol, ()
    label = (
        f"atol widened from {tol.atol:g} to up to {widest:.3g}: {REF_ERROR_FACTOR:g} x the fp32 "
        "reference's own error against float64, per output and trial"
    )
    return Tolerance(atol=widest, rtol=tol.rtol), (label,)


def _stats(raw: dict[str, Any] | None) -> TimingStats | None:
    if not raw or not raw.get("samples_ms"):
        return None
    return summarise(raw["samples_ms"])


def _error_stats(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def worst(key: str) -> float | None:
        values = [r[key] for r in runs if r.get(key) is not None]
        return max(values) if values else None

    return {
        "max_abs_err": worst("max_abs_err"),
        "max_rel_err": worst("max_rel_err"),
        "norm_err": worst("norm_err"),
    }


def _timing(ev: Evidence, result: dict[str, Any]) -> Timing:
    raw = result.get("timing")
    eager = _stats(ev.baselines.get("eager"))
    compiled = _stats(ev.baselines.get("compile"))
    candidate = _stats(raw)
    notes: list[str] = []
    if ev.device != "cuda":
        notes.append("CPU timing (Triton interpreter): not representative of a GPU")

    def speedup(base: TimingStats | None) -> float | None:
        if base is None or candidate is None or candidate.median_ms <= 0:
            return None
        return base.median_ms / candidate.median_ms

    median = _median
    return Timing(
        candidate=candidate,
        eager=eager,
        compile=compiled,
        speedup_vs_eager=speedup(eager),
        speedup_vs_compile=speedup(compiled),
        method=(raw or {}).get("method", "not timed"),
        representative=ev.device == "cuda",
        wall_ms=median((raw or {}).get("wall_ms")),
        launch_ms=median((raw or {}).get("launch_ms")),
        baselines_cached=ev.baselines_cached,
        notes=tuple(notes),
    )


def _median(values: list[float] | None) -> float | None:
    if not values:
        return None
    data = sorted(values)
    return data[len(data) // 2]


def _speed_of_light(ev: Evidence, timing: Timing) -> SpeedOfLight | None:
    ceilings = ev.prepared.get("ceilings")
    if not ceilings:
        return None
    c = Ceilings(
        device=ceilings["device"],
        memory_gbps=float(ceilings["memory_gbps"]),
        matrix_tflops=dict(ceilings["matrix_tflops"]),
        source=ceilings["source"],
    )
    work = Work(flops=int(ev.prepared.get("flops", 0)), bytes=int(ev.prepared.get("bytes", 0)))
    measured = timing.candidate.median_ms if timing.candidate else None
    return speed_of_light(work, c, ev.precision.value, measured)


def _flags(timing: Timing, sol: SpeedOfLight | None) -> tuple[str, ...]:
    flags: list[str] = []
    if not timing.representative:
        return ()
    if sol is not None and sol.fraction is not None and sol.fraction > 1.0:
        flags.append(
            f"faster than the speed-of-light floor ({sol.floor_ms:.4f} ms, {sol.bound}-bound): "
            "check that the task reads all its inputs, or that nothing is skipped"
        )
    for name, value in (
        ("eager", timing.speedup_vs_eager),
        ("torch.compile", timing.speedup_vs_compile),
    ):
        if value is not None and value > REVIEW_SPEEDUP:
            flags.append(
                f"speedup {value:.1f}x over {name} exceeds {REVIEW_SPEEDUP:.0f}x: "
                "worth a person's review before it is quoted"
            )
    return tuple(flags)


def _labels(ev: Evidence) -> tuple[str, ...]:
    obs = (ev.job.result or {}).get("observations", {}) if ev.job else {}
    cand_ops = compute_ops(Counter(obs.get("op_counts") or {}))
    vendor = sorted(op for op in cand_ops if op in VENDOR_OPS)
    if vendor and obs.get("launches_first_run"):
        return (f"hybrid: framework {'/'.join(vendor)} with custom kernels for the rest",)
    return ()


def _violation_message(violations: tuple[Violation, ...]) -> str:
    if not violations:
        return ""
    first = violations[0]
    more = f" (+{len(violations) - 1} more)" if len(violations) > 1 else ""
    return f"rejected by {first.check}: {first.reason}{more}"


def _stderr_hint(tail: str) -> str:
    lines = [line for line in tail.strip().splitlines() if line.strip()]
    return f"; last output: {lines[-1][:300]}" if lines else ""
