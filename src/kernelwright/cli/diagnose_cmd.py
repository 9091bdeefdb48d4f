"""``kernelwright diagnose EXPORT``: what limits each kernel of a Nsight Compute profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from kernelwright.cli.common import out, user_errors
from kernelwright.errors import ConfigError
from kernelwright.hardware.diagnose import Findings


@user_errors
def diagnose_command(
    export: Annotated[
        Path | None,
        typer.Argument(
            help="CSV from `ncu --csv --page raw --print-units base` ('-' reads stdin)."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the diagnoses as JSON instead of a table.")
    ] = False,
    metrics: Annotated[
        bool,
        typer.Option("--metrics", help="Print the --metrics list to profile with, and exit."),
    ] = False,
) -> None:
    """Turn a kernel's hardware counters into diagnoses: memory-, compute- or latency-bound,
    unvectorised or uncoalesced loads, spills, what caps occupancy, tail effects.

    Profile with `ncu --csv --page raw --print-units base --metrics $(kernelwright diagnose
    --metrics) python your_script.py > profile.csv`, then `kernelwright diagnose profile.csv`.
    """
    from kernelwright.hardware.diagnose import METRICS, ExportError, diagnose, parse_raw_csv

    if metrics:
        typer.echo(",".join(METRICS))
        return
    if export is None:
        raise ConfigError("give the profile to diagnose: a CSV export of Nsight Compute's raw "
                          "page (or --metrics for the counters to profile)")
    try:
        text = typer.get_text_stream("stdin").read() if str(export) == "-" else export.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read {export}: {exc.strerror or exc}") from None
    try:
        profiles = parse_raw_csv(text)
    except ExportError as exc:
        raise ConfigError(f"{export}: {exc}") from None
    show_findings(diagnose(profiles), len(profiles), as_json)


def show_findings(findings: Findings, kernels: int, as_json: bool) -> None:
    """The diagnoses as a table (or JSON), the counters missing from the export named."""
    if as_json:
        typer.echo(json.dumps({
            "kernels": kernels,
            "diagnoses": [{"kernel": d.kernel, "kind": d.kind, "text": d.text}
                          for d in findings.diagnoses],
            "missing_counters": sorted(findings.missing),
        }, indent=2))
        return
    from rich.table import Table

    table = Table(title=f"{kernels} profiled launches", show_lines=False)
    table.add_column("kernel", overflow="fold", max_width=40)
    table.add_column("kind")
    table.add_column("diagnosis", overflow="fold")
    for d in findings.diagnoses:
        table.add_row(d.kernel, d.kind, d.text)
    out.print(table if findings.diagnoses else "no diagnosis: nothing stands out")
    if findings.missing:
        out.print(f"[dim]not in the export (rules using them said nothing): "
                  f"{', '.join(sorted(findings.missing))}[/dim]")


def register(app: typer.Typer) -> None:
    app.command("diagnose")(diagnose_command)
