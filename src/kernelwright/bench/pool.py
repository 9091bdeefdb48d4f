"""Spreading a bench's tasks over worker processes of this host.

    runner --(jobs, pulled one at a time as a worker frees up)--> WorkerPool.run
           <--(Finished: the step's outcome or an error, and where it ran)-- as each ends

The runner stays the only writer of results, the journal and the archive: a worker only runs
the step and sends its outcome back. A pool is anything with :class:`WorkerPool`'s ``run``; the
one here is :class:`LocalPool` (processes of this host). A pool over several hosts would be
another class behind the same ``run``.

Why processes and not threads: the harness already judges every candidate in a child process,
but a worker must be able to die (killed, out of memory, a fault of its GPU) without taking the
run with it, and each worker must see only its own GPU (``CUDA_VISIBLE_DEVICES`` is read once,
when a process first touches CUDA). Each worker is a pool of one process of its own, so a dead
worker breaks only itself: it is restarted, and its task is tried once more.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Generator, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Protocol

from kernelwright.bench.steps import StepOutcome, TaskStep, attempt_step
from kernelwright.evaluate.options import EvalOptions
from kernelwright.records import Candidate, Task

SHUTDOWN_GRACE_S = 10.0  # for a worker to end its evaluation (and kill its children) on Ctrl-C


@dataclass(frozen=True, slots=True)
class StepJob:
    """One task for a worker: picklable, like everything a worker receives."""

    position: int  # in the plan: results are put back in the suite's order by it
    step: TaskStep
    task: Task
    start: Candidate | None
    options: EvalOptions


class Wait:
    """Yielded by a job source that has nothing to give until a running job finishes (a search
    whose next proposals depend on the verdicts still out): the pool stops filling idle workers
    until then, and asks again. A source yields it only while jobs are running."""


WAIT = Wait()


@dataclass(frozen=True, slots=True)
class Finished:
    """A job's end: the step's outcome, or the error text of a result; ``timed_on`` names the
    device of the worker that ran it (``cpu``, or ``cuda:<physical GPU index>``)."""

    job: StepJob
    attempt: StepOutcome | str
    timed_on: str


class WorkerPool(Protocol):
    """Runs jobs on workers and hands each back as it finishes (in any order)."""

    @property
    def workers(self) -> int:
        """How many jobs run at once."""
        ...

    def run(self, jobs: Iterable[StepJob | Wait]) -> Generator[Finished, None, None]:
        """Take a job from ``jobs`` whenever a worker is free; yield each as it finishes.

        A job is taken only when it can start, so ``jobs`` may decide late (a deadline) whether
        to give one, or give :data:`WAIT` until a running job finishes. A job whose worker died
        is run once more, then finished as an error.
        """
        ...


def worker_devices(workers: int, device: str, visible: Sequence[str]) -> tuple[list[str], str]:
    """The ``CUDA_VISIBLE_DEVICES`` of each worker (``""``: not pinned) and a note for a
    person (``""`` when there is nothing to say).

    On a GPU host worker ``i`` gets GPU ``i mod len(visible)``; on the CPU they share the cores.
    """
    if device != "cuda" or not visible:
        return [""] * workers, ""
    pins = [visible[i % len(visible)] for i in range(workers)]
    note = ""
    if workers > len(visible):
        note = (
            f"{workers} workers share {len(visible)} GPU(s): tasks sharing a GPU disturb each "
            f"other's timings; --workers {len(visible)} gives one GPU per worker"
        )
    return pins, note


def visible_gpus() -> list[str]:
    """The GPUs this process may use, as ``CUDA_VISIBLE_DEVICES`` names them (without creating
    a CUDA context here)."""
    named = os.environ.get("CUDA_VISIBLE_DEVICES")
    if named is not None:
        return [g.strip() for g in named.split(",") if g.strip()]
    import torch

    return [str(i) for i in range(torch.cuda.device_count())]


class LocalPool:
    """``workers`` processes of this host (started with ``spawn``: no state of the parent, no
    CUDA context inherited), each pinned to ``pins[i]`` when given."""

    def __init__(self, workers: int, pins: Sequence[str] | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self._pins = list(pins) if pins is not None else [""] * workers
        if len(self._pins) != workers:
            raise ValueError(f"{workers} workers need {workers} pins, got {len(self._pins)}")
        self._slots: list[ProcessPoolExecutor | None] = [None] * workers

    @property
    def workers(self) -> int:
        """See :class:`WorkerPool`."""
        return len(self._slots)

    def run(self, jobs: Iterable[StepJob | Wait]) -> Generator[Finished, None, None]:
        """See :class:`WorkerPool`."""
        source = iter(jobs)
        retries: deque[tuple[StepJob, int]] = deque()  # (job, the slot it died on)
        tried: set[int] = set()  # positions already retried once
        running: dict[Future[StepOutcome | str], tuple[int, StepJob]] = {}
        exhausted = False
        try:
            while True:
                idle = [i for i in range(self.workers) if i not in {s for s, _ in running.values()}]
                while idle and (retries or not exhausted):
                    slot = idle[0]
                    if retries:
                        job, died_on = retries.popleft()
                        # another worker when one is free; else the dead one, restarted
                        slot = next((i for i in idle if i != died_on), slot)
                    else:
                        next_job = next(source, None)
                        if next_job is None:
                            exhausted = True
                            break
                        if isinstance(next_job, Wait):
                            if not running:  # nothing can come of waiting: the source is done
                                exhausted = True
                            break
                        job = next_job
                    idle.remove(slot)
                    running[self._executor(slot).submit(run_job, job)] = (slot, job)
                if not running:
                    return
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    slot, job = running.pop(future)
                    try:
                        attempt = future.result()
                    except BrokenProcessPool:
                        self._discard(slot)
                        if job.position not in tried:
                            tried.add(job.position)
                            retries.append((job, slot))
                            continue
                        attempt = (
                            "the worker process died twice running this task (killed, "
                            "out of memory, or a crash of the interpreter or the GPU driver)"
                        )
                    yield Finished(job, attempt, self._label(slot, job))
        finally:
            self.close()

    def close(self) -> None:
        """Stop every worker: cancel what has not started, give running evaluations a grace
        period to end (and kill their children), then kill what is left."""
        for slot in range(self.workers):
            self._discard(slot)

    def _executor(self, slot: int) -> ProcessPoolExecutor:
        executor = self._slots[slot]
        if executor is None:
            executor = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_pin,
                initargs=(self._pins[slot],),
            )
            self._slots[slot] = executor
        return executor

    def _discard(self, slot: int) -> None:
        executor, self._slots[slot] = self._slots[slot], None
        if executor is None:
            return
        processes = list(executor._processes.values()) if executor._processes else []
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.join(SHUTDOWN_GRACE_S)
            if process.is_alive():
                process.kill()
                process.join()

    def _label(self, slot: int, job: StepJob) -> str:
        pin = self._pins[slot]
        return f"cuda:{pin}" if pin else job.options.device


def _pin(gpu: str) -> None:
    """A worker's first act: see only its GPU (before anything touches CUDA)."""
    if gpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu


def run_job(job: StepJob) -> StepOutcome | str:
    """In a worker: run the job's step (progress stays in the worker; the parent reports
    starts and ends)."""
    return attempt_step(job.step, job.task, job.start, job.options, lambda _text: None)
