"""Turning what the harness gathered into a :class:`~kernelwright.records.Verdict`.

A pure function of plain data (the judge's summary and report, how the process ended, the
guard's violations), so every status can be tested without a subprocess. Everything here comes
from the trusted side: the judge's comparisons and clock, the executor's view of the process.

Status precedence: ``rejected`` (any guard violation, even if the candidate also failed: reaching
for protected files or patching the harness is never excused by crashing) > ``timeout`` >
``compile_error`` / ``runtime_error`` > ``incorrect`` (a trial mismatched) > ``correct``.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kernelwright.evaluate.correctness import REF_ERROR_FACTOR
from kernelwright.evaluate.executor import JobResult
from kernelwright.evaluate.oplog import VENDOR_OPS, compute_ops
from kernelwright.hardware.ceilings import Ceilings
from kernelwright.hardware.peaks import SOL_LIMIT, refusal_ceilings
from kernelwright.hardware.roofline import Work, speed_of_light
from kernelwright.records import (
    CallBreakdown,
    DeviceInfo,
    EnergyStats,
    PhaseTime,
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
# Host issuing at least this share of the calls' device span (all of it, within the
# timers' noise): the device waited for the host, the calls are host-bound
HOST_BOUND = 0.97


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
    violations: tuple[Violation, ...]
    baselines: dict[str, Any]
    baselines_cached: bool
    timeout_s: float
    duration_s: float
    labels: tuple[str, ...] = field(default=())
    setup: tuple[PhaseTime, ...] = field(default=())

    @property
    def report(self) -> dict[str, Any]:
        """The judge's report (empty when the process never reached the judge)."""
        return (self.job.result if self.job is not None else None) or {}


def build_verdict(ev: Evidence) -> Verdict:
    """Decide the status and fill in errors, timing and speed of light."""
    base = _base_fields(ev)
    if ev.violations:  # a guard finding outranks whatever else went wrong
        return _failed(Status.REJECTED, _violation_message(ev.violations), base, ev)
    if ev.job is None:
        return _failed(Status.RUNTIME_ERROR, "the candidate was not run", base, ev)
    failure = ev.report.get("failure")
    if failure:
        status, message = _failure(failure, ev)
        return _failed(status, message, base, ev)
    runs = ev.report.get("runs", [])
    trial_runs = [r for r in runs if r.get("kind") == "trial"]
    passed = sum(1 for r in trial_runs if r.get("ok"))
    base["tolerance"], widened = _applied_tolerance(ev.tolerance, runs)
    base |= _error_stats(runs) | {"trials_passed": passed}
    failed = next((r for r in trial_runs if not r.get("ok")), None)
    if failed is not None or len(trial_runs) < ev.trials:
        message = (f"{failed.get('label')}: {failed.get('message')}" if failed
                   else "not every trial produced outputs")
        return Verdict(status=Status.INCORRECT, correct=False, message=message,
                       labels=ev.labels, **base)
    base["timing"] = timing_of(ev)
    sol = speed_of_light_of(ev.prepared, ev.precision, base["timing"].candidate)
    return Verdict(
        status=Status.CORRECT,
        correct=True,
        sol=sol,
        flags=_flags(base["timing"], sol) + _baseline_flags(ev, base["timing"]),
        labels=(_labels(ev) + host_bound_label(base["timing"])
                + memory_cap_label(base["timing"]) + widened
                + _arbitrated_label(runs) + ev.labels),
        message=f"correct on {passed} trial(s)",
        **base,
    )


def _failed(status: Status, message: str, base: dict[str, Any], ev: Evidence) -> Verdict:
    return Verdict(status=status, correct=False, violations=ev.violations, message=message,
                   labels=ev.labels, **base)


def _failure(failure: dict[str, Any], ev: Evidence) -> tuple[Status, str]:
    kind = failure.get("status")
    phase = failure.get("phase") or failure.get("stage") or "start-up"
    job = ev.job
    if job is not None and job.killed:
        return Status.RUNTIME_ERROR, f"stopped during {phase}: {job.killed}"
    if kind == "timeout":
        return Status.TIMEOUT, (f"no answer within {ev.timeout_s:.0f}s (during {phase}); a hang "
                                "or a very slow kernel")
    if kind == "crashed":
        exit_text = _describe_exit(job.returncode if job else None)
        hint = _stderr_hint(job.stderr_tail if job else "")
        return Status.RUNTIME_ERROR, f"the candidate's process {exit_text} during {phase}{hint}"
    if kind == "compile_error":
        return Status.COMPILE_ERROR, str(failure.get("message") or "compile error")
    if kind == "rejected":
        return Status.REJECTED, str(failure.get("message") or "rejected")
    return Status.RUNTIME_ERROR, str(failure.get("message") or "runtime error")


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
        "phases": phases_of(ev.report),
        "setup": ev.setup,
        "timing": Timing(
            eager=stats_of(ev.baselines.get("eager")),
            compile=stats_of(ev.baselines.get("compile")),
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


def _arbitrated_label(runs: list[dict[str, Any]]) -> tuple[str, ...]:
    """Says how many elements outside the tolerance the float64 answer excused
    (``correctness``); empty when none."""
    count = sum(int(r.get("arbitrated") or 0) for r in runs)
    norms = sum(int(r.get("norm_arbitrated") or 0) for r in runs)
    labels: tuple[str, ...] = ()
    if count:
        labels += (f"{count} element(s) outside the tolerance of the reference passed by the "
                   "float64 answer: no farther from it than the reference, or misses no more "
                   "numerous or larger than the reference's own (an ill-conditioned reference)",)
    if norms:
        labels += (f"{norms} output comparison(s) (over the trials and checked calls) with a "
                   "normalised error past the bound passed by the float64 answer: no farther "
                   "from it than the reference (one that cancels)",)
    return labels


def stats_of(raw: dict[str, Any] | None) -> TimingStats | None:
    """Robust statistics of raw per-call samples (``{"samples_ms": [...]}``)."""
    if not raw or not raw.get("samples_ms"):
        return None
    data = sorted(float(s) for s in raw["samples_ms"])
    q = statistics.quantiles(data, n=4) if len(data) >= 2 else [data[0]] * 3
    return TimingStats(
        median_ms=statistics.median(data),
        mean_ms=statistics.fmean(data),
        min_ms=data[0],
        iqr_ms=q[2] - q[0],
        n_runs=len(data),
    )


def energy_of(raw: dict[str, Any] | None) -> EnergyStats | None:
    """The energy record the judge attached to a timing (None: not measured)."""
    energy = (raw or {}).get("energy")
    if not isinstance(energy, dict):
        return None
    mj, watts = energy.get("mj_per_call"), energy.get("watts")
    if not (isinstance(mj, int | float) and isinstance(watts, int | float)):
        return None
    if not all(math.isfinite(v) and v >= 0 for v in (mj, watts)):
        return None
    se = energy.get("mj_per_call_se")
    se = float(se) if isinstance(se, int | float) and math.isfinite(se) and se >= 0 else 0.0
    return EnergyStats(mj_per_call=float(mj), watts=float(watts), mj_per_call_se=se)


def phases_of(report: dict[str, Any]) -> tuple[PhaseTime, ...]:
    """The judge's seconds per kind of step of the candidate's process (``phases_s``)."""
    found = []
    for item in report.get("phases_s") or []:
        if (isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], int | float) and math.isfinite(item[1])):
            found.append(PhaseTime(item[0], float(item[1])))
    return tuple(found)


# The timing record's keys that CallBreakdown summarises
BREAKDOWN_KEYS = tuple(f.name for f in dataclasses.fields(CallBreakdown))


def breakdown_of(raw: dict[str, Any] | None) -> CallBreakdown | None:
    """Medians of each part of a timed call's time (None where nothing was recorded)."""
    if not raw:
        return None

    def median(key: str) -> float | None:
        values = [float(v) for v in raw.get(key) or []
                  if isinstance(v, int | float) and math.isfinite(v)]
        return statistics.median(values) if values else None

    found = CallBreakdown(**{f.name: median(f.name) for f in dataclasses.fields(CallBreakdown)})
    return None if found == CallBreakdown() else found


def _error_stats(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def worst(key: str) -> float | None:
        values = [r[key] for r in runs if r.get(key) is not None]
        return max(values) if values else None

    return {
        "max_abs_err": worst("max_abs_err"),
        "max_rel_err": worst("max_rel_err"),
        "norm_err": worst("norm_err"),
    }


def timing_of(ev: Evidence) -> Timing:
    """Candidate and baseline statistics, speedups and how they were taken."""
    raw = ev.report.get("timing") or {}
    eager = stats_of(ev.baselines.get("eager"))
    compiled = stats_of(ev.baselines.get("compile"))
    candidate = stats_of(raw)
    notes: list[str] = []
    if ev.device != "cuda":
        notes.append("CPU timing (Triton interpreter): not representative of a GPU")
    raced = raw.get("raced")
    if isinstance(raced, dict) and candidate is not None:
        notes.append(
            f"timing stopped after {candidate.n_runs} of {raced.get('planned_batches')} batches: "
            f"{candidate.median_ms:.4f} ms is more than {raced.get('margin')}x the search's best "
            f"so far ({float(raced.get('against_ms') or 0):.4f} ms)")

    def speedup(base: TimingStats | None) -> float | None:
        if base is None or candidate is None or candidate.median_ms <= 0:
            return None
        return base.median_ms / candidate.median_ms

    return Timing(
        candidate_energy=energy_of(raw),
        eager_energy=energy_of(ev.baselines.get("eager")),
        compile_energy=energy_of(ev.baselines.get("compile")),
        candidate=candidate,
        eager=eager,
        compile=compiled,
        speedup_vs_eager=speedup(eager),
        speedup_vs_compile=speedup(compiled),
        method=raw.get("method", "not timed"),
        representative=ev.device == "cuda",
        wall_ms=None,
        launch_ms=None,  # what the process measured of itself is not reported
        baselines_cached=ev.baselines_cached,
        notes=tuple(notes),
        candidate_breakdown=breakdown_of(raw),
        eager_breakdown=breakdown_of(ev.baselines.get("eager")),
        compile_breakdown=breakdown_of(ev.baselines.get("compile")),
        raced=isinstance(raced, dict),
    )


def speed_of_light_of(
    prepared: dict[str, Any], precision: Precision, candidate: TimingStats | None,
    *, physical: bool = False,
) -> SpeedOfLight | None:
    """The roofline floor of the task and the fraction ``candidate`` reaches: against the
    measured ceilings, or with ``physical`` against ceilings no kernel can pass (the datasheet
    peak where it is higher; see :mod:`kernelwright.hardware.peaks`), which a refusal uses."""
    ceilings = prepared.get("ceilings")
    if not ceilings:
        return None
    c = Ceilings(
        device=ceilings["device"],
        memory_gbps=float(ceilings["memory_gbps"]),
        matrix_tflops=dict(ceilings["matrix_tflops"]),
        source=ceilings["source"],
    )
    if physical:
        c = refusal_ceilings(c)
    work = Work(flops=int(prepared.get("flops", 0)), bytes=int(prepared.get("bytes", 0)))
    measured = candidate.median_ms if candidate else None
    return speed_of_light(work, c, precision.value, measured)


def _baseline_flags(ev: Evidence, timing: Timing) -> tuple[str, ...]:
    """Baselines the judge's clock timed faster than the hardware allows: the clock's error
    on this task is then larger than its calls, and no speed-up of it should be quoted."""
    if not timing.representative:
        return ()
    flags = []
    for name, stats in (("eager", timing.eager), ("torch.compile", timing.compile)):
        sol = speed_of_light_of(ev.prepared, ev.precision, stats, physical=True)
        if stats is not None and sol is not None and sol.fraction and sol.fraction > SOL_LIMIT:
            flags.append(
                f"{name} timed at {stats.median_ms:.4f} ms, {sol.fraction:.2f}x the hardware's "
                f"peak ({sol.floor_ms:.4f} ms, {sol.bound}-bound): the judge's clock is off on "
                "this task; do not quote its speed-ups"
            )
    return tuple(flags)


def _flags(timing: Timing, sol: SpeedOfLight | None) -> tuple[str, ...]:
    flags: list[str] = []
    if not timing.representative:
        return ()
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


def host_bound_label(timing: Timing) -> tuple[str, ...]:
    """A label where the process's host took as long to issue its calls as the device took to
    run them: the device waited for Python (or the forward waited for the device), so fewer
    launches and less Python a call would pay, faster kernels would not. Read from the
    process's own report, it only labels; it never changes a time or a status."""
    p = timing.candidate_breakdown
    if not timing.representative or p is None or p.issue_ms is None or not p.span_ms:
        return ()
    if p.issue_ms < HOST_BOUND * p.span_ms:
        return ()
    return (f"host-bound: issuing a call took {p.issue_ms:.3f} ms, its device span "
            f"{p.span_ms:.3f} ms (the device waited for the host, or the forward for the "
            "device): fewer launches and less Python a call pay here, faster kernels do not",)


def memory_cap_label(timing: Timing) -> tuple[str, ...]:
    """A label where the candidate's timed calls met its memory cap: PyTorch's allocator then
    frees its whole cache and allocates again, which waits for the device, so the calls stop
    overlapping the host's issuing and the time counts those waits. A forward that reuses its
    workspace (or needs less of it) pays nothing of the kind."""
    p = timing.candidate_breakdown
    if p is None or not p.alloc_retries:
        return ()
    return (f"memory cap: {p.alloc_retries:.2g} cache flushes a call (the allocator freed its "
            "cache to stay within the process's share of the device, waiting for the device "
            f"each time; {p.device_allocs or 0:.2g} device allocations a call): a forward with "
            "less workspace would not wait",)


def _labels(ev: Evidence) -> tuple[str, ...]:
    observed = ev.report.get("observed") or {}
    cand_ops = compute_ops(Counter(observed.get("op_counts") or {}))
    vendor = sorted(op for op in cand_ops if op in VENDOR_OPS)
    if vendor and observed.get("launches"):
        return (f"hybrid: framework {'/'.join(vendor)} with custom kernels for the rest",)
    return ()


def _violation_message(violations: tuple[Violation, ...]) -> str:
    first = violations[0]
    more = f" (+{len(violations) - 1} more)" if len(violations) > 1 else ""
    return f"rejected by {first.check}: {first.reason}{more}"


def _describe_exit(code: int | None) -> str:
    import signal

    if code is None:
        return "stopped"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _stderr_hint(tail: str) -> str:
    lines = [line for line in tail.strip().splitlines() if line.strip()]
    return f"; last output: {lines[-1][:300]}" if lines else ""
