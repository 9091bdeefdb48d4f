"""``kernelwright optimize TASK`` and ``kernelwright skills list|show|stats``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from kernelwright.cli.common import (
    EXIT_FAILED,
    archive_path,
    err,
    out,
    output_file,
    output_folder,
    parse_objective,
    parse_precision,
    user_errors,
)

skills_app = typer.Typer(
    help="The expert skills library: list, show, and where each skill paid.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """Add ``optimize`` and the ``skills`` group to the app."""
    app.command("optimize")(optimize_command)
    app.add_typer(skills_app, name="skills")


@user_errors
def optimize_command(
    task: Annotated[Path, typer.Argument(help="KernelBench problem file (defines Model).")],
    device: Annotated[
        str, typer.Option(help="auto | cuda | cpu (Triton interpreter, small shapes).")
    ] = "auto",
    precision: Annotated[
        str | None,
        typer.Option(
            help="fp32 | tf32 | bf16, for candidates and baselines (default: the constraints' "
            "precision, else fp32)."
        ),
    ] = None,
    budget_candidates: Annotated[
        int | None, typer.Option("--budget-candidates", help="Stop after N evaluated candidates.")
    ] = None,
    budget_minutes: Annotated[
        float | None, typer.Option("--budget-minutes", help="Stop after M minutes of wall time.")
    ] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Write best.py, report.md and candidates/ here.")
    ] = None,
    archive: Annotated[
        Path | None, typer.Option(help="SQLite archive (default: ~/.kernelwright/archive.sqlite).")
    ] = None,
    resume: Annotated[
        str | None, typer.Option(help="Continue this run id (default: the task's own).")
    ] = None,
    size: Annotated[
        str | None, typer.Option(help="full | small (default: full on a GPU, small on the CPU).")
    ] = None,
    trials: Annotated[int, typer.Option(help="Correctness trials per candidate.")] = 5,
    search: Annotated[
        str,
        typer.Option(
            help="How the designs are searched: staged (ranked structures, then tuning), mcts "
            "(a tree of design decisions) or evolution (a population of designs)."
        ),
    ] = "staged",
    objective: Annotated[
        str,
        typer.Option(
            help="What ranks candidates: time (median ms a call), energy (joules a call, from "
            "the GPU's energy counter) or edp (their product). Energy is reported whenever the "
            "GPU has a counter."
        ),
    ] = "time",
    workers: Annotated[
        int,
        typer.Option(
            help="Candidates judged at once, each by a worker process with a judge of its own "
            "(one GPU each on a GPU host; workers sharing a GPU disturb each other's timings)."
        ),
    ] = 1,
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="Judge the candidates on a Dask cluster: its scheduler's address, or `local` "
            "for --workers processes of this host (pip install 'kernelwright[distributed]')."
        ),
    ] = None,
    structures: Annotated[
        int | None,
        typer.Option(
            help="Stage-1 designs to try before tuning (--search staged; default: half the budget)."
        ),
    ] = None,
    tuner: Annotated[
        str,
        typer.Option(
            help="Stage-2 tuning strategy: auto (neighbours-then-bo, or neighbours without "
            "SciPy) or a name from `kernelwright tune strategies`."
        ),
    ] = "auto",
    compile_baseline: Annotated[
        bool | None,
        typer.Option("--compile/--no-compile", help="Time torch.compile (default: on a GPU only)."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds allowed per candidate.")] = 300.0,
    llm: Annotated[
        str | None, typer.Option("--llm", help="LLM proposer, e.g. openai:MODEL (else templates).")
    ] = None,
    llm_base_url: Annotated[
        str | None, typer.Option("--llm-base-url", help="OpenAI-compatible endpoint.")
    ] = None,
    llm_only: Annotated[
        bool,
        typer.Option(
            "--llm-only",
            help="The LLM proposes alone (to evaluate an agent by itself); by default it shares "
            "the search with the templates and the constant tuner.",
        ),
    ] = False,
    constraints: Annotated[
        Path | None,
        typer.Option(
            help="Constraints file (backends, precision, forbidden ops, signatures, budget), "
            "enforced for every proposer."
        ),
    ] = None,
    constraints_text: Annotated[
        str | None,
        typer.Option(
            "--constraints-text",
            help="Requirements in words (docs/constraints.md), formulated and shown before "
            "anything runs, then enforced like --constraints (added to that file when both).",
        ),
    ] = None,
    notes: Annotated[
        Path | None, typer.Option(help="Engineer's notes for the LLM proposer.")
    ] = None,
    profile: Annotated[
        Path | None,
        typer.Option(
            help="A Nsight Compute profile of a kernel to improve (`kernelwright diagnose` "
            "reads it): its diagnoses go into the report and, with --llm, the planner's notes."
        ),
    ] = None,
    confirm: Annotated[
        bool,
        typer.Option(
            "--confirm/--no-confirm",
            help="On a GPU, evaluate the best candidate once more after the search and report "
            "that time (the least of many noisy times is biased low).",
        ),
    ] = True,
    spill_screen: Annotated[
        bool,
        typer.Option(
            "--spill-screen/--no-spill-screen",
            help="On a GPU, compile each tuning move before it is judged and skip one whose "
            "kernels spill registers where its structure's best candidate's do not.",
        ),
    ] = True,
    profile_best: Annotated[
        bool,
        typer.Option(
            "--profile-best",
            help="After the search, profile the best (template) candidate with Nsight Compute "
            "on the GPU: profile.csv beside the report, its diagnoses in the report.",
        ),
    ] = False,
    review: Annotated[
        bool, typer.Option("--review", help="Ask before promoting a new best (LLM).")
    ] = False,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write a JSON summary ('-': stdout).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")] = False,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Only show the plan (groups, skills held or skipped and why, ranked designs); "
            "with --out, write plan.md and designs/dNN.py. Nothing is evaluated.",
        ),
    ] = False,
) -> None:
    """Design verified Triton kernels for TASK: skills and templates, then tuning.

    Every candidate is judged by the harness and archived; running the same command again resumes.
    Exit code 0 when a correct candidate was found, 1 when none was, 2 for bad input.
    """
    from kernelwright.archive import Archive
    from kernelwright.constraints import load_constraints
    from kernelwright.errors import ConfigError
    from kernelwright.evaluate.options import EvalOptions
    from kernelwright.optimize import (
        LLMConfig,
        OptimizeInterrupted,
        OptimizeOptions,
        optimize_task,
        summarise,
        tuning_strategy,
    )
    from kernelwright.records import Precision
    from kernelwright.search.controller import Budget

    tuning_strategy(tuner)  # an unknown or replay-only name fails before anything runs
    if size is not None and size not in ("full", "small"):
        raise ConfigError(f"--size {size!r} is not one of full, small")
    if budget_candidates is not None and budget_candidates < 1:
        raise ConfigError(f"--budget-candidates must be at least 1, got {budget_candidates}")
    if llm is None and (llm_only or any(x is not None for x in (llm_base_url, notes))):
        raise ConfigError("--llm-base-url, --llm-only and --notes need --llm SPEC")
    diagnoses, diagnosed = profile_diagnoses(profile) if profile is not None else ((), ())
    planner_notes = notes_with_diagnoses(notes, diagnoses) if llm else None
    rules = load_constraints(constraints) if constraints is not None else None
    if constraints_text is not None:
        from kernelwright.cli.constraints_cmd import formulated

        rules = formulated(constraints_text, rules)
    if precision is not None:
        policy = parse_precision(precision)
    else:
        policy = rules.precision if rules and rules.precision else Precision.FP32
    budget = Budget(
        candidates=budget_candidates
        if budget_candidates is not None or budget_minutes is not None
        else 8,
        minutes=budget_minutes,
    )
    options = OptimizeOptions(
        evaluation=EvalOptions(
            device=device,
            precision=policy,
            size=size or "auto",
            trials=trials,
            timeout_s=timeout,
            compile_baseline=compile_baseline,
            objective=parse_objective(objective),
        ),
        constraints=rules,
        structures=structures,
        tuner=tuner,
        search=search,
        workers=workers,
        scheduler=scheduler,
        diagnoses=diagnoses,
        diagnosed=diagnosed,
        confirm=confirm,
        screen_spills=spill_screen,
        profile_best=profile_best,
        resume=resume,
        llm=LLMConfig(llm, llm_base_url, planner_notes, review, only=llm_only) if llm else None,
    )
    out_dir = output_folder(out_dir)
    output_file(json_path, "--json")
    if plan:
        _show_plan(task, options, out_dir)
        return
    store = Archive(archive_path(archive))
    display = _Progress(quiet, budget)
    try:
        with display:
            result = optimize_task(
                task,
                options,
                budget,
                out_dir,
                store,
                on_event=display.event,
                on_phase=display.phase,
            )
    except OptimizeInterrupted as stop:
        done = stop.result
        kept = f"; best.py and report.md so far in {done.out_dir}" if done.out_dir else ""
        err.print(
            f"[yellow]interrupted[/] after {len(done.trials)} candidate(s) (run {done.run_id}, "
            f"kept in the archive{kept}); rerun the same command to continue",
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    finally:
        store.close()
    summary = summarise(result)
    if json_path is not None:
        text = json.dumps(summary, indent=2)
        if str(json_path) == "-":
            out.print_json(text)
        else:
            json_path.write_text(text)
    if not quiet and str(json_path) != "-":
        _render(result, summary)
    if result.best is None:
        raise typer.Exit(EXIT_FAILED)


def _show_plan(task: Path, options: Any, out_dir: Path | None) -> None:
    from rich.markdown import Markdown

    from kernelwright.design.report import plan_markdown, write_plan
    from kernelwright.optimize import plan_only

    with err.status("[cyan]capturing the graph"):
        found = plan_only(task, options)
    out.print(Markdown("\n".join(plan_markdown(found))))
    if out_dir is not None:
        written = write_plan(found, out_dir)
        err.print(f"wrote {len(written)} files under {out_dir}")


class _Progress:
    """A one-line Rich status: candidates tried, the latest verdict, the best speed-up so far."""

    def __init__(self, quiet: bool, budget: Any) -> None:
        self.quiet = quiet
        self.budget = budget
        self.status: Any = None

    def __enter__(self) -> _Progress:
        if not self.quiet and err.is_terminal:
            self.status = err.status("starting")
            self.status.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(*exc)

    def phase(self, message: str) -> None:
        if self.status is not None:
            self.status.update(f"[cyan]{message}")

    def event(self, e: Any) -> None:
        skipped = ("refused", "screened", "reused")  # not judged: the verdict's message says why
        if self.quiet or e.kind not in ("evaluated", *skipped) or e.trial is None:
            return
        v = e.trial.verdict
        if e.kind in skipped:
            err.print(f"[{e.kind}] {v.message} | {e.trial.note}", highlight=False, soft_wrap=True)
            return
        ms = v.timing.candidate.median_ms if v.timing.candidate else None
        sp = v.timing.speedup_vs_eager
        best = e.best.verdict.timing.speedup_vs_eager if e.best and e.best.verdict.correct else None
        total = f"/{self.budget.candidates}" if self.budget.candidates else ""
        line = (
            f"[{e.n_evaluated}{total}] {v.status.value:<13} "
            + (f"{ms:9.4f} ms " if ms is not None else " " * 13)
            + (f"{sp:5.2f}x eager " if sp else " " * 13)
            + (f"| best {best:.2f}x {v.precision.value} " if best else "| best -          ")
            + f"| {e.trial.note}"
        )
        err.print(line, highlight=False, soft_wrap=True)
        if self.status is not None:
            self.status.update(
                f"[cyan]{e.n_evaluated}{total} candidates, best {best:.2f}x"
                if best
                else "[cyan]searching"
            )


def _render(result: Any, summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(
        title=f"optimize {result.task.name} ({result.device}, {result.size}, "
        f"precision {summary['precision']})",
        show_lines=False,
    )
    energy = summary["best_mj"] is not None
    cols = ["evaluated", "refused", "correct", "best ms", "vs eager", "vs compile", "SOL"]
    cols += ["best mJ", "eager mJ"] if energy else []
    for col in cols:
        table.add_column(col, justify="right")

    def f(v: Any, fmt: str) -> str:
        return fmt.format(v) if v is not None else "-"

    table.add_row(
        str(summary["evaluated"]),
        str(summary["refused"]),
        str(summary["correct"]),
        f(summary["best_ms"], "{:.4f}"),
        f(summary["speedup_vs_eager"], "{:.2f}x"),
        f(summary["speedup_vs_compile"], "{:.2f}x"),
        f(
            summary["sol_fraction"] * 100 if summary["sol_fraction"] is not None else None,
            "{:.0f}%",
        ),
        *([f(summary["best_mj"], "{:.3f}"), f(summary["eager_mj"], "{:.3f}")] if energy else []),
    )
    out.print(table)
    if summary["objective"] != "time":
        out.print(f"candidates ranked by {summary['objective']}")
    if summary["returns_eager"]:
        better = "faster" if summary["objective"] == "time" else f"better by {summary['objective']}"
        out.print(
            f"[yellow]eager PyTorch was {better} than every verified candidate: best.py is the "
            "task's own model"
        )
    if result.out_dir is not None:
        out.print(f"wrote {result.out_dir}/report.md" + (" and best.py" if result.best else ""))
    if summary["left_to_framework"]:
        out.print("left to PyTorch: " + "; ".join(summary["left_to_framework"]))
    if result.search is None:
        out.print("[yellow]no template applies to this task[/]")
    elif result.best is None and not result.trials:
        out.print(f"[yellow]stopped ({result.search.stopped}) before the first candidate[/]")
        if result.unrendered:
            design, why = result.unrendered[0]
            more = f" (and {len(result.unrendered) - 1} more, in the report)" if len(
                result.unrendered) > 1 else ""
            out.print(f"[yellow]no design could be rendered: {design}: {why}{more}[/]",
                      highlight=False)
    elif result.best is None and result.chosen is not None:
        out.print("[red]the fastest candidate failed its second evaluation: nothing returned[/]")
    elif result.best is None:
        out.print("[red]no correct candidate[/]")


# -- skills ------------------------------------------------------------------------------------


@skills_app.command("list")
@user_errors
def skills_list() -> None:
    """Every skill: id, the groups it applies to, its variant and expected gain."""
    from rich.table import Table

    from kernelwright.skills.library import SkillLibrary

    table = Table(title="kernelwright skills")
    table.add_column("id", no_wrap=True)
    for col in ("applies to", "variant", "gain", "intent"):
        table.add_column(col)
    for s in sorted(SkillLibrary.builtin(), key=lambda s: (s.applies_to, s.id)):
        table.add_row(s.id, s.applies_to, s.variant, f"{s.expected_gain:.1f}", s.intent)
    out.print(table)


@skills_app.command("show")
@user_errors
def skills_show(
    skill_id: Annotated[str, typer.Argument(help="A skill id (see `skills list`).")],
) -> None:
    """One skill: intent, conditions, pitfalls, parameters."""
    from kernelwright.skills.library import SkillLibrary

    s = SkillLibrary.builtin().get(skill_id)
    out.print(
        f"[bold]{s.id}[/] ({s.applies_to} -> {s.variant}; template {s.template}; "
        f"expected gain {s.expected_gain})"
    )
    out.print(s.intent)
    for cond in s.conditions:
        out.print(f"  condition: {cond.describe()}")
    if s.relieves:
        out.print(f"  relieves: {', '.join(s.relieves)} (a profile showing one ranks it higher)")
    for pitfall in s.pitfalls:
        out.print(f"  pitfall: {pitfall}")
    for param in s.params:
        out.print(
            f"  param {param.name}: {list(param.values)}" + (" (tuned)" if param.tune else "")
        )
    for expr in s.constraints:
        out.print(f"  constraint: {expr}")


@skills_app.command("stats")
@user_errors
def skills_stats(
    archive: Annotated[
        Path | None, typer.Option(help="SQLite archive (default: ~/.kernelwright).")
    ] = None,
) -> None:
    """Where each skill paid: applications, correct candidates and measured speed-ups."""
    from rich.table import Table

    from kernelwright.archive import Archive
    from kernelwright.skills.stats import skill_stats

    with Archive(archive_path(archive, must_exist=True)) as store:
        stats = skill_stats(store)
    if not stats:
        out.print("no template candidates in the archive yet; run `kernelwright optimize TASK`")
        return
    table = Table(title="skills in the archive (speed-ups: GPU timings only)")
    table.add_column("skill", no_wrap=True)
    for col in ("applied", "correct", "tasks", "x eager (geo)", "x eager (best)", "x compile"):
        table.add_column(col, justify="right")
    for s in sorted(stats.values(), key=lambda s: -s.applied):
        g, b, c = s.geomean, s.best, s.geomean_compile
        table.add_row(
            s.skill,
            str(s.applied),
            str(s.correct),
            str(len(s.tasks)),
            f"{g:.2f}x" if g else "-",
            f"{b:.2f}x" if b else "-",
            f"{c:.2f}x" if c else "-",
        )
    out.print(table)


def profile_diagnoses(profile: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """One line per diagnosis of a Nsight Compute raw-page export (``- kernel: text``), and
    the kinds diagnosed (``memory-bound``...)."""
    from kernelwright.errors import ConfigError
    from kernelwright.hardware.diagnose import ExportError, diagnose, parse_raw_csv

    try:
        findings = diagnose(parse_raw_csv(profile.read_text()))
    except ExportError as exc:
        raise ConfigError(f"--profile {profile}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {exc.filename}: {exc.strerror or exc}") from None
    lines = tuple(findings.for_prompt().splitlines()) or ("- nothing stands out in its counters",)
    return lines, tuple(dict.fromkeys(d.kind for d in findings.diagnoses))


def notes_with_diagnoses(notes: Path | None, diagnoses: tuple[str, ...]) -> str | None:
    """The planner's notes: the engineer's (a path, read by the proposer), with a profile's
    diagnoses appended as text when there are any."""
    if not diagnoses:
        return str(notes) if notes else None
    from kernelwright.errors import ConfigError

    try:
        text = notes.read_text() if notes else ""
    except OSError as exc:
        raise ConfigError(f"cannot read {exc.filename}: {exc.strerror or exc}") from None
    return (f"{text.rstrip()}\n\n" if text.strip() else "") + (
        "Hardware diagnoses of the profiled kernel (Nsight Compute counters):\n"
        + "\n".join(diagnoses) + "\n")
