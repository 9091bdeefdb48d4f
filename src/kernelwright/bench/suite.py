"""Finding a suite's tasks and pairing each with its solution, ``SOLS/<task stem>.py``.

Tasks come from folders (searched recursively, in path order) or single files. A task's id is
its file stem, which must be unique across the suite, because that is how a solution is named.
A task without a solution file is kept: it becomes a failure in the metrics, never a skipped
task (KernelBench keeps failures in the denominator).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from kernelwright.bench.results import BenchItem
from kernelwright.errors import ConfigError, TaskError


def discover_tasks(paths: Iterable[str | Path]) -> list[Path]:
    """Task files under ``paths``: folders recursively (``**/*.py``), files as given.

    Files whose name starts with ``_`` or ``.`` (``__init__.py``, helpers) are not tasks. The
    order is the order of ``paths``, then path order inside each folder.

    Raises:
        ConfigError: a path does not exist, a folder holds no task, or two tasks share a stem.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(
                p
                for p in path.rglob("*.py")
                if not p.name.startswith(("_", "."))
                and not any(part.startswith((".", "__")) for part in p.relative_to(path).parts)
            )
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


def check_unique_ids(paths: Sequence[Path]) -> None:
    """Raise ConfigError when two task files share a stem (their solutions would collide)."""
    seen: dict[str, Path] = {}
    clashes: list[str] = []
    for p in paths:
        if p.stem in seen:
            clashes.append(f"{p.stem} ({seen[p.stem]} and {p})")
        seen.setdefault(p.stem, p)
    if clashes:
        raise ConfigError(
            "task ids (file stems) must be unique, since SOLS/<id>.py names the solution; "
            f"rename: {'; '.join(clashes)}"
        )


def pair_solutions(tasks: Sequence[Path], solutions: str | Path | None) -> list[BenchItem]:
    """One :class:`BenchItem` per task, with ``solutions/<stem>.py`` when that file exists.

    Args:
        tasks: task files from :func:`discover_tasks`.
        solutions: the solutions folder; None pairs nothing (every task is missing one).

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
        candidate = folder / f"{path.stem}.py" if folder is not None else None
        solution = str(candidate.resolve()) if candidate and candidate.is_file() else None
        items.append(
            BenchItem(
                task_id=path.stem,
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
    tasks: Iterable[str | Path], solutions: str | Path | None, only: Sequence[str] = ()
) -> list[BenchItem]:
    """Discover, optionally filter by task id, and pair: what :func:`run_bench` runs.

    Args:
        tasks: folders and/or task files.
        solutions: the folder of ``<task id>.py`` solutions (None: no solutions).
        only: task ids to keep (all when empty); an unknown id is an error.
    """
    paths = discover_tasks(tasks)
    if only:
        known = {p.stem for p in paths}
        unknown = sorted(set(only) - known)
        if unknown:
            raise ConfigError(
                f"unknown task ids {unknown}; ids are file stems, e.g. {paths[0].stem}"
            )
        paths = [p for p in paths if p.stem in set(only)]
    return pair_solutions(paths, solutions)
