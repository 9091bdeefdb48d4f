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
    {"threading", "_thread", "multiprocessing", "concurrent", "asyncio", "subprocess", "signal",
     "pty", "posix", "_posixsubprocess"}
)
_INTROSPECTION_MODULES = frozenset({"gc", "inspect", "ctypes", "kernelwright"})
# Attributes that reach objects a kernel file never made: the interpreter's frames and heap, and
# the cells, globals and owners of functions (the harness's wrappers keep its observers there).
_INTROSPECTION_ATTRIBUTES = frozenset({
    "_getframe", "f_back", "f_globals", "f_locals", "f_code", "tb_frame", "tb_next", "gi_frame",
    "cr_frame", "ag_frame", "get_objects", "get_referrers", "get_referents", "__subclasses__",
    "__closure__", "cell_contents", "__globals__", "__code__", "__defaults__", "__kwdefaults__",
    "__self__", "__func__", "__wrapped__",
})
_PROCESS_CALLS = ("system", "popen", "fork", "exec", "spawn", "posix_spawn", "kill", "setsid",
                  "setpgid", "_exit", "pidfd")
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


def _derived_aliases(tree: ast.Module, roots: set[str]) -> set[str]:
    """``roots`` and every name assigned from an expression rooted in one of them
    (``u = torch.utils`` makes ``u`` one), to a fixed point."""
    names = set(roots)
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                value_root = _root_name(node.value)
                if value_root not in names:
                    continue
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name) and target.id not in names:
                        names.add(target.id)
                        changed = True
    return names


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string constants that are docstrings (a string expression statement)."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)}


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
    "interpreter's objects, frames or functions' closures to find it or the harness",
    how="the name Model, frame, closure, code and garbage-collector introspection (as "
    "attributes or as names given to getattr) and imports of gc, inspect, ctypes or "
    "kernelwright are refused in the source (the reference never runs in the candidate's "
    "process anyway)",
)
def reference_access(ctx: GuardContext) -> list[str]:
    if ctx.tree is None:
        return []
    docs = _docstrings(ctx.tree)
    reasons: list[str] = []
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Name) and node.id == "Model":
            reasons.append(f"line {node.lineno}: refers to the reference class `Model`")
        elif isinstance(node, ast.Attribute) and node.attr in _INTROSPECTION_ATTRIBUTES:
            reasons.append(f"line {node.lineno}: introspects the interpreter (`.{node.attr}`)")
        elif (isinstance(node, ast.Constant) and node.value in _INTROSPECTION_ATTRIBUTES
              and id(node) not in docs):
            reasons.append(f"line {node.lineno}: names `{node.value}` (interpreter introspection)")
    for module, line in _imported_modules(ctx.tree):
        if module.split(".")[0] in _INTROSPECTION_MODULES:
            reasons.append(f"line {line}: imports {module}")
    return _dedupe(reasons)


def _launches(node: ast.AST) -> bool:
    """``node`` launches a kernel: a Triton grid launch ``kernel[grid](...)`` or a call into a
    compiled extension's function (``module.fn(...)`` where ``module`` came from load_inline)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Subscript):
            return True
    return False


def _local_functions(tree: ast.Module) -> dict[str, ast.AST]:
    found: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node
    return found


def _reaches_launch(node: ast.AST, functions: dict[str, ast.AST], extensions: set[str],
                    seen: set[str]) -> bool:
    """``node`` launches a kernel itself or through the file's own functions and extensions."""
    if _launches(node):
        return True
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        name = sub.func.id if isinstance(sub.func, ast.Name) else (
            sub.func.attr if isinstance(sub.func, ast.Attribute) else None)
        root = _root_name(sub.func)
        if root in extensions:
            return True
        if name in functions and name not in seen:
            seen.add(name)
            if _reaches_launch(functions[name], functions, extensions, seen):
                return True
    return False


_ALLOCATIONS = frozenset({"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "full",
                          "full_like", "ones", "ones_like", "device", "Size"})


def _falls_back(handler: ast.ExceptHandler, torch_names: set[str]) -> bool:
    """The handler produces a result of its own: it returns a value, or computes with PyTorch
    (anything but allocating)."""
    for node in ast.walk(handler):
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        if (isinstance(node, ast.Call) and _root_name(node.func) in torch_names
                and not (isinstance(node.func, ast.Attribute)
                         and node.func.attr in _ALLOCATIONS)):
            return True
    return False


def _extension_names(tree: ast.Module) -> set[str]:
    """Names bound to ``load_inline(...)`` / ``load(...)`` results."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("load_inline", "load"):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        names.add(target.id)
                    elif isinstance(target, ast.Attribute):
                        names.add(target.attr)
    return names


@register_check(
    "exception-fallback",
    stage="static",
    catches="try/except around a kernel that falls back to the framework when the kernel fails",
    how="an except handler around code that launches a kernel (directly or through the file's "
    "own functions) is refused when it returns a value or computes with PyTorch instead of "
    "re-raising; handlers around anything else (a cache lookup, a device query) and retries "
    "with another configuration are fine. At run time the ablation makes every launch raise "
    "and checks that the forward does not still return the right answer",
)
def exception_fallback(ctx: GuardContext) -> list[str]:
    if ctx.tree is None:
        return []
    functions = _local_functions(ctx.tree)
    extensions = _extension_names(ctx.tree)
    aliases = _module_aliases(ctx.tree)
    torch_names = _derived_aliases(ctx.tree, {n for n, top in aliases.items() if top == "torch"})
    reasons: list[str] = []
    for fn in ast.walk(ctx.tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.Try | ast.TryStar):
                continue
            body = ast.Module(body=list(node.body), type_ignores=[])
            if not _reaches_launch(body, functions, extensions, set()):
                continue
            for handler in node.handlers:
                retry = ast.Module(body=list(handler.body), type_ignores=[])
                if _reaches_launch(retry, functions, extensions, set()):
                    continue  # it launches its own kernel again (another tile, say): a retry
                if not _falls_back(handler, torch_names):
                    continue  # adjusts a setting and loops, logs, re-raises: no result of its own
                if not (handler.body and isinstance(handler.body[-1], ast.Raise)):
                    reasons.append(
                        f"line {handler.lineno}: `{fn.name}` catches an exception around a "
                        "kernel launch without re-raising it; a failing kernel must fail, not "
                        "fall back"
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
    protected = _derived_aliases(
        ctx.tree, {name for name, top in aliases.items() if top in _PROTECTED_MODULES})
    reasons: list[str] = []
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and _allowed_setting(node):
            continue
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


# Settings an honest kernel file may change: they trade speed, never correctness or precision.
_ALLOWED_SETTINGS = ("torch.backends.cudnn.benchmark", "torch.backends.cudnn.deterministic",
                     "torch._inductor.config.", "torch._dynamo.config.")


# Precision flags may be set to the strict fp32 value (TF32 off): it never relaxes a policy.
_STRICT_FLAGS = ("torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32")


def _allowed_setting(node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    texts = [ast.unparse(t) for t in targets]
    strict = (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
              and node.value.value is False)
    return all(
        any(text == allowed or (allowed.endswith(".") and text.startswith(allowed))
            for allowed in _ALLOWED_SETTINGS)
        or (strict and text in _STRICT_FLAGS)
        for text in texts
    )


# Private machinery that switches off what observes a call (dispatch and function modes), or
# tells an observed call from an unobserved one (the thread's dispatch keys and mode stacks).
_ESCAPE_PREFIXES = ("_dispatch_tls", "_dispatch_key", "_get_dispatch", "_get_torch_function",
                    "_is_torch_function", "_len_torch_function", "_get_function_stack",
                    "_get_current_dispatch", "_is_in_torch_dispatch", "is_in_torch_dispatch")
_ESCAPE_NAMES = frozenset({
    "_disable_current_modes", "_python_dispatch", "_pop_mode", "_push_mode", "_set_dispatch_mode",
    "_pop_torch_dispatch_stack", "_push_on_torch_dispatch_stack", "DisableTorchFunction",
    "DisableTorchFunctionSubclass", "_DisableTorchDispatch", "_ExcludeDispatchKeyGuard",
    "_get_current_dispatch_mode_stack", "_len_torch_dispatch_stack", "_unset_dispatch_mode",
    "_disabled_torch_function_impl", "_disabled_torch_dispatch_impl", "TorchDispatchMode",
    "TorchFunctionMode",
})


@register_check(
    "harness-escape",
    stage="static",
    catches="switching off the harness's observation of a call, or telling observed calls from "
    "timed ones (private dispatch-mode and dispatch-key APIs); hiding which attribute or module "
    "is used (getattr with a computed name, sys.modules, sys reached through another module, "
    "the harness's modules named in a string)",
    how="the source may not name the private dispatch-mode or dispatch-key machinery, "
    "sys.modules, `.sys` of another module, or a kernelwright module; getattr/setattr/hasattr/"
    "delattr must use a literal name, except on `self`",
)
def harness_escape(ctx: GuardContext) -> list[str]:
    if ctx.tree is None:
        return []
    aliases = _module_aliases(ctx.tree)
    modules = {name for name, top in aliases.items()}
    watched = _derived_aliases(ctx.tree, modules | {"__builtins__"})
    docs = _docstrings(ctx.tree)
    reasons: list[str] = []
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Attribute) and node.attr == "modules" and (
                aliases.get(_root_name(node) or "") == "sys"):
            reasons.append(f"line {node.lineno}: reaches modules through sys.modules")
        if (isinstance(node, ast.Attribute) and node.attr == "sys"
                and _root_name(node) in watched):
            reasons.append(f"line {node.lineno}: reaches sys through `{ast.unparse(node)}`")
        name = node.attr if isinstance(node, ast.Attribute) else (
            node.id if isinstance(node, ast.Name) else None)
        if name is not None and (name in _ESCAPE_NAMES or name.startswith(_ESCAPE_PREFIXES)):
            reasons.append(f"line {getattr(node, 'lineno', '?')}: uses `{name}`")
        if isinstance(node, ast.alias) and node.name.split(".")[-1] in _ESCAPE_NAMES:
            reasons.append(f"imports `{node.name}`")
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docs
                and (node.value == "kernelwright" or node.value.startswith("kernelwright."))):
            reasons.append(f"line {node.lineno}: names the harness's module {node.value!r}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and node.args
                and not (len(node.args) > 1 and isinstance(node.args[1], ast.Constant))
                and (_root_name(node.args[0]) in watched
                     or not (isinstance(node.args[0], ast.Name) and node.args[0].id == "self"))):
            reasons.append(f"line {node.lineno}: {node.func.id} with a computed name on "
                           f"`{ast.unparse(node.args[0])}`")
    for module, line in _imported_modules(ctx.tree):
        if module.split(".")[-1] in _ESCAPE_NAMES:
            reasons.append(f"line {line}: imports {module}")
    return _dedupe(reasons)


# PyTorch's compilers write kernels of their own: a file that hands them the model would be
# judged on kernels it did not write. Their settings alone change nothing (_ALLOWED_SETTINGS).
_COMPILERS = ("torch.compile", "torch._dynamo", "torch._inductor", "torch.export",
              "torch.jit.script", "torch.jit.trace", "torch.jit.freeze", "torch.jit.fuser",
              "torch.jit.optimize_for_inference", "torch.nn.Module.compile")
_COMPILER_SETTINGS = ("torch._dynamo.config", "torch._inductor.config")


def _is_compiler(dotted: str) -> bool:
    def under(prefixes: tuple[str, ...]) -> bool:
        return any(dotted == p or dotted.startswith(p + ".") for p in prefixes)

    return under(_COMPILERS) and not under(_COMPILER_SETTINGS)


def _dotted(node: ast.AST, names: dict[str, str]) -> str | None:
    """The dotted name an expression spells, its local names resolved through the file's
    imports and assignments (``T.jit.script`` is torch.jit.script after ``import torch as
    T``); ``getattr(x, "a")`` and ``x.__dict__["a"]`` spell ``x.a``."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, names)
        return f"{base}.{node.attr}" if base else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "getattr" and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
        base = _dotted(node.args[0], names)
        return f"{base}.{node.args[1].value}" if base else None
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "__dict__" and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)):
        base = _dotted(node.value.value, names)
        return f"{base}.{node.slice.value}" if base else None
    return None


def _dotted_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it stands for: every import (``from torch import compile
    as c`` makes ``c`` torch.compile), then every name assigned such a name (``c =
    torch.compile``), to a fixed point (a few passes: chains of assignments are short)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                local = a.asname or a.name.split(".")[0]
                names[local] = a.name if a.asname else local
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    for _ in range(8):
        changed = False
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                dotted = _dotted(node.value, names)
                if dotted and names.get(node.targets[0].id) != dotted:
                    names[node.targets[0].id] = dotted
                    changed = True
        if not changed:
            break
    return names


@register_check(
    "compiler-delegation",
    stage="static",
    catches="handing the model to PyTorch's compilers (torch.compile, TorchDynamo, TorchInductor, "
    "TorchScript, torch.export), which write the kernels that would be judged as the file's own",
    how="the source may not name torch.compile, torch._dynamo, torch._inductor, torch.export, "
    "TorchScript's script, trace, freeze and fusers or a module's .compile(), through any alias, "
    "import, assignment, literal getattr or module __dict__; "
    "assigning the compilers' settings (torch._dynamo.config, torch._inductor.config) is fine",
)
def compiler_delegation(ctx: GuardContext) -> list[str]:
    if ctx.tree is None:
        return []
    names = _dotted_names(ctx.tree)
    # a chain is judged whole (torch._dynamo.config.x is a setting, its prefix torch._dynamo
    # alone is not): the inner parts of attribute chains are skipped
    inner = {id(node.value) for node in ast.walk(ctx.tree) if isinstance(node, ast.Attribute)}
    reasons: list[str] = []
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            # what it binds: `from torch._inductor import config` is a setting, no compiler
            module = f"{node.module}." if isinstance(node, ast.ImportFrom) else ""
            reasons += [f"line {node.lineno}: imports {module}{a.name}" for a in node.names
                        if _is_compiler(module + a.name)]
        if isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.Subscript) and (
                id(node) not in inner):
            used = _dotted(node, names)
            if used and _is_compiler(used):
                reasons.append(f"line {node.lineno}: uses {used}")
            elif (used is None and isinstance(node, ast.Attribute)
                  and node.attr == "compile"):
                # a module's own .compile() (nn.Module.compile) runs torch.compile on it
                reasons.append(f"line {node.lineno}: calls `{ast.unparse(node)}`")
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
    reasons = [
        f"line {line}: imports {module}"
        for module, line in _imported_modules(ctx.tree)
        if module.split(".")[0] in _CONCURRENCY_MODULES
    ]
    aliases = _module_aliases(ctx.tree)
    os_names = {name for name, top in aliases.items() if top in ("os", "pty", "posix")}
    for node in ast.walk(ctx.tree):
        if (isinstance(node, ast.Attribute) and _root_name(node) in os_names
                and node.attr.startswith(_PROCESS_CALLS)):
            reasons.append(f"line {node.lineno}: uses `{ast.unparse(node)}`")
    return _dedupe(reasons)


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
    docs = _docstrings(ctx.tree)
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "open":
                reasons.append(f"line {node.lineno}: opens a file")
            elif node.func.id in _DYNAMIC_CALLS:
                reasons.append(f"line {node.lineno}: calls {node.func.id}()")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and ("/proc/" in node.value or ".kernelwright" in node.value)
        ):
            reasons.append(f"line {getattr(node, 'lineno', '?')}: names {node.value!r}")
    for module, line in _imported_modules(ctx.tree):
        top = module.split(".")[0]
        if top in _FILESYSTEM_MODULES or top == "importlib":
            reasons.append(f"line {line}: imports {module}")
    return _dedupe(reasons)


# Ways a tensor's data reaches NumPy (or another framework) to be computed on there.
_ARRAY_ATTRIBUTES = frozenset({"numpy", "__array__", "__array_interface__", "__array_struct__",
                               "__dlpack__", "to_dlpack", "from_dlpack"})
_NUMPY_CONSTRUCTORS = frozenset({"asarray", "array", "frombuffer", "from_dlpack", "asanyarray",
                                 "ascontiguousarray"})


@register_check(
    "numpy-math",
    stage="static",
    catches="doing the task's arithmetic in NumPy (or via DLPack elsewhere), which no kernel "
    "check sees",
    how="converting tensors to arrays (.numpy(), __array__, __array_interface__, DLPack, "
    "np.asarray and friends) is refused in the source; at run time conversions during a call "
    "are counted",
)
def numpy_math(ctx: GuardContext) -> list[str]:
    if ctx.tree is None:
        return []
    aliases = _module_aliases(ctx.tree)
    numpy_names = _derived_aliases(ctx.tree, {n for n, top in aliases.items() if top == "numpy"})
    reasons: list[str] = []
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Attribute) and node.attr in _ARRAY_ATTRIBUTES:
            reasons.append(f"line {node.lineno}: uses `.{node.attr}`")
        elif (isinstance(node, ast.Attribute) and node.attr in _NUMPY_CONSTRUCTORS
              and _root_name(node) in numpy_names):
            reasons.append(f"line {node.lineno}: builds a NumPy array (`{ast.unparse(node)}`)")
    return _dedupe(reasons)


def _dedupe(reasons: object) -> list[str]:
    seen: list[str] = []
    for r in reasons:  # type: ignore[attr-defined]
        if r not in seen:
            seen.append(r)
    return seen
