"""Load a KernelBench problem file into a :class:`~kernelwright.records.Task` without running it.

The parent process never executes task code: it parses the file, checks that the names the
harness needs are defined at module level, and reads the optional ``KERNELWRIGHT`` dict as a
literal. The children (reference worker, task checker) import the module for real.

A KernelBench task looks like::

    class Model(nn.Module): ...
    def get_inputs(): return [torch.randn(batch_size, dim)]
    def get_init_inputs(): return []          # optional here; [] when absent

kernelwright also understands, all optional:

    def get_input_variants(): return [[torch.randn(3, 17)], ...]   # other shapes to check
    KERNELWRIGHT = {
        "small": {"batch_size": 4, "dim": 64},    # module constants for CPU-sized runs
        "atol": 1e-3, "rtol": 1e-3,               # loosen the policy's tolerance for this task
        "input_distributions": False,             # keep inputs exactly as get_inputs() makes them
        "notes": "free text shown in reports",
    }
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from kernelwright.errors import TaskError
from kernelwright.records import Task, sha256_text

SIZES = ("full", "small")
TASK_FILE_STEM = "task"  # `<name>/task.py` is the task `<name>` (see task_id)
_KNOWN_OPTION_KEYS = {
    "small",
    "atol",
    "rtol",
    "input_distributions",
    "notes",
    "precision",
    "family",
}


def load_task(path: str | Path, size: str = "full") -> Task:
    """Read and validate a KernelBench problem file.

    Args:
        path: the task file.
        size: ``"full"`` (the file's own constants) or ``"small"`` (its ``KERNELWRIGHT["small"]``
            overrides, used for CPU runs under Triton's interpreter).

    Raises:
        TaskError: the file is missing, unreadable, not Python, or lacks ``Model`` / ``get_inputs``.
    """
    if size not in SIZES:
        raise TaskError(f"size {size!r} is not one of {', '.join(SIZES)}")
    p = Path(path)
    if not p.exists():
        raise TaskError(
            f"{p}: no such task file; pass the path of a KernelBench problem (.py) file"
        )
    if p.is_dir():
        raise TaskError(f"{p}: is a directory; pass one KernelBench problem file")
    try:
        source = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"{p}: cannot be read ({exc}); check its permissions and encoding") from exc
    tree = _parse(p, source)
    defined = _top_level_names(tree)
    missing = [name for name in ("Model", "get_inputs") if name not in defined]
    if missing:
        raise TaskError(
            f"{p}: does not define {' or '.join(missing)} at module level; a KernelBench task "
            "needs `class Model(nn.Module)` and `def get_inputs()` (and usually "
            "`get_init_inputs()`)"
        )
    options = task_options_from_tree(p, tree)
    if "small" in options and not isinstance(options["small"], dict):
        raise TaskError(f"{p}: KERNELWRIGHT['small'] must be a dict of module constants")
    return Task(
        path=str(p.resolve()),
        name=task_id(p),
        source=source,
        sha256=sha256_text(source),
        size=size,
        has_variants="get_input_variants" in defined,
    )


def task_id(path: str | Path) -> str:
    """A task's name in suites, run ids, reports and the archive: its file's stem, except that
    a file named ``task.py`` takes its folder's name (``examples/softmax/task.py`` is
    ``softmax``), since a folder per task holding ``task.py`` and ``solution.py`` is common."""
    p = Path(path)
    return p.resolve().parent.name if p.stem == TASK_FILE_STEM else p.stem


def is_solution_file(path: str | Path) -> bool:
    """True for a solution rather than a task: the file defines ``ModelNew`` at module level.

    Read without running the file; a file that cannot be read or parsed is not a solution (it
    is reported as a broken task where tasks are loaded).
    """
    p = Path(path)
    try:
        tree = ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return False
    return "ModelNew" in _top_level_names(tree)


def task_options(task: Task) -> dict[str, Any]:
    """The task's ``KERNELWRIGHT`` dict (empty when the file has none)."""
    return task_options_from_tree(Path(task.path), _parse(Path(task.path), task.source))


def task_options_from_tree(path: Path, tree: ast.Module) -> dict[str, Any]:
    """Read ``KERNELWRIGHT = {...}`` as a literal; raise TaskError when it is not one."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KERNELWRIGHT" for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError as exc:
                raise TaskError(
                    f"{path}:{node.lineno}: KERNELWRIGHT must be a literal dict (numbers, strings, "
                    "lists and dicts only) so it can be read without running the file"
                ) from exc
            if not isinstance(value, dict):
                raise TaskError(f"{path}:{node.lineno}: KERNELWRIGHT must be a dict")
            unknown = sorted(set(value) - _KNOWN_OPTION_KEYS)
            if unknown:
                raise TaskError(
                    f"{path}: unknown KERNELWRIGHT keys {unknown}; known keys are "
                    f"{sorted(_KNOWN_OPTION_KEYS)}"
                )
            return value
    return {}


def _parse(path: Path, source: str) -> ast.Module:
    try:
        return ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise TaskError(
            f"{path}:{exc.lineno}: the task is not valid Python ({exc.msg}); fix the syntax error"
        ) from exc


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names
