"""The AST rules behind :class:`kernelwright.constraints.Constraints`: one function per clause.

Names are resolved through the file's imports, so ``import torch.nn.functional as F`` then
``F.scaled_dot_product_attention`` and ``from torch import matmul as mm`` then ``mm`` both
resolve to the full dotted name before they are compared with the forbidden list (whose own
common aliases, ``F.``, ``nn.``, ``tl.``, ``np.``, are expanded the same way).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from kernelwright.records import Precision, Violation

BACKENDS: tuple[str, ...] = ("triton", "cuda")
_CONVENTIONAL = {
    "F": "torch.nn.functional",
    "nn": "torch.nn",
    "tl": "triton.language",
    "np": "numpy",
}
_CUDA_MODULES = ("torch.utils.cpp_extension", "cupy", "numba.cuda", "pycuda")


def parse_or_none(source: str) -> ast.Module | None:
    """The module's AST, or None when it does not parse."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def canonical_op(name: str) -> str:
    """``F.softmax`` -> ``torch.nn.functional.softmax`` (conventional aliases expanded)."""
    head, dot, rest = name.strip().partition(".")
    return _CONVENTIONAL[head] + dot + rest if head in _CONVENTIONAL else name.strip()


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it stands for, for every import in the file."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """The full dotted name of ``a.b.c`` with its root resolved through ``aliases``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def backend_violations(tree: ast.Module, allowed: Sequence[str]) -> list[Violation]:
    """Kernel languages the file uses that are not in ``allowed``."""
    used: dict[str, int] = {}
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
        for module in modules:
            assert isinstance(node, ast.stmt)
            if module.split(".")[0] == "triton":
                used.setdefault("triton", node.lineno)
            if module.startswith(_CUDA_MODULES):
                used.setdefault("cuda", node.lineno)
        if isinstance(node, ast.Attribute) and node.attr == "load_inline":
            used.setdefault("cuda", node.lineno)
    return [
        Violation(
            "constraint-backend",
            f"line {line}: uses {backend}, but the constraints allow only {', '.join(allowed)}",
        )
        for backend, line in sorted(used.items())
        if backend not in allowed
    ]


def forbidden_op_violations(tree: ast.Module, forbidden: Iterable[str]) -> list[Violation]:
    """Uses of forbidden operations: by name, as a Tensor method, through getattr, or ``@``."""
    ops = {canonical_op(f): f for f in forbidden}
    if not ops:
        return []
    aliases = import_aliases(tree)
    modules = set(aliases)
    leaf = {op.rsplit(".", 1)[-1]: shown for op, shown in ops.items() if op.startswith("torch.")}
    jit_nodes = {id(n) for fn in _jit_functions(tree) for n in ast.walk(fn)}
    reasons: list[str] = []
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for imported in _imported_names(node):
                hit = _match(imported, ops)
                if hit:
                    reasons.append(f"line {node.lineno}: imports {ops[hit]} (forbidden)")
            continue
        if isinstance(node, ast.Attribute | ast.Name) and not isinstance(
            parents.get(id(node)), ast.Attribute
        ):
            name = dotted(node, aliases)
            hit = _match(name, ops) if name else None
            if hit:
                reasons.append(f"line {node.lineno}: uses {ops[hit]} (forbidden)")
                continue
        if id(node) in jit_nodes:
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in leaf
            and dotted(node.func.value, aliases) is None
            and not (isinstance(node.func.value, ast.Name) and node.func.value.id in modules)
        ):
            reasons.append(
                f"line {node.lineno}: calls the Tensor method .{node.func.attr}(), the same "
                f"operation as {leaf[node.func.attr]} (forbidden)"
            )
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in leaf
        ):
            reasons.append(
                f"line {node.lineno}: getattr(..., {node.args[1].value!r}) reaches "
                f"{leaf[str(node.args[1].value)]} (forbidden)"
            )
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.MatMult)
            and "torch.matmul" in ops
        ):
            reasons.append(f"line {node.lineno}: the @ operator is torch.matmul (forbidden)")
    return [Violation("constraint-forbidden-op", r) for r in dict.fromkeys(reasons)]


def _match(name: str, ops: Iterable[str]) -> str | None:
    """The forbidden op that ``name`` is, or lies inside (``torch.matmul`` for itself)."""
    return next((op for op in ops if (name + ".").startswith(op + ".")), None)


def _imported_names(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not node.module or node.level:
        return []
    return [f"{node.module}.{a.name}" for a in node.names]


def signature_violations(
    tree: ast.Module, required: Sequence[tuple[str, Sequence[str]]]
) -> list[Violation]:
    """Required functions or methods that are missing or have other parameters."""
    found: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = _params(node.args)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"{node.name}.{item.name}"] = _params(item.args)
    reasons = []
    for name, params in required:
        if name not in found:
            reasons.append(
                f"{name} is missing; the constraints require {name}({', '.join(params)})"
            )
        elif found[name] != list(params):
            reasons.append(
                f"{name}({', '.join(found[name])}) does not match the required "
                f"{name}({', '.join(params)})"
            )
    return [Violation("constraint-signature", r) for r in reasons]


def _params(args: ast.arguments) -> list[str]:
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if args.vararg:
        names.append("*" + args.vararg.arg)
    names.extend(a.arg for a in args.kwonlyargs)
    if args.kwarg:
        names.append("**" + args.kwarg.arg)
    return names


# What lowers float32 math: half storage everywhere but under bf16, TF32 matrix units under fp32.
_HALF_TYPES = frozenset(
    {
        "torch.float16",
        "torch.half",
        "torch.bfloat16",
        "triton.language.float16",
        "triton.language.bfloat16",
    }
)
_HALF_METHODS = frozenset({"half", "bfloat16"})
_FP32_DOT = frozenset({"ieee", "tf32x3"})  # tf32x3: three TF32 passes, more accurate than fp32 FMA


def precision_violations(tree: ast.Module, policy: Precision) -> list[Violation]:
    """Constructs that compute below ``policy``: casts to half types (under fp32 and tf32), and
    under fp32 TF32 matrix units (``tl.dot`` without an fp32 ``input_precision``, TF32 switched
    on). Values not written as literals are left to the harness's tolerance and guard."""
    if policy is Precision.BF16:
        return []
    aliases = import_aliases(tree)
    reasons: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            reasons += _call_precision(node, aliases, policy)
        elif policy is Precision.FP32 and isinstance(node, ast.Assign):
            for target in node.targets:
                name = dotted(target, aliases) or ""
                on = isinstance(node.value, ast.Constant) and node.value.value is True
                if name.endswith("allow_tf32") and on:
                    reasons.append(f"line {node.lineno}: switches TF32 on ({name} = True)")
    return [
        Violation("constraint-precision", f"{r}, which precision = {policy.value!r} forbids")
        for r in dict.fromkeys(reasons)
    ]


def _call_precision(node: ast.Call, aliases: dict[str, str], policy: Precision) -> list[str]:
    func = node.func
    line = node.lineno
    if isinstance(func, ast.Attribute) and func.attr in _HALF_METHODS and not node.args:
        return [f"line {line}: casts to half precision (.{func.attr}())"]
    if isinstance(func, ast.Attribute) and func.attr == "to":
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            name = dotted(arg, aliases)
            if name in _HALF_TYPES:
                return [f"line {line}: casts to {name}"]
    if policy is not Precision.FP32:
        return []
    name = dotted(func, aliases)
    kwargs = {k.arg: k.value for k in node.keywords if k.arg}
    if name == "triton.language.dot":
        given = kwargs.get("input_precision")
        allow = kwargs.get("allow_tf32")
        if given is None and allow is None:
            return [f'line {line}: tl.dot without input_precision="ieee" uses TF32 on GPUs']
        if isinstance(given, ast.Constant) and given.value not in _FP32_DOT:
            return [f"line {line}: tl.dot(input_precision={given.value!r}) uses TF32"]
        if isinstance(allow, ast.Constant) and allow.value is True:
            return [f"line {line}: tl.dot(allow_tf32=True) uses TF32"]
    if name == "torch.set_float32_matmul_precision" and node.args:
        level = node.args[0]
        if isinstance(level, ast.Constant) and level.value != "highest":
            return [f"line {line}: set_float32_matmul_precision({level.value!r}) allows TF32"]
    return []


def _jit_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """Functions decorated with ``triton.jit`` (or any ``*.jit`` / ``jit``)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if isinstance(target, ast.Attribute):
                    name = target.attr
                else:
                    name = target.id if isinstance(target, ast.Name) else ""
                if name in ("jit", "autotune", "heuristics"):
                    out.append(node)
                    break
    return out
