"""Checks on the candidate's source, applied before any of its code runs.

They target patterns with no place in an honest kernel file: reaching for the reference,
patching the framework or the timers, swallowing a kernel's failure to fall back on the
framework, starting threads or processes, touching the filesystem or hiding code from review.
"""

from __future__ import annotations

import ast

from kernelwright.evaluate.guard.registry import GuardContext, register_check

# Top-level modules whose attributes a candidate must never rebind.
_PROTECTED_MODULES = frozenset(
    {
        "torch",
        "time",
        "triton",
        "builtins",
        "numpy",
        "math",
        "sys",
        "os",
        "kernelwright",
        "functools",
        "threading",
        "gc",
        "inspect",
        "importlib",
    }
)
_CONCURRENCY_MODULES = frozenset(
    {"threading", "_thread", "multiprocessing", "concurrent", "asyncio", "subprocess", "signal"}
)
_INTROSPECTION_MODULES = frozenset({"gc", "inspect", "ctypes", "kernelwright"})
_FILESYSTEM_MODULES = frozenset(
    {"glob", "shutil", "pickle", "marshal", "shelve", "socket", "urllib", "http", "requests"}
)
_DYNAMIC_CALLS = frozenset({"eval", "exec", "compile", "__import__", "globals", "vars"})


def _module_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> top-level module, for every import in the file."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[(a.asname or a.name).split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            for a in node.names:
                aliases[a.asname or a.name] = top
    return aliases


def _imported_modules(tree: ast.Module) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, node.lineno))
    return found


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


@register_check(
    "reference-access",
    stage="static",
    catches="inheriting from, instantiating or locating the reference Model; walking the "
    "interpreter's objects or frames to find it",
    how="the name Model, frame and garbage-collector introspection and imports of gc, inspect, "
    "ctypes or kernelwright are refused in the source (the reference never runs in the "
    "candidate's process anyway)",
)
def reference_access(ctx: GuardContext) -> list[str]:
    if ctx.tree is None:
        return []
    reasons: list[str] = []
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Name) and node.id == "Model":
            reasons.append(f"line {node.lineno}: refers to the reference class `Model`")
        elif isinstance(node, ast.Attribute) and node.attr in (
            "_getframe",
            "f_back",
            "f_globals",
            "f_locals",
            "get_objects",
            "get_referrers",
            "__subclasses__",
        ):
            reasons.append(f"line {node.lineno}: introspects the interpreter (`.{node.attr}`)")
    for module, line in _imported_modules(ctx.tree):
        if module.split(".")[0] in _INTROSPECTION_MODULES:
            reasons.append(f"line {line}: imports {module}")
    return _dedupe(reasons)


@register_check(
    "exception-fallback",
    stage="static",
    catches="try/except around a kernel that falls back to the framework when the kernel fails",
    how="an except handler inside a function that does anything but re-raise is refused; "
    "at run time the ablation makes every launch raise and checks the forward does not still "
    "return the right answer",
)
def exception_fallback(ctx: GuardContext) -> list[str]:
    if ctx.tree is None:
        return []
    reasons: list[str] = []
    for fn in ast.walk(ctx.tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Try | ast.TryStar):
                for handler in node.handlers:
                    if not (handler.body and isinstance(handler.body[-1], ast.Raise)):
                        reasons.append(
                            f"line {handler.lineno}: `{fn.name}` catches an exception without "
                            "re-raising it; a failing kernel must fail, not fall back"
                        )
    return _dedupe(reasons)


@register_check(
    "monkey-patching",
    stage="static",
    catches="patching torch functions, timers (time.perf_counter, torch.cuda.Event.elapsed_time, "
    "triton.testing.do_bench) or the harness",
    how="assigning to, setattr-ing or deleting an attribute of torch, time, triton, builtins, "
    "numpy, math, sys, os or kernelwright (through any alias) is refused; at run time the "
    "identities of the timing and harness functions are compared before and after",
)
def monkey_patching(ctx: GuardContext) -> list[str]:
    if ctx.tree is None:
        return []
    aliases = _module_aliases(ctx.tree)
    protected = {name for name, top in aliases.items() if top in _PROTECTED_MODULES}
    reasons: list[str] = []
    for node in ast.walk(ctx.tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        for target in targets:
            if isinstance(target, ast.Attribute) and _root_name(target) in protected:
                reasons.append(f"line {target.lineno}: rebinds `{ast.unparse(target)}`")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr")
            and node.args
            and _root_name(node.args[0]) in protected
        ):
            reasons.append(f"line {node.lineno}: {node.func.id} on `{ast.unparse(node.args[0])}`")
    return _dedupe(reasons)


@register_check(
    "threads-and-processes",
    stage="static",
    catches="work on a background thread or another process, which the timer does not see",
    how="imports of threading, multiprocessing, concurrent, asyncio, subprocess and signal are "
    "refused; at run time new Python threads and work outside the timed stream are caught",
)
def threads_and_processes(ctx: GuardContext) -> list[str]:
    if ctx.tree is None:
        return []
    return _dedupe(
        f"line {line}: imports {module}"
        for module, line in _imported_modules(ctx.tree)
        if module.split(".")[0] in _CONCURRENCY_MODULES
    )


@register_check(
    "filesystem-and-dynamic-code",
    stage="static",
    catches="reading the task, cached results or the archive from disk; code hidden from review "
    "behind eval/exec or dynamic imports",
    how="calls to open, eval, exec, compile, __import__, globals, vars, importlib and imports of "
    "glob, shutil, pickle, marshal, shelve and network modules are refused; at run time an "
    "audit hook refuses opening the task file, the kernelwright home and other processes' /proc",
)
def filesystem_and_dynamic_code(ctx: GuardContext) -> list[str]:
    if ctx.tree is None:
        return []
    reasons: list[str] = []
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "open":
                reasons.append(f"line {node.lineno}: opens a file")
            elif node.func.id in _DYNAMIC_CALLS:
                reasons.append(f"line {node.lineno}: calls {node.func.id}()")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and ("/proc/" in node.value or ".kernelwright" in node.value)
        ):
            reasons.append(f"line {getattr(node, 'lineno', '?')}: names {node.value!r}")
    for module, line in _imported_modules(ctx.tree):
        top = module.split(".")[0]
        if top in _FILESYSTEM_MODULES or top == "importlib":
            reasons.append(f"line {line}: imports {module}")
    return _dedupe(reasons)


def _dedupe(reasons: object) -> list[str]:
    seen: list[str] = []
    for r in reasons:  # type: ignore[attr-defined]
        if r not in seen:
            seen.append(r)
    return seen
