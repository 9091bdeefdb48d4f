"""Import a task file as a module, optionally at its small size. Runs only in child processes.

The small size is applied by rewriting the module's top-level assignments before executing it,
so constants derived from overridden ones (``dim2 = dim1 * 2``) follow them.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

from kernelwright.errors import TaskError


def import_task_module(path: str | Path, size: str = "full") -> types.ModuleType:
    """Execute the task file as a fresh module and return it.

    Raises:
        TaskError: the file raises while being imported, or the small size names a constant the
            file does not assign at top level.
    """
    p = Path(path)
    source = p.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(p))
    if size == "small":
        overrides = _small_overrides(tree)
        _apply_overrides(p, tree, overrides)
    name = f"kernelwright_task_{abs(hash((str(p), size))) & 0xFFFFFFFF:08x}"
    spec = importlib.util.spec_from_loader(name, loader=None, origin=str(p))
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(p)
    sys.modules[name] = module
    try:
        exec(compile(tree, str(p), "exec"), module.__dict__)
    except Exception as exc:
        del sys.modules[name]
        raise TaskError(f"{p}: importing the task raised {type(exc).__name__}: {exc}") from exc
    return module


def task_source(path: str | Path, size: str = "full") -> str:
    """The task file's text at ``size`` (the small size's constants written in), for a process
    that imports it as a module of its own."""
    p = Path(path)
    source = p.read_text(encoding="utf-8")
    if size != "small":
        return source
    tree = ast.parse(source, filename=str(p))
    _apply_overrides(p, tree, _small_overrides(tree))
    return ast.unparse(tree) + "\n"


def _small_overrides(tree: ast.Module) -> dict[str, Any]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KERNELWRIGHT" for t in node.targets
        ):
            options = ast.literal_eval(node.value)
            small = options.get("small", {}) if isinstance(options, dict) else {}
            return dict(small)
    return {}


def _apply_overrides(path: Path, tree: ast.Module, overrides: dict[str, Any]) -> None:
    seen: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            hit = [n for n in names if n in overrides]
            if hit and node.value is not None:
                node.value = ast.copy_location(ast.Constant(overrides[hit[0]]), node.value)
                if isinstance(overrides[hit[0]], list | tuple):
                    node.value = ast.copy_location(
                        ast.parse(repr(overrides[hit[0]]), mode="eval").body, node
                    )
                seen.update(hit)
    missing = sorted(set(overrides) - seen)
    if missing:
        raise TaskError(
            f"{path}: KERNELWRIGHT['small'] overrides {missing}, which the file does not assign at "
            "top level; name existing module constants only"
        )
    ast.fix_missing_locations(tree)
