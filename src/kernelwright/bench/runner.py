"""``run_bench``: one step per task, each result journaled as it arrives, resumable.

    for each BenchItem:
        load the task (a broken file is a failure, not a crash)
        key = (task text, solution text, options)         see kernelwright.bench.journal
        resumed and key in the journal  -> reuse that result, evaluate nothing
        not this shard's, or past the deadline -> not run (a later run of the command does it)
        no solution (and the step needs one) -> a ``missing`` failure
        otherwise                        -> step(task, solution) -> verdict; archive it
        append the result to the journal (fsync), report it, checkpoint the run so far

Collaborators are arguments: the step (evaluate or optimize), the journal, the archive and the
progress and checkpoint callbacks, so tests drive the loop with a fake harness and count what
it evaluates.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kernelwright.bench.journal import (
    Entry,
    Journal,
    fingerprint_hash,
    options_fingerprint,
    result_key,
)
from kernelwright.bench.metrics import by_family, status_counts, summarise
from kernelwright.bench.pool import StepJob, WorkerPool
from kernelwright.bench.results import Baseline, BenchItem, BenchResult, Outcome
from kernelwright.bench.steps import EvaluateStep, StepOutcome, TaskStep, attempt_step
from kernelwright.errors import ConfigError, KernelwrightError
from kernelwright.evaluate.options import EvalOptions
from kernelwright.records import Candidate, Task, sha256_text

EventKind = Literal["start", "phase", "done", "resumed"]


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based): every ``count``-th task from the ``index``-th.

    Shards of one suite run in parallel (one per GPU) and share a journal; each run also
    takes the other shards' finished results from it.
    """

    index: int = 1
    count: int = 1

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` -> Shard(2, 4); ConfigError when it is not ``k/n`` with 1 <= k <= n."""
        try:
            k, n = (int(x) for x in text.split("/"))
        except ValueError:
            k = n = 0
        if not 1 <= k <= n:
            raise ConfigError(f"--shard {text!r}: expected k/n with 1 <= k <= n, e.g. 1/2")
        return cls(k, n)

    def holds(self, position: int) -> bool:
        """True for the task at ``position`` (0-based) of the whole plan."""
        return position % self.count == self.index - 1


@dataclass(frozen=True, slots=True)
class BenchEvent:
    """Progress of a run: ``index`` (1-based) of ``total`` tasks, and what is happening."""

    kind: EventKind
    index: int
    total: int
    task_id: str
    phase: str = ""
    result: BenchResult | None = None


EventFn = Callable[[BenchEvent], None]


@dataclass(frozen=True, slots=True)
class BenchRun:
    """A finished (or partly resumed) bench run: the results and how they were obtained."""

    run_id: str
    options: EvalOptions
    fingerprint: dict[str, Any]
    results: tuple[BenchResult, ...]
    started_at: str
    finished_at: str
    resumed: int = 0
    step: str = "evaluate"
    notes: tuple[str, ...] = field(default=())
    not_run: tuple[str, ...] = ()  # task ids left for another shard or a later run

    @property
    def baselines(self) -> tuple[Baseline, ...]:
        """The baselines this run measured (metrics against the others are None)."""
        if not self.options.baselines:
            return ()
        return ("eager", "compile") if self.fingerprint["compile_baseline"] else ("eager",)

    @property
    def representative(self) -> bool:
        """Timings come from a GPU (on the CPU they only exercise the pipeline)."""
        return bool(self.fingerprint["device"] == "cuda")

    def summary(self) -> dict[str, Any]:
        """The ``summary`` object (:data:`kernelwright.bench.metrics.SUMMARY_KEYS`)."""
        return summarise(self.results, self.baselines)

    def families(self) -> dict[str, dict[str, Any]]:
        """The summary per task family."""
        return by_family(self.results, self.baselines)

    def counts(self) -> dict[str, int]:
        """Tasks per status."""
        return status_counts(self.results)


def run_bench(
    items: Sequence[BenchItem],
    options: EvalOptions | None = None,
    *,
    step: TaskStep | None = None,
    journal: Journal | None = None,
    resume: bool = False,
    archive: Any | None = None,
    on_event: EventFn | None = None,
    run_id: str | None = None,
    shard: Shard | None = None,
    deadline_s: float | None = None,
    on_checkpoint: Callable[[BenchRun], None] | None = None,
    pool: WorkerPool | None = None,
) -> BenchRun:
    """Run ``step`` on every item and collect one :class:`BenchResult` per item.

    Args:
        items: from :func:`kernelwright.bench.plan`.
        options: harness options for every task (device and size ``auto`` are resolved once).
        step: what to do per task; default :class:`EvaluateStep` (the harness).
        journal: where each result is appended as it arrives (None: nowhere).
        resume: reuse journal results whose key matches instead of running the step.
        archive: a :class:`kernelwright.archive.Archive`; verdicts go in under ``run_id``.
        on_event: progress callback (task started, phase, done, resumed).
        run_id: the archive's run id; default: the id of the run being resumed, else a new one.
        shard: run only this shard's items; with ``resume``, the others' journaled results are
            reported too. Items neither run nor found are listed in ``BenchRun.not_run``.
        deadline_s: start no task after this many seconds (the rest are ``not_run``).
        on_checkpoint: called with the run so far after every result, so a caller can write
            it out as it grows (a crash or Ctrl-C then loses nothing finished).
        pool: run the steps on these workers (:mod:`kernelwright.bench.pool`), several tasks at
            once; results are still written here, one at a time, and kept in the suite's order.
            Each result then says which device timed it (``timed_on``). None: one task after
            another in this process.

    Raises:
        ConfigError: the options are unusable (``--device cuda`` without a GPU...).
        KeyboardInterrupt: passed on after marking the archive's run ``interrupted``; every
            finished result is already in the journal.
    """
    from kernelwright.evaluate.devices import gpu_models, resolve_device

    opts = options or EvalOptions()
    step = step or EvaluateStep()
    device = resolve_device(opts.device)
    size = opts.size if opts.size != "auto" else ("full" if device == "cuda" else "small")
    opts = dataclasses.replace(opts, device=device, size=size)
    gpus = gpu_models() if device == "cuda" else ()
    fingerprint = options_fingerprint(opts, device, size, step.name, step.settings, gpus)
    fp_hash = fingerprint_hash(fingerprint)
    entries = journal.entries() if (journal is not None and resume) else []
    done = {e.result.key: e for e in entries if e.result.key}
    if run_id is None:  # continue the latest run made with these options, else start one
        previous = [e.run_id for e in entries if e.fingerprint == fp_hash]
        run_id = previous[-1] if previous else _new_run_id(fp_hash)
    rid: str = run_id
    emit = on_event or (lambda _event: None)
    started = _now()
    if pool is not None and step.archives:
        raise ConfigError(
            f"the {step.name} step records its candidates in the archive itself, which only "
            "one process may write: run it with one worker"
        )
    if archive is not None:
        archive.start_run(
            run_id, "bench", None, fingerprint | {"tasks": [i.task_id for i in items]}
        )

    shard = shard or Shard()
    results: list[BenchResult] = []
    not_run: list[str] = []
    resumed = 0
    total = sum(1 for position in range(len(items)) if shard.holds(position))
    index = 0
    clock = time.monotonic()

    def snapshot(position: int) -> BenchRun:
        """The run after item ``position`` (the last: the whole run): what is done, and what
        is not (yet)."""
        later = tuple(i.task_id for i in items[position + 1 :])
        return BenchRun(
            run_id=rid,
            options=opts,
            fingerprint=fingerprint,
            results=tuple(results),
            started_at=started,
            finished_at=_now(),
            resumed=resumed,
            step=step.name,
            not_run=(*not_run, *later),
        )

    checkpoint = on_checkpoint or (lambda _run: None)
    if pool is not None:
        setup = _Setup(
            items, opts, size, fingerprint, fp_hash, rid, started, step, journal, archive, emit,
            checkpoint, shard, total, done, deadline_s, clock
        )
        return _noting_reruns(_run_on_pool(pool, setup), entries, fp_hash)

    try:
        for position, item in enumerate(items):
            mine = shard.holds(position)
            index += mine
            task, task_sha, task_error = _load(item, size)
            source = _read_solution(item)
            solution_sha = sha256_text(source) if source is not None else ""
            key = result_key(task_sha, solution_sha or None, fp_hash)
            if key in done:  # same texts, same options: the verdict would be the same
                result = dataclasses.replace(
                    done[key].result,
                    task_path=item.task_path,
                    solution_path=item.solution_path,
                    group=item.group,
                )
                resumed += 1
                results.append(result)
                if mine:
                    emit(BenchEvent("resumed", index, total, item.task_id, result=result))
                checkpoint(snapshot(position))
                continue
            late = deadline_s is not None and time.monotonic() - clock >= deadline_s
            if not mine or late:
                not_run.append(item.task_id)
                continue
            emit(BenchEvent("start", index, total, item.task_id))

            def phase(text: str, _index: int = index, _id: str = item.task_id) -> None:
                emit(BenchEvent("phase", _index, total, _id, phase=text))

            base: dict[str, Any] = dict(
                task_id=item.task_id,
                family=item.family,
                group=item.group,
                task_path=item.task_path,
                solution_path=item.solution_path,
                key=key,
                task_sha256=task_sha,
                solution_sha256=solution_sha,
            )
            t0 = time.monotonic()
            if task is None:
                result = BenchResult(outcome=Outcome.ERROR, error=task_error, **base)
            elif source is None and step.needs_solution:
                result = BenchResult(
                    outcome=Outcome.MISSING,
                    error=f"no solution file {item.task_id}.py in the solutions folder",
                    **base,
                )
            else:
                start = Candidate(source=source, origin="user") if source is not None else None
                result = _run_step(step, task, start, opts, phase, base, archive, run_id)
            result = dataclasses.replace(result, duration_s=time.monotonic() - t0)
            if journal is not None:
                journal.append(result, run_id, fp_hash)
            results.append(result)
            emit(BenchEvent("done", index, total, item.task_id, result=result))
            checkpoint(snapshot(position))
    except KeyboardInterrupt:
        if archive is not None:
            archive.finish_run(run_id, "interrupted")
        raise
    if archive is not None:
        archive.finish_run(run_id, "finished")
    return _noting_reruns(snapshot(len(items) - 1), entries, fp_hash)


def _noting_reruns(run: BenchRun, entries: Sequence[Entry], fp_hash: str) -> BenchRun:
    """``run`` with a note where tasks ran again although the journal held results of theirs
    (the same task file) made under other options: another GPU model, kernelwright version,
    precision... A user resuming expects them reused and should hear why they were not."""
    # a task with results under these options too ran again for another reason (its solution)
    here = {e.result.task_sha256 for e in entries if e.fingerprint == fp_hash}
    other = {e.result.task_sha256 for e in entries if e.fingerprint != fp_hash} - here - {""}
    again = sum(1 for r in run.results if r.task_sha256 in other)
    if not again:
        return run
    note = (f"{again} task(s) ran again: the journal's results of them were made under other "
            "options (another GPU model, kernelwright version or option), which it does not "
            "reuse")
    return dataclasses.replace(run, notes=(*run.notes, note))


@dataclass(frozen=True, slots=True)
class _Setup:
    """What ``run_bench`` settled before running anything (shared by its two ways to run)."""

    items: Sequence[BenchItem]
    opts: EvalOptions
    size: str
    fingerprint: dict[str, Any]
    fp_hash: str
    rid: str
    started: str
    step: TaskStep
    journal: Journal | None
    archive: Any | None
    emit: EventFn
    checkpoint: Callable[[BenchRun], None]
    shard: Shard
    total: int
    journaled: dict[str, Any]  # result key -> journal entry (when resuming)
    deadline_s: float | None
    clock: float


def _run_on_pool(pool: WorkerPool, run: _Setup) -> BenchRun:
    """``run_bench`` with the steps on ``pool``'s workers: the tasks to run are found first (in
    the suite's order), handed out as workers free up, and written here as each finishes."""
    resumed = 0
    index = 0
    finished: dict[int, BenchResult] = {}  # by position in the plan

    def pooled_snapshot() -> BenchRun:
        """The run so far in the suite's order, whatever order the tasks finished in."""
        return BenchRun(
            run_id=run.rid,
            options=run.opts,
            fingerprint=run.fingerprint,
            results=tuple(finished[p] for p in sorted(finished)),
            started_at=run.started,
            finished_at=_now(),
            resumed=resumed,
            step=run.step.name,
            not_run=tuple(i.task_id for p, i in enumerate(run.items) if p not in finished),
        )

    def record(position: int, index: int, result: BenchResult, kind: EventKind) -> None:
        if kind == "done" and run.journal is not None:
            run.journal.append(result, run.rid, run.fp_hash)
        finished[position] = result
        run.emit(BenchEvent(kind, index, run.total, result.task_id, result=result))
        run.checkpoint(pooled_snapshot())

    waiting: list[tuple[int, int, Task, Candidate | None, dict[str, Any]]] = []
    for position, item in enumerate(run.items):
        mine = run.shard.holds(position)
        index += mine
        task, task_sha, task_error = _load(item, run.size)
        source = _read_solution(item)
        solution_sha = sha256_text(source) if source is not None else ""
        key = result_key(task_sha, solution_sha or None, run.fp_hash)
        if key in run.journaled:
            result = dataclasses.replace(
                run.journaled[key].result,
                task_path=item.task_path,
                solution_path=item.solution_path,
                group=item.group,
            )
            resumed += 1
            if mine:
                record(position, index, result, "resumed")
            else:
                finished[position] = result
                run.checkpoint(pooled_snapshot())
            continue
        if not mine:
            continue
        columns: dict[str, Any] = dict(
            task_id=item.task_id,
            family=item.family,
            group=item.group,
            task_path=item.task_path,
            solution_path=item.solution_path,
            key=key,
            task_sha256=task_sha,
            solution_sha256=solution_sha,
        )
        if task is None or (source is None and run.step.needs_solution):
            run.emit(BenchEvent("start", index, run.total, item.task_id))
            missing = f"no solution file {item.task_id}.py in the solutions folder"
            error = task_error if task is None else missing
            outcome = Outcome.ERROR if task is None else Outcome.MISSING
            failed = BenchResult(outcome=outcome, error=error, **columns)
            record(position, index, failed, "done")
            continue
        start = Candidate(source=source, origin="user") if source is not None else None
        waiting.append((position, index, task, start, columns))

    began: dict[int, float] = {}
    context = {position: (index, cols) for position, index, _, _, cols in waiting}

    def jobs() -> Iterator[StepJob]:
        """Jobs in the suite's order, each given only when a worker can start it (so the
        deadline is checked then)."""
        for position, index, task, start, _columns in waiting:
            if run.deadline_s is not None and time.monotonic() - run.clock >= run.deadline_s:
                return
            run.emit(BenchEvent("start", index, run.total, task.name))
            began[position] = time.monotonic()
            yield StepJob(position, run.step, task, start, run.opts)

    ends = pool.run(jobs())
    try:
        for end in ends:
            job = end.job
            index, cols = context[job.position]
            result = _step_result(
                end.attempt, run.step, job.task, job.start, cols, run.archive, run.rid
            )
            result = dataclasses.replace(
                result,
                duration_s=time.monotonic() - began[job.position],
                timed_on=end.timed_on,
            )
            record(job.position, index, result, "done")
    except KeyboardInterrupt:
        if run.archive is not None:
            run.archive.finish_run(run.rid, "interrupted")
        raise
    finally:
        ends.close()  # stops the workers whatever ended the loop
    if run.archive is not None:
        run.archive.finish_run(run.rid, "finished")
    return pooled_snapshot()


def _run_step(
    step: TaskStep,
    task: Task,
    start: Candidate | None,
    opts: EvalOptions,
    phase: Callable[[str], None],
    base: dict[str, Any],
    archive: Any | None,
    run_id: str,
) -> BenchResult:
    """Run the step; an error of the task or an internal one becomes a failed result."""
    return _step_result(
        attempt_step(step, task, start, opts, phase), step, task, start, base, archive, run_id
    )


def _step_result(
    attempt: StepOutcome | str,
    step: TaskStep,
    task: Task,
    start: Candidate | None,
    base: dict[str, Any],
    archive: Any | None,
    run_id: str,
) -> BenchResult:
    """The result of one attempt (an outcome, or an error text); its verdict is archived here,
    in the process that owns the archive."""
    if isinstance(attempt, str):
        return BenchResult(outcome=Outcome.ERROR, error=attempt, **base)
    outcome = attempt
    if archive is not None and not step.archives:
        archive.add(task, outcome.candidate, outcome.verdict, run_id)
    if outcome.candidate.source != (start.source if start else None):
        base = base | {"solution_sha256": outcome.candidate.sha256}
    return BenchResult(outcome=Outcome.JUDGED, verdict=outcome.verdict, **base)


def _load(item: BenchItem, size: str) -> tuple[Task | None, str, str]:
    """(task, sha256 of its text, error): a task that does not load is a failure to report."""
    from kernelwright.task.kernelbench import load_task

    try:
        task = load_task(item.task_path, size=size)
    except KernelwrightError as exc:
        try:
            sha = sha256_text(Path(item.task_path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            sha = ""
        return None, sha, f"{type(exc).__name__}: {exc}"
    return task, task.sha256, ""


def _read_solution(item: BenchItem) -> str | None:
    if item.solution_path is None:
        return None
    try:
        return Path(item.solution_path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _new_run_id(fp_hash: str) -> str:
    return f"bench-{time.strftime('%Y%m%d-%H%M%S')}-{fp_hash[:6]}"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
