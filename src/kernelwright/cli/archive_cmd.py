"""``kernelwright archive list | show | export | tree | runs``: what has been evaluated."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.syntax import Syntax
from rich.table import Table

from kernelwright.cli.common import archive_path, err, out, output_file, user_errors
from kernelwright.cli.render import STATUS_STYLE, median
from kernelwright.formatting import fmt_ms, fmt_x

archive_app = typer.Typer(
    help="Inspect and export the archive of evaluations.", no_args_is_help=True
)

ArchiveOpt = Annotated[Path | None, typer.Option("--archive", help="SQLite archive path.")]


def register(app: typer.Typer) -> None:
    """Add the sub-app to the app."""
    app.add_typer(archive_app, name="archive")


@archive_app.command("list")
@user_errors
def list_command(
    archive: ArchiveOpt = None,
    task: Annotated[
        str | None, typer.Option(help="Only this task (its id: file stem, or folder of a task.py).")
    ] = None,
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 20,
) -> None:
    """The newest evaluations."""
    from kernelwright.archive import Archive

    with Archive(archive_path(archive, must_exist=True)) as store:
        records = store.recent(limit, task)
    table = Table(title=f"archive: {archive_path(archive, must_exist=True)}")
    for col in (
        "id",
        "task",
        "origin",
        "status",
        "cand ms",
        "vs eager",
        "vs compile",
        "SOL",
        "when",
    ):
        table.add_column(col, justify="right" if col in ("id", "cand ms") else "left")
    for r in records:
        v = r.verdict
        t = v.timing
        table.add_row(
            str(r.evaluation_id),
            r.task_name,
            r.candidate.origin,
            f"[{STATUS_STYLE[v.status]}]{v.status.value}[/]",
            fmt_ms(median(t.candidate)),
            fmt_x(t.speedup_vs_eager),
            fmt_x(t.speedup_vs_compile),
            "-" if not v.sol or v.sol.fraction is None else f"{v.sol.fraction:.0%}",
            r.created_at.replace("T", " ")[:16],
        )
    out.print(table)


@archive_app.command("show")
@user_errors
def show_command(
    evaluation_id: Annotated[int, typer.Argument(help="Evaluation id (see `archive list`).")],
    archive: ArchiveOpt = None,
    source: Annotated[bool, typer.Option("--source/--no-source", help="Print the source.")] = True,
) -> None:
    """One evaluation: its verdict and the candidate's source."""
    from kernelwright.archive import Archive
    from kernelwright.cli.render import verdict_panel

    with Archive(archive_path(archive, must_exist=True)) as store:
        rec = store.get(evaluation_id)
    parent = f", parent candidate {rec.candidate.parent}" if rec.candidate.parent else ""
    out.print(
        verdict_panel(
            rec.verdict, f"#{rec.evaluation_id} {rec.task_name} ({rec.candidate.origin}{parent})"
        )
    )
    if source:
        out.print(Syntax(rec.candidate.source, "python", line_numbers=True))


@archive_app.command("export")
@user_errors
def export_command(
    jsonl: Annotated[Path, typer.Option("--jsonl", help="Output file ('-' for stdout).")],
    archive: ArchiveOpt = None,
    trajectories: Annotated[
        bool,
        typer.Option(
            "--trajectories", help="Include prompts and replies (for fine-tuning / RL data)."
        ),
    ] = False,
) -> None:
    """Every evaluation as one JSON line (candidate, parent, verdict)."""
    from kernelwright.archive import Archive

    output_file(jsonl, "--jsonl")
    with Archive(archive_path(archive, must_exist=True)) as store:
        if str(jsonl) == "-":
            n = store.export_jsonl(sys.stdout, trajectories)
        else:
            with open(jsonl, "w") as fh:
                n = store.export_jsonl(fh, trajectories)
    err.print(f"exported {n} evaluation(s)")


@archive_app.command("tree")
@user_errors
def tree_command(
    run_id: Annotated[str, typer.Argument(help="A run id (optimize prints it; see report.md).")],
    archive: ArchiveOpt = None,
) -> None:
    """A run's candidates with the candidate each was derived from, as JSON (its search tree
    or lineage, to draw)."""
    import json

    from kernelwright.archive import Archive
    from kernelwright.search.lineage import lineage
    from kernelwright.search.proposer import Trial

    with Archive(archive_path(archive, must_exist=True)) as store:
        records = store.history(run_id=run_id)
    if not records:
        err.print(f"no evaluation of run {run_id!r} in the archive")
        raise typer.Exit(1)
    trials = [Trial(r.candidate_id, r.candidate, r.verdict) for r in records]
    sys.stdout.write(json.dumps(lineage(trials), indent=2) + "\n")


@archive_app.command("runs")
@user_errors
def runs_command(
    archive: ArchiveOpt = None,
    task: Annotated[str | None, typer.Option(help="Only this task's runs (its id).")] = None,
    at: Annotated[
        int | None,
        typer.Option(help="Also the best among each run's first N evaluations (equal budgets)."),
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the rows as JSON ('-' for stdout).")
    ] = None,
) -> None:
    """How each search run went: evaluations, time to the first verified candidate,
    evaluations a minute after it, and the best found."""
    import dataclasses
    import json

    from kernelwright.archive import Archive
    from kernelwright.errors import ConfigError
    from kernelwright.search.run_stats import run_stats

    if at is not None and at < 1:
        raise ConfigError(f"--at must be a positive number of evaluations, got {at}")
    output_file(json_path, "--json")
    path = archive_path(archive, must_exist=True)
    with Archive(path) as store:
        rows = run_stats(store, at=at, task=task)
    if json_path is not None:
        text = json.dumps([dataclasses.asdict(r) for r in rows], indent=2) + "\n"
        if str(json_path) == "-":
            sys.stdout.write(text)
            return
        json_path.write_text(text)
    table = Table(title=f"search runs: {path}")
    heads = ["task", "search", "status", "evaluated", "correct", "first verified s",
             "a minute", "median s", "best ms", "confirmed ms", "vs eager", "vs compile"]
    if at is not None:
        heads.append(f"best ms in {at}")
    for col in heads:
        table.add_column(col, justify="left" if col in ("task", "search", "status") else "right")
    for r in rows:
        extra = [f"+{r.reused} reused" if r.reused else "", f"+{r.refused} refused"
                 if r.refused else "", f"+{r.screened} screened" if r.screened else ""]
        cells = [
            r.task, r.search, r.status,
            " ".join([str(r.evaluated), *filter(None, extra)]),
            str(r.correct),
            "-" if r.first_verified_s is None else f"{r.first_verified_s:.0f}",
            "-" if r.per_minute is None else f"{r.per_minute:.1f}",
            "-" if r.seconds_each is None else f"{r.seconds_each:.1f}",
            fmt_ms(r.best_ms), fmt_ms(r.confirmed_ms), fmt_x(r.best_vs_eager),
            fmt_x(r.best_vs_compile),
        ]
        if at is not None:
            cells.append(fmt_ms(r.best_at_ms))
        table.add_row(*cells)
    out.print(table)
    for r in rows:
        setup = ", ".join(f"{name} {s:.1f}" for name, s in r.setup_s.items() if s >= 0.05)
        if setup:
            out.print(f"[dim]{r.task} ({r.search}): the session's set-up, s: {setup}[/]")
        if r.phases_s:
            steps = ", ".join(f"{name} {s:.2f}" for name, s in r.phases_s.items() if s >= 0.005)
            raced = f"; {r.raced} of {r.evaluated} raced out" if r.raced else ""
            out.print(f"[dim]{r.task} ({r.search}): an evaluation's steps, mean s: {steps}"
                      f"{raced}[/]")
    if not rows:
        err.print("no search run in the archive" + (f" for task {task!r}" if task else ""))
