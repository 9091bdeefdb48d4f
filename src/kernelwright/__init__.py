"""kernelwright: expert-guided GPU kernel design with an evaluator nobody can fool.

    Task (KernelBench file) -> Design -> Candidate (ModelNew source) -> Verdict -> Archive

The public surface is re-exported here; everything else is importable from its module.
"""

from kernelwright.errors import (
    ArchiveError,
    ConfigError,
    EvalError,
    KernelwrightError,
    SolutionError,
    TaskError,
)
from kernelwright.records import (
    Candidate,
    DeviceInfo,
    Precision,
    SpeedOfLight,
    Status,
    Task,
    Timing,
    TimingStats,
    Tolerance,
    Verdict,
    Violation,
)

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # The harness pulls in torch; import it on first use so `kernelwright --help` stays fast.
    if name == "evaluate":
        from kernelwright.evaluate import evaluate

        return evaluate
    if name == "EvalOptions":
        from kernelwright.evaluate.options import EvalOptions

        return EvalOptions
    if name == "load_task":
        from kernelwright.task import load_task

        return load_task
    raise AttributeError(f"module 'kernelwright' has no attribute {name!r}")


__all__ = [
    "ArchiveError",
    "Candidate",
    "ConfigError",
    "DeviceInfo",
    "EvalError",
    "EvalOptions",
    "KernelwrightError",
    "Precision",
    "SolutionError",
    "SpeedOfLight",
    "TaskError",
    "Status",
    "Task",
    "Timing",
    "TimingStats",
    "Tolerance",
    "Verdict",
    "Violation",
    "__version__",
    "evaluate",
    "load_task",
]
