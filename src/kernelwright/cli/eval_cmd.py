"""``kernelwright eval TASK SOLUTION``: judge one solution."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
    output_file,
    parse_precision,
    progress_status,
    user_errors,
)

if TYPE_CHECKING:
    from kernelwright.evaluate.options import EvalOptions
    from kernelwright.records import Candidate  # noqa: F811


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("eval")(eval_command)


@user_errors
def eval_command(
    task: Annotated[Path, typer.Argument(help="KernelBench problem file (defines Model).")],
    solution: Annotated[
        Path | None,
        typer.Argument(help="KernelBench solution file (defines ModelNew); see --reference."),
    ] = None,
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
    reference: Annotated[
        bool,
        typer.Option(
            "--reference",
            help="Judge the task's own Model as the solution (guard off): does the harness "
            "evaluate this task at this size on this device?",
        ),
    ] = False,
) -> None:
    """Evaluate SOLUTION against TASK: correctness, guard, timing and speed of light.

    Exit code 0 when the candidate is correct and accepted, 1 when it failed in any way (the
    verdict says how), 2 for bad input.
    """
    from kernelwright.archive import Archive
    from kernelwright.cli.render import verdict_panel
    from kernelwright.errors import ConfigError
    from kernelwright.evaluate import EvalOptions, evaluate
    from kernelwright.task import task_id

    if (solution is None) == (not reference):
        raise ConfigError("give a SOLUTION file or --reference (the task's own model), not both")
    output_file(json_path, "--json")

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
        guard=not reference,
    )
    store = None if no_archive else Archive(archive_path(archive))
    try:
        with progress_status(not quiet, "evaluating") as show:
            chosen: Candidate | Path | None = (
                _reference_candidate(task, options) if reference else solution)
            assert chosen is not None
            verdict = evaluate(task, chosen, options, archive=store, on_progress=show)
    finally:
        if store is not None:
            store.close()
    shown = "reference" if reference else str(solution)
    data = verdict.to_dict() | {"task": str(task), "solution": shown}
    if json_path is not None and str(json_path) == "-":
        out.print_json(json.dumps(data))
    else:
        if json_path is not None:
            json_path.write_text(json.dumps(data, indent=2))
        if not quiet or verdict.status.value != "correct":
            (err if json_path is not None and quiet else out).print(
                verdict_panel(verdict, f"{task_id(task)} ← {Path(shown).name}")
            )
    if not verdict.correct:
        raise typer.Exit(EXIT_FAILED)


def _reference_candidate(task: Path, options: EvalOptions) -> Candidate:
    """The task's own ``Model`` as a solution file, at the size the evaluation uses."""
    from kernelwright.evaluate.devices import resolve_device
    from kernelwright.evaluate.harness import baseline_source
    from kernelwright.records import Candidate
    from kernelwright.task import load_task

    size = options.size
    if size == "auto":
        size = "full" if resolve_device(options.device) == "cuda" else "small"
    loaded = load_task(task, size=size)
    return Candidate(baseline_source(loaded, size, "eager"), origin="reference")
