"""``kernelwright bench TASKS``: a suite's metrics (solutions judged, or ``--optimize``);
``bench baselines``: eager and torch.compile times; ``bench-report``: a report from JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kernelwright.cli.common import (
    ArchiveOpt,
    BaselinesOpt,
    CompileOpt,
    DefaultCommandGroup,
    DeviceOpt,
    SizeOpt,
    TimeoutOpt,
    TimingOpt,
    archive_path,
    err,
    output_file,
    output_folder,
    parse_objective,
    parse_precision,
    user_errors,
)
from kernelwright.cli.common import out as out_console

if TYPE_CHECKING:
    from kernelwright.bench import BenchEvent
    from kernelwright.report.tables import Table


bench_app = typer.Typer(
    cls=DefaultCommandGroup,
    help="Benchmark a suite: `kernelwright bench TASKS --solutions SOLS` judges solutions, "
    "`bench TASKS --optimize` optimizes every task, `bench baselines TASKS` times eager "
    "PyTorch and torch.compile. `bench TASKS ...` is short for `bench run TASKS ...`.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add the ``bench`` group and ``bench-report`` to the app."""
    from kernelwright.cli.baselines_cmd import baselines_command

    bench_app.command("run")(bench_command)
    bench_app.command("baselines")(baselines_command)
    app.add_typer(bench_app, name="bench")
    app.command("bench-report")(bench_report_command)


@user_errors
def bench_command(
    tasks: Annotated[
        list[Path], typer.Argument(help="Task files and/or suite folders (searched recursively).")
    ],
    solutions: Annotated[
        Path | None,
        typer.Option(
            help="Folder of solutions named <task id>.py (default: the solution.py beside "
            "each task.py)."
        ),
    ] = None,
    device: DeviceOpt = "auto",
    precision: Annotated[
        str | None,
        typer.Option(help="fp32 | tf32 | bf16, for candidates and baselines alike (default: the "
                     "constraints' precision, else fp32)."),
    ] = None,
    size: SizeOpt = "auto",
    objective: Annotated[
        str,
        typer.Option(help="With --optimize, what ranks candidates: time, energy (joules a call, "
                     "from the GPU's energy counter) or edp (their product)."),
    ] = "time",
    trials: Annotated[int, typer.Option(help="Correctness trials per task.")] = 5,
    timeout: TimeoutOpt = 300.0,
    baselines: BaselinesOpt = True,
    compile_baseline: CompileOpt = None,
    timing: TimingOpt = True,
    seed: Annotated[int | None, typer.Option(help="Base seed (default: fresh per task).")] = None,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Run only this task id (repeatable).")
    ] = None,
    family: Annotated[
        list[str] | None,
        typer.Option("--family", help="Run only the tasks of this family (repeatable)."),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(
            help="k/n: run every n-th task from the k-th (one shard per GPU; shards may share "
            "--out)."
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            help="Run this many tasks at once, each in a worker process of its own (on a GPU "
            "host worker i gets GPU i mod the GPU count); with --optimize, judge this many of "
            "a task's candidates at once."
        ),
    ] = 1,
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="Run the tasks on a Dask cluster: its scheduler's address (workers started "
            "with `dask worker ADDRESS --nthreads 1`, one per GPU), or `local` for --workers "
            "processes of this host (pip install 'kernelwright[distributed]')."
        ),
    ] = None,
    deadline: Annotated[
        float | None,
        typer.Option(
            help="Start no task after this many seconds; rerunning the command does the rest."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Folder for results.json (rewritten after every task), journal.jsonl and, "
            "with --optimize, <task id>/best.py and report.md.",
        ),
    ] = None,
    json_path: Annotated[
        Path | None,
        typer.Option("--json", help="Write per-task verdicts and the summary ('-' for stdout)."),
    ] = None,
    report: Annotated[
        Path | None, typer.Option(help="Write report.md and report.html into this folder.")
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume/--fresh",
            help="Reuse the journal's results for unchanged tasks, solutions and options "
            "(default), or measure everything again.",
        ),
    ] = True,
    journal: Annotated[
        Path | None,
        typer.Option(
            help="Results journal (JSONL; default: in --out, else next to --json, else under "
            "the kernelwright home)."
        ),
    ] = None,
    archive: ArchiveOpt = None,
    no_archive: Annotated[bool, typer.Option("--no-archive", help="Do not record.")] = False,
    optimize: Annotated[
        bool,
        typer.Option(
            help="Optimize each task (kernelwright optimize) and report its best candidate "
            "instead of judging solutions."
        ),
    ] = False,
    budget_candidates: Annotated[
        int | None,
        typer.Option("--budget-candidates", help="With --optimize: candidates per task (8)."),
    ] = None,
    budget_minutes: Annotated[
        float | None,
        typer.Option("--budget-minutes", help="With --optimize: minutes per task."),
    ] = None,
    structures: Annotated[
        int | None,
        typer.Option(
            help="With --optimize: designs to try before tuning (default: half the budget)."
        ),
    ] = None,
    search: Annotated[
        str | None,
        typer.Option(help="With --optimize: staged (default), mcts or evolution."),
    ] = None,
    constraints: Annotated[
        Path | None,
        typer.Option(help="Constraints file (docs/constraints.md), enforced on every solution "
                     "and, with --optimize, on every candidate."),
    ] = None,
    constraints_text: Annotated[
        str | None,
        typer.Option(
            "--constraints-text",
            help="Requirements in words, formulated and shown before anything runs, then "
            "enforced like --constraints (added to that file when both).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")] = False,
) -> None:
    """Judge each task's solution, or optimize each task; report fast_p, geomeans and SOL.

    Every result is written as it arrives (the journal, and results.json in --out); after an
    interruption, rerun the same command to continue. A task without a solution counts as a
    failure. Exit code 0 when the run completed (whatever the verdicts), 2 for bad input, 130
    when interrupted.
    """
    from kernelwright.archive import Archive
    from kernelwright.bench import (
        DocumentWriter,
        EvaluateStep,
        Journal,
        OptimizeStep,
        Shard,
        TaskStep,
        bench_document,
        default_journal_path,
        plan,
        run_bench,
    )
    from kernelwright.constraints import load_constraints
    from kernelwright.errors import ConfigError
    from kernelwright.evaluate import EvalOptions
    from kernelwright.records import Precision

    if not optimize and any(
        x is not None for x in (budget_candidates, budget_minutes, structures, search)
    ):
        raise ConfigError(
            "--budget-candidates, --budget-minutes, --structures and --search need --optimize"
        )
    if search is not None:
        from kernelwright.optimize import SEARCH_MODES

        if search not in SEARCH_MODES:
            raise ConfigError(f"--search {search!r} is not one of {', '.join(SEARCH_MODES)}")
    if budget_candidates is not None and budget_candidates < 1:
        raise ConfigError(f"--budget-candidates must be at least 1, got {budget_candidates}")
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")

    if deadline is not None and deadline <= 0:
        raise ConfigError(f"--deadline must be a positive number of seconds, got {deadline}")
    part = Shard.parse(shard) if shard is not None else Shard()
    rules = load_constraints(constraints) if constraints is not None else None
    if constraints_text is not None:
        from kernelwright.cli.constraints_cmd import formulated

        rules = formulated(constraints_text, rules)
    if precision is not None:
        policy = parse_precision(precision)
    else:
        policy = rules.precision if rules and rules.precision else Precision.FP32
    options = EvalOptions(
        device=device,
        precision=policy,
        trials=trials,
        timeout_s=timeout,
        baselines=baselines,
        compile_baseline=compile_baseline,
        timing=timing,
        size=size,
        seed=seed,
        objective=parse_objective(objective),
    )
    if options.objective.needs_energy and not optimize:
        raise ConfigError(f"--objective {objective} ranks candidates: it needs --optimize")
    if rules is not None:
        options = rules.apply(options)  # a precision the constraints refuse stops here
    items = plan(tasks, solutions, only or (), family or ())
    if not optimize and solutions is None and not any(i.solution_path for i in items):
        raise ConfigError(
            "no solutions: pass --solutions DIR (files named <task id>.py), keep a solution.py "
            "beside each task.py, or use --optimize"
        )
    out = output_folder(out)
    output_file(json_path, "--json")
    journal_file = Journal(
        journal or (out / "journal.jsonl" if out is not None else default_journal_path(json_path))
    )
    to_stdout = json_path is not None and str(json_path) == "-"
    documents = [p for p in (out / "results.json" if out else None, json_path) if p is not None]
    writer = DocumentWriter([p for p in documents if str(p) != "-"])
    if no_archive:  # --optimize needs one all the same: the optimizer keeps its runs there
        store = Archive(":memory:") if optimize else None
    else:
        store = Archive(archive_path(archive))
    try:
        step: TaskStep = EvaluateStep()
        if optimize:
            step = OptimizeStep(
                store,
                budget_candidates=budget_candidates
                if budget_candidates is not None or budget_minutes is not None
                else 8,
                budget_minutes=budget_minutes,
                out_dir=out,
                structures=structures,
                search=search or "staged",
                # with --optimize the workers judge each task's candidates (one task at a time:
                # the optimizer writes the archive itself)
                workers=workers,
                scheduler=scheduler,
            )
        mine = sum(1 for position in range(len(items)) if part.holds(position))
        pool = (None if optimize
                else dask_pool(scheduler, workers, device) if scheduler is not None
                else local_pool(workers, device) if workers > 1 else None)
        with bench_progress(not quiet, mine) as show, closing_pool(pool):
            run = run_bench(
                items,
                options,
                step=step,
                journal=journal_file,
                resume=resume,
                archive=store,
                on_event=show,
                shard=part,
                deadline_s=deadline,
                on_checkpoint=writer,
                pool=pool,
            )
    except KeyboardInterrupt:
        kept = ", ".join(str(p) for p in [*writer.paths, journal_file.path] if p.exists())
        archived = " (what was judged so far is in the archive)" if not no_archive else ""
        where = f"kept in {kept}" if writer.finished and kept else f"none kept{archived}"
        err.print(
            f"[yellow]interrupted[/] after {writer.finished} finished task(s), {where}; "
            "rerun the same command to continue",
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    finally:
        if store is not None:
            store.close()

    document = bench_document(run)
    writer(run)
    if to_stdout:
        out_console.print_json(json.dumps(document))
    console = err if to_stdout else out_console
    if not to_stdout or not quiet:
        console.print(_task_table(document, run.results))
        for line in _failure_lines(run.results):
            console.print(line, overflow="ellipsis", no_wrap=True, highlight=False)
        console.print(rich_table(_summary_table(document), "summary"))
        if not run.representative:
            console.print("[yellow]CPU timings (Triton interpreter): not representative of a GPU")
        if run.resumed:
            console.print(
                f"[dim]{run.resumed} task(s) taken from the journal {journal_file.path} "
                "(--fresh measures them again)"
            )
        for note in run.notes:
            console.print(f"[dim]{note}", highlight=False)
        if run.not_run:
            console.print(
                f"[yellow]{len(run.not_run)} task(s) not run yet[/] (past --deadline, or in "
                "another shard): rerun the command to continue"
            )
    if report is not None:
        _write_report(document, report, console)
    for path in writer.paths:
        console.print(f"[dim]results: {path}")


def dask_pool(address: str, workers: int, device: str) -> Any:
    """A Dask pool: at ``address``, or ``local`` (``workers`` processes here, one GPU each
    where there are GPUs)."""
    from kernelwright.bench.dask_pool import LOCAL, DaskPool
    from kernelwright.bench.pool import visible_gpus, worker_devices
    from kernelwright.evaluate.devices import resolve_device

    if address != LOCAL:
        return DaskPool(address)
    resolved = resolve_device(device)
    pins, note = worker_devices(workers, resolved, visible_gpus() if resolved == "cuda" else [])
    if note:
        err.print(f"[yellow]{note}", soft_wrap=True)
    return DaskPool(LOCAL, workers, pins)


@contextmanager
def closing_pool(pool: Any) -> Iterator[None]:
    """Close a pool that holds a connection (Dask's) when the run ends, however it ends."""
    try:
        yield
    finally:
        if pool is not None and hasattr(pool, "close"):
            pool.close()


def local_pool(workers: int, device: str) -> Any:
    """A pool of ``workers`` processes here, one GPU each where there are GPUs; says so when
    several workers must share a GPU."""
    from kernelwright.bench.pool import LocalPool, visible_gpus, worker_devices
    from kernelwright.evaluate.devices import resolve_device

    resolved = resolve_device(device)
    visible = visible_gpus() if resolved == "cuda" else []
    pins, note = worker_devices(workers, resolved, visible)
    if note:
        err.print(f"[yellow]{note}", soft_wrap=True)
    return LocalPool(workers, pins)


@user_errors
def bench_report_command(
    document: Annotated[Path, typer.Argument(help="A JSON document from `bench --json`.")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Folder for the report.")] = Path(
        "bench-report"
    ),
) -> None:
    """Write report.md and report.html from a `kernelwright bench --json` document."""
    from kernelwright.bench import read_document

    if not document.is_file():
        from kernelwright.errors import ConfigError

        raise ConfigError(f"{document}: no such file; pass the JSON written by bench --json")
    data, _ = read_document(document)
    output_folder(out_dir)
    _write_report(data, out_dir, out_console)


def _write_report(document: dict[str, Any], folder: Path, console: Any) -> None:
    from kernelwright.report import write_report
    from kernelwright.report.plots import available

    files = write_report(document, folder)
    console.print(f"report: {files.html} and {files.markdown}")
    if not available():
        console.print("[yellow]no plots: pip install 'kernelwright[report]' (matplotlib)")


def _task_table(document: dict[str, Any], results: Any) -> Any:
    """The per-task table for a terminal: short columns, speedups titled with the policy."""
    from rich.table import Table as RichTable

    from kernelwright.formatting import fmt_frac, fmt_ms, fmt_x

    run = document["run"]
    with_compile = "compile" in run["baselines"]
    table = RichTable(
        title=f"per task (speedups under the {run['precision']} precision policy)",
        title_justify="left",
        show_edge=False,
        pad_edge=False,
    )
    # a long task name folds onto more lines; the numbers keep their width on a narrow terminal
    table.add_column("task", overflow="fold")
    table.add_column("status", no_wrap=True, min_width=7)
    numbers = ["ms", "eager ms", *(("compile ms",) if with_compile else ()), "x eager",
               *(("x compile",) if with_compile else ()), "SOL"]
    for name in numbers:
        table.add_column(name, justify="right", no_wrap=True, min_width=max(len(name), 6))
    for r in results:
        style = "green" if r.correct else "red"
        cells = [r.task_id, f"[{style}]{r.status}[/]", fmt_ms(r.candidate_ms)]
        cells.append(fmt_ms(r.baseline_ms("eager")))
        if with_compile:
            cells.append(fmt_ms(r.baseline_ms("compile")))
        cells.append(fmt_x(r.speedup("eager")))
        if with_compile:
            cells.append(fmt_x(r.speedup("compile")))
        cells.append(fmt_frac(r.sol_fraction))
        table.add_row(*cells)
    return table


def _failure_lines(results: Any) -> list[str]:
    """One line per failed task: why (the verdict's message or the error)."""
    lines = []
    for r in results:
        if not r.correct:
            first = r.message.strip().splitlines()[0] if r.message.strip() else r.status
            lines.append(f"[red]{r.task_id}[/]: {first}")
    return lines


def _summary_table(document: dict[str, Any]) -> Table:
    from kernelwright.report.tables import summary_table

    return summary_table(document["summary"], document["run"]["precision"])


def rich_table(table: Table, title: str) -> Any:
    """A :class:`kernelwright.report.tables.Table` as a Rich table."""
    from rich.table import Table as RichTable

    rich = RichTable(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for header, align in zip(table.headers, table.align, strict=True):
        rich.add_column(header, justify="right" if align == "r" else "left")
    for row in table.rows:
        rich.add_row(*row)
    return rich


@contextmanager
def bench_progress(enabled: bool, total: int) -> Iterator[Callable[[BenchEvent], None]]:
    """Progress on stderr: a bar with task i/n and the harness's phase on a terminal, one
    line per finished task otherwise; nothing when disabled."""
    if not enabled:
        yield lambda _event: None
        return
    if not sys.stderr.isatty():
        yield _line_per_task
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]bench"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=err,
        transient=True,
    ) as progress:
        bar = progress.add_task("starting", total=total)

        def show(event: BenchEvent) -> None:
            text = f"[cyan]{event.task_id}[/] {event.phase}" if event.phase else event.task_id
            progress.update(bar, description=text)
            if event.result is not None:
                progress.console.print(_done_line(event))
                progress.advance(bar)

        yield show


def _line_per_task(event: BenchEvent) -> None:
    if event.result is not None:
        err.print(_done_line(event), highlight=False)


def _done_line(event: BenchEvent) -> str:
    from kernelwright.formatting import fmt_x

    r = event.result
    assert r is not None
    style = "green" if r.correct else "red"
    speed = f" {fmt_x(r.speedup('eager'))} vs eager" if r.speedup("eager") is not None else ""
    note = " (from the journal)" if event.kind == "resumed" else ""
    width = len(str(event.total))
    return (
        f"[{event.index:>{width}}/{event.total}] {r.task_id}: [{style}]{r.status}[/]{speed}{note}"
    )
