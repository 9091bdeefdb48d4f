"""Rich renderings of verdicts: a short summary a person reads in five seconds."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from kernelwright.formatting import fmt_ms, fmt_x
from kernelwright.records import CallBreakdown, PhaseTime, Status, TimingStats, Verdict

STATUS_STYLE = {
    Status.CORRECT: "bold green",
    Status.INCORRECT: "bold red",
    Status.COMPILE_ERROR: "bold red",
    Status.RUNTIME_ERROR: "bold red",
    Status.TIMEOUT: "bold yellow",
    Status.REJECTED: "bold magenta",
}


def median(stats: TimingStats | None) -> float | None:
    """The median of optional timing statistics."""
    return stats.median_ms if stats is not None else None


def verdict_panel(verdict: Verdict, title: str = "") -> Panel:
    """The summary shown by ``kernelwright eval``."""
    parts: list[RenderableType] = []
    head = Text()
    head.append(verdict.status.value.upper(), style=STATUS_STYLE[verdict.status])
    if verdict.message:
        head.append(f"  {verdict.message}")
    parts.append(head)

    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="dim")
    facts.add_column()
    tol = verdict.tolerance
    facts.add_row(
        "checks",
        f"{verdict.trials_passed}/{verdict.trials} trials, precision {verdict.precision.value}, "
        f"atol={tol.atol:g} rtol={tol.rtol:g}",
    )
    if verdict.max_abs_err is not None:
        facts.add_row(
            "error",
            f"max abs {verdict.max_abs_err:.3g}, max rel {verdict.max_rel_err or 0:.3g}, "
            f"normalised {verdict.norm_err or 0:.3g}",
        )
    if verdict.device is not None:
        d = verdict.device
        where = f"{d.name}, torch {d.torch}, triton {d.triton or '-'}"
        if d.interpreter:
            where += " (Triton interpreter)"
        facts.add_row("device", where)
    parts.append(facts)

    timing = verdict.timing
    if timing.candidate or timing.eager or timing.compile:
        table = Table(box=None, padding=(0, 2), show_edge=False)
        table.add_column("")
        table.add_column("median ms", justify="right")
        table.add_column("speedup", justify="right")
        metered = timing.candidate_energy is not None
        if metered:
            table.add_column("mJ a call", justify="right")
            table.add_column("W", justify="right")
        rows = (
            ("candidate", timing.candidate, "", timing.candidate_energy),
            ("eager", timing.eager, fmt_x(timing.speedup_vs_eager), timing.eager_energy),
            ("torch.compile", timing.compile, fmt_x(timing.speedup_vs_compile),
             timing.compile_energy),
        )
        for name, stats, speedup, energy in rows:
            cells = [name, fmt_ms(median(stats)), speedup]
            if metered:
                spread = f" +- {energy.mj_per_call_se:.3f}" if energy and energy.mj_per_call_se \
                    else ""
                cells += ([f"{energy.mj_per_call:.3f}{spread}", f"{energy.watts:.0f}"] if energy
                          else ["-", "-"])
            table.add_row(*cells)
        parts.append(table)
        if timing.method:
            parts.append(Text(timing.method, style="dim"))
        for name, process in (("candidate", timing.candidate_breakdown),
                              ("eager", timing.eager_breakdown),
                              ("torch.compile", timing.compile_breakdown)):
            if process is not None:
                parts.append(Text(f"{name}: {describe_breakdown(process)}", style="dim"))
        for note in timing.notes:
            parts.append(Text(note, style="yellow"))
    if verdict.sol is not None:
        sol = verdict.sol
        frac = f"{sol.fraction:.1%} of" if sol.fraction is not None else "floor"
        parts.append(
            Text(
                f"speed of light: {frac} {fmt_ms(sol.floor_ms)} ms ({sol.bound}-bound: "
                f"{sol.bytes / 1e6:.3g} MB, {sol.flops / 1e9:.3g} GFLOP; ceilings "
                f"{sol.memory_gbps / 1e3:.3g} TB/s, {sol.matrix_tflops:.3g} TFLOP/s, "
                f"{sol.ceilings})",
                style="cyan",
            )
        )
    if verdict.phases or verdict.setup:
        parts.append(Text(describe_phases(verdict.phases, verdict.duration_s, verdict.setup),
                          style="dim"))
    for v in verdict.violations:
        parts.append(Text(f"✗ {v.check}: {v.reason}", style="magenta"))
    for flag in verdict.flags:
        parts.append(Text(f"! {flag}", style="yellow"))
    for label in verdict.labels:
        parts.append(Text(f"• {label}", style="green"))
    return Panel(Group(*parts), title=title or "kernelwright eval", expand=False)


def describe_breakdown(p: CallBreakdown) -> str:
    """Where a call's time went, in one line (ms a call)."""
    def against(measured: float | None, share: float | None) -> float | str | None:
        if measured is None or share is None:
            return measured
        return f"{fmt_ms(measured)} (calibrated {fmt_ms(share)})"

    judge = [("writing inputs", against(p.write_ms, p.write_fixed_ms)),
             ("the process's turn", against(p.turn_ms, p.turn_fixed_ms)),
             ("reading outputs", against(p.read_ms, p.read_fixed_ms)),
             ("of which opening them", against(p.map_ms, p.map_fixed_ms)),
             ("fixed cost subtracted", p.fixed_ms)]
    mapped = (f", mapped {p.mapped_mb:.1f} MB" if p.mapped_mb is not None else "")
    process = [("setup", p.setup_ms), ("the call's events", p.events_ms),
               ("first start to last end", p.span_ms), ("host issuing", p.issue_ms),
               ("of which in the forward", p.forward_ms),
               ("before it (revealing, views, event)", p.prelude_ms),
               ("issue to idle", p.run_ms), ("reply", p.reply_ms), ("whole turn", p.busy_ms)]

    def cells(pairs: Sequence[tuple[str, float | str | None]]) -> str:
        return ", ".join(f"{label} {v if isinstance(v, str) else fmt_ms(v)}"
                         for label, v in pairs if v is not None)

    allocator = ", ".join(f"{label} {v:.2g}" for label, v in
                          (("device allocations", p.device_allocs),
                           ("cache flushes at the memory cap", p.alloc_retries))
                          if v is not None)
    parts = [f"judge: {cells(judge)}{mapped}" if cells(judge) else "",
             f"process (its own report): {cells(process)}" if cells(process) else "",
             f"allocator (a call): {allocator}" if allocator else ""]
    return "; ".join(filter(None, parts)) + " (ms a call, a diagnostic)"


def describe_phases(phases: Sequence[PhaseTime], duration_s: float,
                    setup: Sequence[PhaseTime] = ()) -> str:
    """Where an evaluation's seconds went, in one line: the session's set-up it waited for
    (its first evaluation's), then the candidate's steps."""
    def listed(items: Sequence[PhaseTime]) -> str:
        return ", ".join(f"{p.name} {p.seconds:.2f} s" for p in items if p.seconds >= 0.005)

    parts = [f"the session's set-up: {listed(setup)}" if listed(setup) else "",
             f"the candidate's steps: {listed(phases)}" if listed(phases) else ""]
    return (f"{'; '.join(filter(None, parts))}; {duration_s:.1f} s in all (the rest: the judge's "
            "own work between the steps, the reference's calls and the messages)")
