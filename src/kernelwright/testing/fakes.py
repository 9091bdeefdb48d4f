"""Executors for tests: a scripted result without any process, and a real child that misbehaves.

``FakeExecutor`` answers a job with a fixed result dict, a timeout, a crash or an exception, so
every verdict status can be produced without running a candidate. ``double_worker`` is a real
child module for the subprocess executor's own tests (sleep, crash, exit, answer).
"""

from __future__ import annotations

import time
from typing import Any

from kernelwright.evaluate.executor import Job, JobResult, ProgressFn, ResultFn


class FakeExecutor:
    """Returns a scripted :class:`JobResult` for every job.

    Args:
        result: the result dict the "child" writes (None: it wrote none).
        sleep: seconds to wait before answering (a timeout when longer than the job's limit).
        exc: raise this from ``run`` (an executor bug, not a candidate failure).
        crash: the child died without a result (``returncode`` -11, SIGSEGV).
    """

    def __init__(
        self,
        result: dict[str, Any] | None = None,
        *,
        sleep: float = 0.0,
        exc: BaseException | None = None,
        crash: bool = False,
        phase: str = "candidate: trial 1 (task)",
    ) -> None:
        self.result = result
        self.sleep = sleep
        self.exc = exc
        self.crash = crash
        self.phase = phase
        self.jobs: list[Job] = []

    def run(
        self,
        job: Job,
        timeout_s: float,
        on_progress: ProgressFn | None = None,
        on_result: ResultFn | None = None,
    ) -> JobResult:
        """See :class:`kernelwright.evaluate.executor.Executor`."""
        self.jobs.append(job)
        if self.exc is not None:
            raise self.exc
        if on_progress is not None:
            on_progress(self.phase)
        timed_out = self.sleep > timeout_s
        time.sleep(min(self.sleep, timeout_s))
        result = None if (self.crash or timed_out) else self.result
        if result is not None and on_result is not None:
            on_result(result)
        return JobResult(
            result=result,
            returncode=-11 if self.crash else (None if timed_out else 0),
            timed_out=timed_out,
            last_phase=self.phase,
            stderr_tail="Segmentation fault" if self.crash else "",
            duration_s=min(self.sleep, timeout_s),
        )
