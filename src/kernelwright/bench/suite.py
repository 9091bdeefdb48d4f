"""Finding a suite's tasks and pairing each with its solution.

Tasks come from folders (searched recursively, in path order) or single files. A file that
defines ``ModelNew`` is a solution, not a task, and is skipped. A task's id is its file stem,
or its folder's name for a file named ``task.py`` (:func:`kernelwright.task.task_id`); ids must
be unique across the suite, because that is how a solution is named: ``SOLS/<id>.py``, or,
without a solutions folder, the ``solution.py`` beside a ``task.py`` (the layout of
``examples/``). A task without a solution file is kept: it becomes a failure in the metrics,
never a skipped task (KernelBench keeps failures in the denominator).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from kernelwright.bench.results import BenchItem
from kernelwright.errors import ConfigError, TaskError
from kernelwright.task.kernelbench import TASK_FILE_STEM, is_solution_file, task_id

SOLUTION_FILE = "solution.py"  # beside a task.py: that task's solution when no SOLS is given


def discover_tasks(paths: Iterable[str | Path]) -> list[Path]:
    """Task files under ``paths``: folders recursively (``**/*.py``), files as given.

    Files whose name starts with ``_`` or ``.`` (``__init__.py``, helpers) are not tasks, nor
    are solutions found in a folder (files that define ``ModelNew``). The order is the order of
    ``paths``, then path order inside each folder.

    Raises:
        ConfigError: a path does not exist, a folder holds no task, or two tasks share an id.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = [p for p in python_files(path) if not is_solution_file(p)]
            if not files:
                raise ConfigError(f"{path}: holds no task files (*.py); pass a suite folder")
            found.extend(files)
        elif path.is_file():
            found.append(path)
        else:
            raise ConfigError(f"{path}: no such task file or folder")
    resolved = list(dict.fromkeys(p.resolve() for p in found))
    check_unique_ids(resolved)
    return resolved


def python_files(folder: Path) -> list[Path]:
    """``folder/**/*.py`` in path order, without ``_``/``.``-prefixed files and folders."""
    return sorted(
        p
        for p in folder.rglob("*.py")
        if not p.name.startswith(("_", "."))
        and not any(part.startswith((".", "__")) for part in p.relative_to(folder).parts)
    )


def check_unique_ids(paths: Sequence[Path]) -> None:
    """Raise ConfigError when two task files share an id (their solutions would collide)."""
    seen: dict[str, Path] = {}
    clashes: list[str] = []
    for p in paths:
        name = task_id(p)
        if name in seen:
            clashes.append(f"{name} ({seen[name]} and {p})")
        seen.setdefault(name, p)
    if clashes:
        raise ConfigError(
            "task ids (file stems, or the folder of a task.py) must be unique, since "
            f"SOLS/<id>.py names the solution; rename: {'; '.join(clashes)}"
        )


def pair_solutions(tasks: Sequence[Path], solutions: str | Path | None) -> list[BenchItem]:
    """One :class:`BenchItem` per task, with ``solutions/<id>.py`` when that file exists.

    Args:
        tasks: task files from :func:`discover_tasks`.
        solutions: the solutions folder; None pairs each ``task.py`` with the ``solution.py``
            beside it, when there is one, and other tasks with nothing.

    Raises:
        ConfigError: ``solutions`` is given but is not a folder.
    """
    folder = Path(solutions) if solutions is not None else None
    if folder is not None and not folder.is_dir():
        raise ConfigError(
            f"{folder}: --solutions must be a folder holding <task id>.py files, one per task"
        )
    items = []
    for path in tasks:
        name = task_id(path)
        if folder is not None:
            candidate: Path | None = folder / f"{name}.py"
        elif path.stem == TASK_FILE_STEM:
            candidate = path.with_name(SOLUTION_FILE)
        else:
            candidate = None
        solution = str(candidate.resolve()) if candidate and candidate.is_file() else None
        items.append(
            BenchItem(
                task_id=name,
                task_path=str(path),
                solution_path=solution,
                family=task_family(path),
                group=path.parent.name,
            )
        )
    return items


def task_family(path: Path) -> str:
    """``KERNELWRIGHT["family"]`` of a task file, read without running it (``other`` if none)."""
    from kernelwright.task.kernelbench import load_task, task_options

    try:
        family = task_options(load_task(path)).get("family")
    except TaskError:  # a broken task is reported when it is run, as a failure
        return "other"
    return str(family) if family else "other"


def plan(
    tasks: Iterable[str | Path],
    solutions: str | Path | None,
    only: Sequence[str] = (),
    families: Sequence[str] = (),
) -> list[BenchItem]:
    """Discover, optionally filter by task id and family, and pair: what :func:`run_bench` runs.

    Args:
        tasks: folders and/or task files.
        solutions: the folder of ``<task id>.py`` solutions (None: the ``solution.py`` beside
            each ``task.py``, see :func:`pair_solutions`).
        only: task ids to keep (all when empty); an unknown id is an error.
        families: task families to keep (``KERNELWRIGHT["family"]``; all when empty); a family
            no task has is an error.
    """
    paths = discover_tasks(tasks)
    if only:
        known = {task_id(p) for p in paths}
        unknown = sorted(set(only) - known)
        if unknown:
            raise ConfigError(
                f"unknown task ids {unknown}; ids are file stems (or the folder of a task.py), "
                f"e.g. {task_id(paths[0])}"
            )
        paths = [p for p in paths if task_id(p) in set(only)]
    items = pair_solutions(paths, solutions)
    if families:
        known = {i.family for i in items}
        unknown = sorted(set(families) - known)
        if unknown:
            raise ConfigError(
                f"no task of family {unknown}; the tasks' families are {sorted(known)}"
            )
        items = [i for i in items if i.family in set(families)]
    return items
