"""Tasks: KernelBench problem files, validated statically and executed only inside children."""

from kernelwright.task.kernelbench import load_task, task_options
from kernelwright.task.module import import_task_module

__all__ = ["import_task_module", "load_task", "task_options"]
