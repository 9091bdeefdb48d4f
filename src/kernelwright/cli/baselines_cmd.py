"""``kernelwright bench baselines TASKS``: eager PyTorch and torch.compile for a whole suite."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from kernelwright.cli.common import err, out, output_folder, user_errors
from kernelwright.provenance import source_commit


@user_errors
def baselines_command(
    tasks: Annotated[
        list[Path], typer.Argument(help="Task files and/or suite folders (searched recursively).")
    ],
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Only this task id (repeatable).")
    ] = None,
    precisions: Annotated[
        str, typer.Option(help="Comma-separated precision policies, measured in this order.")
    ] = "fp32,bf16",
    device: Annotated[str, typer.Option(help="cuda | cpu.")] = "cuda",
    size: Annotated[str, typer.Option(help="full | small.")] = "full",
    compile_baseline: Annotated[
        bool, typer.Option("--compile/--no-compile", help="Time torch.compile too.")
    ] = True,
    seed: Annotated[int, typer.Option(help="Base seed of inputs and weights.")] = 0,
    deadline: Annotated[
        float, typer.Option(help="Seconds for everything; rerun the command to finish the rest.")
    ] = 3600.0,
    item_timeout: Annotated[
        float, typer.Option(help="Seconds per baseline process (torch.compile included).")
    ] = 900.0,
    state: Annotated[
        Path | None,
        typer.Option(
            help="Compile caches and every record, kept between runs (default: under the "
            "kernelwright home)."
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Write baselines.jsonl (as measured), baselines.md and .json here."
        ),
    ] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Measure again what earlier runs measured.")
    ] = False,
    fill_cache: Annotated[
        bool,
        typer.Option(
            "--fill-cache",
            help="Also store the timings in the baseline cache, so eval and bench on this "
            "machine reuse them.",
        ),
    ] = False,
    commit: Annotated[
        str | None, typer.Option(help="Commit to name in the output (default: git's, if any).")
    ] = None,
) -> None:
    """Time eager PyTorch and torch.compile on every task, as an evaluation times them.

    Every record is written as it is measured; rerunning the same command skips what is
    measured, so a run cut by --deadline or Ctrl-C is finished by running it again.
    """
    from kernelwright.bench import plan
    from kernelwright.bench.baselines import measurer, suite, table
    from kernelwright.errors import ConfigError
    from kernelwright.paths import home

    if device not in ("cuda", "cpu"):
        raise ConfigError(f"--device {device!r} is not one of cuda, cpu")
    if size not in ("full", "small"):
        raise ConfigError(f"--size {size!r} is not one of full, small")
    policies = [p.strip() for p in precisions.split(",") if p.strip()]
    bad = sorted(set(policies) - {"fp32", "tf32", "bf16"})
    if bad or not policies:
        raise ConfigError(f"--precisions {precisions!r}: expected a list of fp32, tf32, bf16")
    out_dir = output_folder(out_dir)
    items = plan(tasks, None, only or ())
    state_dir = state if state is not None else home() / "baselines"
    config = measurer.Config(
        items=suite.schedule_items(items, policies),
        device=device,
        size=size,
        compile=compile_baseline,
        seed=seed,
        deadline_s=deadline,
        item_timeout_s=item_timeout,
        state_dir=state_dir,
        out_dir=out_dir,
        fill_cache=fill_cache,
        fresh=fresh,
    )
    err.print(
        f"{len(items)} tasks x {policies} = {len(config.items)} items; deadline {deadline:.0f} s"
    )
    try:
        report = suite.measure(config, [i.task_id for i in items], echo=err.print)
    except KeyboardInterrupt:
        kept = state_dir / "results.jsonl"
        err.print(
            f"[yellow]interrupted[/]; measured items are kept in {kept}: rerun the same "
            "command to continue"
        )
        raise typer.Exit(130) from None
    out.print(table.text_table(report.rows, policies), highlight=False)
    if out_dir is not None:
        header = suite.provenance(
            report,
            command="kernelwright " + shlex.join(sys.argv[1:]),
            commit=commit or source_commit(),
            size=size,
        )
        for path in suite.write_outputs(report, header, policies, out_dir):
            err.print(f"[dim]wrote {path}")
    err.print(f"this run: {report.counts or 'nothing left to measure'}")
