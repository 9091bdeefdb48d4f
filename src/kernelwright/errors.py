"""Errors kernelwright raises for bad input or misuse.

    KernelwrightError            base: caught by the CLI, printed as one line, exit code 2
    ├── TaskError                a task file is missing, unreadable or not KernelBench-shaped
    ├── SolutionError            a solution file is missing or unreadable (not: it fails to compile,
    │                            which is a Verdict, never an exception)
    ├── ConfigError              an option or a constraints file is invalid
    ├── ArchiveError             the archive database cannot be opened or read
    ├── EvalError                the task cannot be evaluated (its reference crashed, say)
    └── HarnessError             the harness itself failed (its judge died, say): exit code 3

A candidate that fails in any way is not an error: it gets a Verdict. Messages name the value,
the expectation and the fix.
"""

from __future__ import annotations


class KernelwrightError(Exception):
    """Base class: a problem with the user's input or environment, not a bug in kernelwright."""


class TaskError(KernelwrightError):
    """A task file is missing, unreadable, or lacks ``Model`` / ``get_inputs``."""


class SolutionError(KernelwrightError):
    """A solution file is missing or unreadable."""


class ConfigError(KernelwrightError):
    """An option, a policy or a constraints file is invalid."""


class ArchiveError(KernelwrightError):
    """The archive database cannot be opened, written or read."""


class EvalError(KernelwrightError):
    """The harness could not evaluate at all (for example, the task's own reference failed)."""


class HarnessError(KernelwrightError):
    """The harness failed (its judge process died or stopped answering): not the candidate's
    fault, and not bad input. The CLI exits with code 3."""
