"""``kernelwright tune ...``: replay tuning strategies on measured spaces, discover GP kernels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kernelwright.cli.common import err, out, user_errors

tune_app = typer.Typer(
    help="Hardware-tuning stage: replay strategies on measured spaces.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """Add the ``tune`` command group to the app."""
    app.add_typer(tune_app, name="tune")


@tune_app.command("replay")
@user_errors
def replay_command(
    space: Annotated[
        Path, typer.Argument(help="Measured space CSV (params, time_ms, ..., status).")
    ],
    strategy: Annotated[
        str, typer.Option(help="Strategy name (see `kernelwright tune strategies`).")
    ] = "bo",
    budget: Annotated[int, typer.Option(help="Distinct evaluations per run.")] = 40,
    repeats: Annotated[int, typer.Option(help="Independent runs.")] = 10,
    seed: Annotated[
        int, typer.Option(help="Seed of the first run (runs derive theirs from it).")
    ] = 0,
    batch: Annotated[int, typer.Option(help="Suggestions per ask (parallel evaluation).")] = 1,
    trace: Annotated[
        Path | None, typer.Option(help="Write one JSON line per evaluation here.")
    ] = None,
) -> None:
    """Replay a strategy on a fully measured space and score it against random search."""
    from kernelwright.tuning.measured import load_measured_csv
    from kernelwright.tuning.replay import checkpoints, replay, write_trace
    from kernelwright.tuning.strategies import get_strategy

    measured = load_measured_csv(space)
    made = get_strategy(strategy)
    n_fail = sum(not ok for ok in measured.ok)
    err.print(
        f"{measured.name}: {len(measured.space)} configs ({n_fail} fail), "
        f"optimum {measured.best_ms:.6g} ms; "
        f"{strategy} x {repeats} runs of {budget}"
    )
    result = replay(measured, made, budget=budget, repeats=repeats, seed=seed, batch=batch)
    if trace is not None:
        write_trace(trace, measured, result.runs)
    table = Table(title=f"{strategy} on {measured.name} (seed {seed}, {repeats} runs)")
    for col in ("budget", "score vs random", "best / optimum", "random best ms", "mean best ms"):
        table.add_column(col, justify="right")
    for b in checkpoints(result.budget):
        s = result.at(b, measured)
        table.add_row(
            str(b),
            f"{s.score_mean:+.3f} ± {s.score_std:.3f}",
            f"{s.fraction_mean:.3f}",
            f"{s.random_ms:.6g}",
            f"{s.best_ms_mean:.6g}",
        )
    out.print(table)
    out.print("score: 0 = random search without replacement at the same budget, 1 = the optimum")
    out.print(f"time per suggestion: {result.ms_per_suggestion:.1f} ms (wall, this machine)")
    if hasattr(made, "drive"):
        out.print(
            f"{strategy} plans for the whole budget: "
            f"rows below {result.budget} are prefixes of its runs"
        )


@tune_app.command("strategies")
def strategies_command() -> None:
    """List the registered strategy names."""
    from kernelwright.tuning.strategies import strategy_names

    for name in strategy_names():
        out.print(name)


@tune_app.command("discover")
@user_errors
def discover_command(
    space: Annotated[Path, typer.Argument(help="Measured space CSV.")],
    samples: Annotated[int, typer.Option(help="Random configs the kernels are fitted on.")] = 60,
    generations: Annotated[int, typer.Option(help="Evolution rounds.")] = 6,
    population: Annotated[int, typer.Option(help="Survivors per round.")] = 12,
    seed: Annotated[int, typer.Option(help="Seed of the sample and the search.")] = 0,
) -> None:
    """Discover a GP kernel by LOO-CRPS on a random sample; compare it with the defaults."""
    from kernelwright.tuning.compare import compare_kernels
    from kernelwright.tuning.discovery import DiscoverySettings
    from kernelwright.tuning.measured import load_measured_csv

    measured = load_measured_csv(space)
    rows = compare_kernels(
        measured,
        samples=samples,
        seed=seed,
        settings=DiscoverySettings(generations=generations, population=population),
    )
    table = Table(title=f"kernels on {measured.name}: {samples} random configs, the rest held out")
    for col in ("kernel", "LOO-CRPS", "held-out CRPS", "expression"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r.label, f"{r.loo_crps:.4f}", f"{r.test_crps:.4f}", r.expression)
    out.print(table)
    out.print("CRPS of standardised log time; lower is better")
