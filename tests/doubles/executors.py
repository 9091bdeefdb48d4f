"""An executor that answers with a scripted judge's report, without starting any process.

Every verdict status can be produced from the parent's side: a report with a failure
(``compile_error``, ``timeout``, ``crashed``...), a process the executor had to kill, or an
exception from the executor itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kernelwright.evaluate.executor import CandidateProcess, JobResult, Launch


class FakeExecutor:
    """Returns a scripted :class:`JobResult` for every launch.

    Args:
        report: the judge's report the "process" produced (None: none came back).
        returncode: how the process ended.
        exc: raise this from ``run`` (an executor bug, not a candidate failure).
        killed: why the executor stopped the process (its memory, say).
    """

    def __init__(
        self,
        report: dict[str, Any] | None = None,
        *,
        returncode: int | None = 0,
        exc: BaseException | None = None,
        killed: str = "",
        stderr: str = "",
    ) -> None:
        self.report = report
        self.returncode = returncode
        self.exc = exc
        self.killed = killed
        self.stderr = stderr
        self.launches: list[tuple[Launch, dict[str, str]]] = []
        self.shared: list[bool] = []  # each run's share_kernels

    def run(
        self,
        launch: Launch,
        files: Mapping[str, str],
        drive: Callable[[CandidateProcess], dict[str, Any]],
        *,
        share_kernels: bool = False,
    ) -> JobResult:
        """See :class:`kernelwright.evaluate.executor.Executor`."""
        self.launches.append((launch, dict(files)))
        self.shared.append(share_kernels)
        if self.exc is not None:
            raise self.exc
        return JobResult(
            result=self.report,
            returncode=self.returncode,
            stderr_tail=self.stderr,
            duration_s=0.0,
            killed=self.killed,
        )

    def warm(self, launch: Launch, count: int = 1) -> None:
        """No processes: nothing to start."""

    def close(self) -> None:
        """Nothing to release."""


def failure(status: str, message: str = "", phase: str = "trial 1 (task)") -> dict[str, Any]:
    """A judge's report whose process failed with ``status``."""
    return {"role": "candidate", "failure": {"status": status, "message": message,
                                             "stage": phase, "phase": phase},
            "runs": [], "observed": {}, "timing": None, "ablation": {}, "observations": {}}
