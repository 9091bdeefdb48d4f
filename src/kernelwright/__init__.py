"""kernelwright: expert-guided GPU kernel design with an evaluator nobody can fool.

    Task (KernelBench file) -> Design -> Candidate (ModelNew source) -> Verdict -> Archive

The public surface is re-exported here; everything else is importable from its module.
"""

# Bound here, after the subpackage of the same name is imported, so `kernelwright.evaluate` is
# the function (the subpackage stays importable as `kernelwright.evaluate.<module>`).
from kernelwright.errors import (
    ArchiveError,
    ConfigError,
    EvalError,
    KernelwrightError,
    SolutionError,
    TaskError,
)
from kernelwright.evaluate.harness import evaluate
from kernelwright.evaluate.options import EvalOptions
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
    "Status",
    "Task",
    "TaskError",
    "Timing",
    "TimingStats",
    "Tolerance",
    "Verdict",
    "Violation",
    "__version__",
    "evaluate",
    "load_task",
]
