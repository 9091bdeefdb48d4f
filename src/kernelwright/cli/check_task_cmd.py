"""``kernelwright check-task TASK...``: flag degenerate tasks; ``--suite``: a suite's checks."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kernelwright.cli.common import EXIT_FAILED, err, out, parse_precision, user_errors


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
    suite: Annotated[
        bool,
        typer.Option(
            "--suite",
            help="Check a suite instead: each task loads, names a family, runs small on the CPU "
            "(finite, input-dependent, inputs intact) and fits at full size; ids are unique.",
        ),
    ] = False,
    markdown: Annotated[
        bool,
        typer.Option("--markdown", help="With --suite: print the suite's task table as markdown."),
    ] = False,
) -> None:
    """Flag degenerate tasks, or with --suite check a whole suite. Exit code 1 on a finding.

    Without --suite: tasks that a constant or all-zeros output passes, whose outputs are near
    zero or do not depend on the inputs or weights. Folders are searched recursively; solution
    files (they define ModelNew) are skipped.
    """
    from kernelwright.bench.suite import discover_tasks
    from kernelwright.errors import ConfigError

    if size not in ("full", "small"):
        raise ConfigError(f"--size {size!r} is not one of full, small")
    if markdown and not suite:
        raise ConfigError("--markdown needs --suite")
    paths = discover_tasks(tasks)
    if suite:
        _check_suite(paths, size, markdown)
    else:
        _check_quality(paths, size, precision)


def _check_quality(paths: list[Path], size: str, precision: str) -> None:
    from kernelwright.task import load_task
    from kernelwright.task.quality import check_task

    policy = parse_precision(precision)
    table = Table(title=f"task quality ({size} size, {policy.value} tolerance)")
    table.add_column("task")
    table.add_column("outputs")
    table.add_column("findings")
    bad = 0
    for path in paths:
        report = check_task(load_task(path, size=size), policy)
        bad += not report.ok
        shapes = ", ".join(str(s) for s in report.output_shapes)
        findings = "\n".join(f"[red]{f.check}[/]: {f.message}" for f in report.findings)
        table.add_row(report.task, shapes, findings or "[green]ok[/]")
    out.print(table)
    if bad:
        out.print(f"[red]{bad} degenerate task(s)[/]")
        raise typer.Exit(EXIT_FAILED)


def _check_suite(paths: list[Path], size: str, markdown: bool) -> None:
    from kernelwright.task.suite_checks import check_in_child, markdown_table

    if markdown:
        out.print(markdown_table(paths), markup=False, highlight=False, soft_wrap=True)
        return
    table = Table(title=f"suite checks ({size} size on the CPU, full-size counts)")
    for column in ("task", "family", "small ms", "variants", "full size", "GFLOP", "eager est. ms"):
        table.add_column(column, justify="left" if column in ("task", "family") else "right")
    table.add_column("findings")
    failed = []
    families: dict[str, int] = {}
    # One child per task (a crash is that task's finding), as many at once as there are CPUs.
    with err.status("checking") as status, ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        checks = pool.map(lambda path: check_in_child(path, size), paths)
        for n, check in enumerate(checks, start=1):
            status.update(f"[cyan]{n}/{len(paths)} checked")
            if not check.ok:
                failed.append(check)
            families[check.family] = families.get(check.family, 0) + 1
            table.add_row(*_suite_row(check))
    out.print(table)
    counts = ", ".join(f"{name} {n}" for name, n in sorted(families.items()))
    out.print(f"{len(paths)} tasks; families: {counts}")
    for check in failed:  # whole, on one line each: the table's cells wrap
        out.print(f"[red]{check.task_id}[/]: {'; '.join(check.problems)}", soft_wrap=True)
    if failed:
        out.print(f"[red]{len(failed)} task(s) failed a check[/]")
        raise typer.Exit(EXIT_FAILED)
    out.print("[green]all checks passed[/]")


def _suite_row(check: Any) -> list[str]:
    def num(value: float | None, spec: str) -> str:
        return format(value, spec) if value is not None else "-"

    size = "-"
    if check.bytes is not None:
        size = (
            f"{check.bytes / 1e9:.2f} GB" if check.bytes >= 1e8 else f"{check.bytes / 1e6:.1f} MB"
        )
    findings = [f"[red]{p}[/]" for p in check.problems] + check.notes
    if check.nonfinite_under:
        findings.append("non-finite under " + ", ".join(check.nonfinite_under))
    return [
        check.task_id,
        check.family,
        num(check.small_ms, ".2f"),
        str(check.n_variants) if check.n_variants else "",
        size,
        num(check.gflop, ".1f"),
        num(check.eager_est_ms, ".2f"),
        "\n".join(findings) or "[green]ok[/]",
    ]
