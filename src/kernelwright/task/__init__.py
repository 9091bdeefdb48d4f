"""Tasks: KernelBench problem files, validated statically and executed only inside children."""

from kernelwright.task.kernelbench import is_solution_file, load_task, task_id, task_options
from kernelwright.task.module import import_task_module

__all__ = ["import_task_module", "is_solution_file", "load_task", "task_id", "task_options"]
