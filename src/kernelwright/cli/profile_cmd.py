"""``kernelwright profile TASK SOLUTION``: a solution's kernels under Nsight Compute, diagnosed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kernelwright.cli.common import out, user_errors


@user_errors
def profile_command(
    task: Annotated[Path, typer.Argument(help="A KernelBench-format task file.")],
    solution: Annotated[Path, typer.Argument(help="A file defining ModelNew (yours: it runs "
                                                  "outside the harness's confinement).")],
    output: Annotated[
        Path, typer.Option("--out", "-o", help="Where the raw Nsight Compute export goes.")
    ] = Path("profile.csv"),
    size: Annotated[str, typer.Option(help="full | small (the task's sizes).")] = "full",
    kernels: Annotated[int, typer.Option(help="Launches profiled after the warm-up.")] = 8,
    timeout: Annotated[float, typer.Option(help="Seconds allowed for the profiled run.")] = 300.0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the diagnoses as JSON instead of a table.")
    ] = False,
) -> None:
    """Profile SOLUTION's kernels on TASK's inputs with Nsight Compute (on a GPU) and say what
    limits each: memory-, compute- or latency-bound, unvectorised or uncoalesced loads, spills,
    occupancy, tail effects. The export is kept (`--out`) for `optimize --profile`.
    """
    from kernelwright.cli.diagnose_cmd import show_findings
    from kernelwright.errors import ConfigError
    from kernelwright.hardware.profile import profile_solution
    from kernelwright.task import load_task

    if size not in ("full", "small"):
        raise ConfigError(f"--size {size!r} is not one of full, small")
    if kernels < 1:
        raise ConfigError(f"--kernels must be at least 1, got {kernels}")
    try:
        source = solution.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read {solution}: {exc.strerror or exc}") from None
    launches, findings = profile_solution(load_task(task, size=size), source, output,
                                          kernels=kernels, timeout_s=timeout)
    show_findings(findings, launches, as_json)
    if not as_json:
        out.print(f"[dim]export: {output}[/dim]")


def register(app: typer.Typer) -> None:
    app.command("profile")(profile_command)
