"""``kernelwright eval TASK SOLUTION``: judge one solution."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from kernelwright.cli.common import (
    EXIT_FAILED,
    archive_path,
    err,
    out,
    parse_precision,
    progress_status,
    user_errors,
)


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("eval")(eval_command)


@user_errors
def eval_command(
    task: Annotated[Path, typer.Argument(help="KernelBench problem file (defines Model).")],
    solution: Annotated[Path, typer.Argument(help="KernelBench solution file (defines ModelNew).")],
    device: Annotated[str, typer.Option(help="auto | cuda | cpu (Triton interpreter).")] = "auto",
    precision: Annotated[
        str, typer.Option(help="fp32 | tf32 | bf16, for candidate and baselines.")
    ] = "fp32",
    trials: Annotated[
        int, typer.Option(help="Correctness trials (fresh seed and inputs each).")
    ] = 5,
    atol: Annotated[
        float | None, typer.Option(help="Absolute tolerance (default by policy).")
    ] = None,
    rtol: Annotated[
        float | None, typer.Option(help="Relative tolerance (default by policy).")
    ] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds allowed for the candidate's process.")
    ] = 300.0,
    baselines: Annotated[
        bool,
        typer.Option("--baselines/--no-baselines", help="Time eager PyTorch and torch.compile."),
    ] = True,
    compile_baseline: Annotated[
        bool | None,
        typer.Option("--compile/--no-compile", help="Time torch.compile (default: on a GPU only)."),
    ] = None,
    timing: Annotated[
        bool, typer.Option("--timing/--no-timing", help="Time the candidate.")
    ] = True,
    size: Annotated[
        str, typer.Option(help="auto | full | small (the task's CPU-sized constants).")
    ] = "auto",
    seed: Annotated[int | None, typer.Option(help="Base seed (default: fresh each run).")] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the verdict as JSON ('-' for stdout).")
    ] = None,
    archive: Annotated[
        Path | None, typer.Option(help="SQLite archive (default: ~/.kernelwright/archive.sqlite).")
    ] = None,
    no_archive: Annotated[bool, typer.Option("--no-archive", help="Do not record.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")] = False,
) -> None:
    """Evaluate SOLUTION against TASK: correctness, guard, timing and speed of light.

    Exit code 0 when the candidate is correct and accepted, 1 when it failed in any way (the
    verdict says how), 2 for bad input.
    """
    from kernelwright.archive import Archive
    from kernelwright.cli.render import verdict_panel
    from kernelwright.evaluate import EvalOptions, evaluate

    options = EvalOptions(
        device=device,
        precision=parse_precision(precision),
        trials=trials,
        atol=atol,
        rtol=rtol,
        timeout_s=timeout,
        baselines=baselines,
        compile_baseline=compile_baseline,
        timing=timing,
        size=size,
        seed=seed,
    )
    store = None if no_archive else Archive(archive_path(archive))
    try:
        with progress_status(not quiet, "evaluating") as show:
            verdict = evaluate(task, solution, options, archive=store, on_progress=show)
    finally:
        if store is not None:
            store.close()
    data = verdict.to_dict() | {"task": str(task), "solution": str(solution)}
    if json_path is not None and str(json_path) == "-":
        out.print_json(json.dumps(data))
    else:
        if json_path is not None:
            json_path.write_text(json.dumps(data, indent=2))
        if not quiet or verdict.status.value != "correct":
            (err if json_path is not None and quiet else out).print(
                verdict_panel(verdict, f"{task.name} ← {solution.name}")
            )
    if not verdict.correct:
        raise typer.Exit(EXIT_FAILED)
