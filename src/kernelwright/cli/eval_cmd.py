"""``kernelwright eval TASK SOLUTION``: judge one solution."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from kernelwright.cli.common import (
    EXIT_FAILED,
    ArchiveOpt,
    BaselinesOpt,
    CompileOpt,
    DeviceOpt,
    PrecisionOpt,
    SeedOpt,
    SizeOpt,
    TimeoutOpt,
    TimingOpt,
    TrialsOpt,
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
    device: DeviceOpt = "auto",
    precision: PrecisionOpt = "fp32",
    trials: TrialsOpt = 5,
    atol: Annotated[
        float | None, typer.Option(help="Absolute tolerance (default by policy).")
    ] = None,
    rtol: Annotated[
        float | None, typer.Option(help="Relative tolerance (default by policy).")
    ] = None,
    timeout: TimeoutOpt = 300.0,
    baselines: BaselinesOpt = True,
    compile_baseline: CompileOpt = None,
    timing: TimingOpt = True,
    size: SizeOpt = "auto",
    seed: SeedOpt = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the verdict as JSON ('-' for stdout).")
    ] = None,
    archive: ArchiveOpt = None,
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
    from kernelwright.task import task_id

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
                verdict_panel(verdict, f"{task_id(task)} ← {solution.name}")
            )
    if not verdict.correct:
        raise typer.Exit(EXIT_FAILED)
