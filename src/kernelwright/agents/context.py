"""What a role sees: the harness's verdicts turned into short, exact feedback.

The debugger needs the failure (status, the harness's message, error statistics, guard
violations with the check that fired); the tuner needs the performance (timings, speedups, the
speed-of-light fraction and which bound applies). Both read :func:`describe_verdict`.
"""

from __future__ import annotations

from kernelwright.records import Status, Verdict


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def describe_verdict(verdict: Verdict) -> str:
    """The verdict as a few lines of plain text (what went wrong, or how fast it is)."""
    lines = [f"status: {verdict.status.value}"]
    if verdict.message:
        lines.append(f"harness: {verdict.message}")
    if verdict.status is Status.INCORRECT or verdict.max_abs_err is not None:
        tol = verdict.tolerance
        lines.append(
            f"errors: max abs {_num(verdict.max_abs_err)}, max rel {_num(verdict.max_rel_err)}, "
            f"normalised {_num(verdict.norm_err)} (tolerance atol={tol.atol:g}, rtol={tol.rtol:g},"
            f" precision {verdict.precision.value})"
        )
    if verdict.trials:
        lines.append(f"trials passed: {verdict.trials_passed} of {verdict.trials}")
    for v in verdict.violations:
        lines.append(f"guard check `{v.check}` rejected it: {v.reason}")
    if verdict.correct:
        lines.extend(_performance(verdict))
    return "\n".join(lines)


def _performance(verdict: Verdict) -> list[str]:
    t = verdict.timing
    lines = []
    if t.candidate is not None:
        lines.append(f"candidate: {t.candidate.median_ms:.4g} ms median")
    if t.eager is not None:
        lines.append(
            f"eager PyTorch: {t.eager.median_ms:.4g} ms (speedup {_num(t.speedup_vs_eager)}x)"
        )
    if t.compile is not None:
        lines.append(
            f"torch.compile: {t.compile.median_ms:.4g} ms (speedup {_num(t.speedup_vs_compile)}x)"
        )
    if t.candidate_energy is not None:
        eager = (f", eager PyTorch {t.eager_energy.mj_per_call:.4g} mJ"
                 if t.eager_energy is not None else "")
        lines.append(
            f"energy: {t.candidate_energy.mj_per_call:.4g} mJ a call at "
            f"{t.candidate_energy.watts:.0f} W{eager}"
        )
    if verdict.sol is not None and verdict.sol.fraction is not None:
        lines.append(
            f"speed of light: {verdict.sol.fraction:.1%} of the {verdict.sol.bound}-bound floor "
            f"({verdict.sol.floor_ms:.4g} ms)"
        )
    # what the harness says of the kind of call: host-bound (faster kernels will not pay),
    # or a vendor product/convolution kept beside the custom kernels
    lines.extend(label for label in verdict.labels if label.startswith(("host-bound", "hybrid")))
    if t.candidate is not None and not t.representative:
        lines.append("timings were taken on the CPU (Triton interpreter): not representative")
    return lines


def profile_summary(verdict: Verdict) -> str | None:
    """What the harness measured about where the time goes, when it measured anything."""
    t = verdict.timing
    parts: list[str] = []
    if verdict.sol is not None:
        sol = verdict.sol
        parts.append(
            f"roofline: {sol.flops:,} FLOP, {sol.bytes:,} bytes minimum traffic -> "
            f"{sol.bound}-bound, floor {sol.floor_ms:.4g} ms ({sol.ceilings})"
        )
    if t.wall_ms is not None and t.candidate is not None:
        parts.append(
            f"synchronised wall time {t.wall_ms:.4g} ms vs device time {t.candidate.median_ms:.4g}"
            " ms"
        )
    if t.launch_ms is not None:
        parts.append(f"launch overhead about {t.launch_ms:.4g} ms")
    if verdict.device is not None:
        d = verdict.device
        parts.append(f"device: {d.name}" + (" (Triton interpreter)" if d.interpreter else ""))
    parts.extend(t.notes)
    parts.extend(verdict.flags)
    return "\n".join(parts) if parts else None
