"""``kernelwright check-task TASK...``: flag degenerate tasks before benchmarking them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kernelwright.cli.common import EXIT_FAILED, out, parse_precision, user_errors


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("check-task")(check_task_command)


@user_errors
def check_task_command(
    tasks: Annotated[list[Path], typer.Argument(help="Task files or folders of task files.")],
    size: Annotated[
        str, typer.Option(help="full | small (the task's CPU-sized constants).")
    ] = "small",
    precision: Annotated[
        str, typer.Option(help="Tolerance policy for the zeros/constant test.")
    ] = "fp32",
) -> None:
    """Report tasks that a constant or all-zeros output passes, whose outputs are near zero or
    do not depend on the inputs or weights. Exit code 1 when any task is degenerate."""
    from kernelwright.task import load_task
    from kernelwright.task.quality import check_task

    paths = [p for t in tasks for p in (sorted(t.rglob("*.py")) if t.is_dir() else [t])]
    policy = parse_precision(precision)
    table = Table(title=f"task quality ({size} size, {policy.value} tolerance)")
    table.add_column("task")
    table.add_column("outputs")
    table.add_column("findings")
    bad = 0
    for path in paths:
        if path.name.startswith("_"):
            continue
        report = check_task(load_task(path, size=size), policy)
        bad += not report.ok
        shapes = ", ".join(str(s) for s in report.output_shapes)
        findings = "\n".join(f"[red]{f.check}[/]: {f.message}" for f in report.findings)
        table.add_row(report.task, shapes, findings or "[green]ok[/]")
    out.print(table)
    if bad:
        out.print(f"[red]{bad} degenerate task(s)[/]")
        raise typer.Exit(EXIT_FAILED)
