"""Groups whose kernels are the same code up to names launch one kernel.

A model repeats its blocks: MobileNetV2's 34 convolution + batch norm groups render kernels that
differ only in the names of their values (``..._2_mean`` against ``..._3_mean``). Emitted as they
are, each is its own ``@triton.jit`` function: a file of thousands of lines, and a compile per
function in every process that runs it, though Triton would reuse one compiled kernel for
launches of one function with the same specialisation.

Two kernel functions are the same code when their syntax trees are equal after renaming their
parameters (by position) and local variables (by order of first appearance). Not renamed:
globals (``tl``, shared helpers, other kernels: an alias found earlier is applied before
comparing) and attribute names. Docstrings are left out of the comparison (they do not run). A
wrapper whose kernel has a twin launches the twin instead, with its own arguments; the
``tl.constexpr`` parameters it passes by keyword take the twin's names (a group's alignment
hints are named after its values), unless a twin's name already means something else in the
group's wrapper or kernels. The group's kernels that have no twin take the same names.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import replace

from kernelwright.design.kernel.common import RenderedKernel


def share_kernels(rendered: Iterable[tuple[int, RenderedKernel]]) -> dict[int, RenderedKernel]:
    """Each group's rendered kernel, its kernels dropped where an earlier group holds the same
    code and its wrapper (and remaining kernels) pointed at that earlier function."""
    seen: dict[str, tuple[str, list[str]]] = {}  # canonical form -> (function, its constexprs)
    out: dict[int, RenderedKernel] = {}
    for gid, r in rendered:
        renames: dict[str, str] = {}  # this group's names -> the twins'
        shared: list[tuple[str, str]] = []
        kept: list[str] = []
        words = set(re.findall(r"\w+", "\n".join([r.wrapper, *r.kernels])))
        for text in r.kernels:
            found = _canonical(_renamed(text, renames))
            twin = seen.get(found[1]) if found is not None else None
            if found is None or twin is None:
                kept.append(text)
                continue
            name, _key, constexprs = found
            wanted = renames | {m: t for m, t in zip(constexprs, twin[1], strict=True) if m != t}
            wanted[name] = twin[0]
            if any(t in words and t not in wanted for t in wanted.values()):
                kept.append(text)  # a twin's name would mean something else in this group
                continue
            renames = wanted
            shared.append((name, twin[0]))
        # the group's own kernels and its wrapper take the twins' names together
        kept = [_renamed(text, renames) for text in kept]
        for text in kept:
            found = _canonical(text)
            if found is not None:
                seen.setdefault(found[1], (found[0], found[2]))
        note = "".join(f"# {mine}: the same code as {twin}, which this wrapper launches\n"
                       for mine, twin in shared)
        out[gid] = replace(r, kernels=tuple(kept), wrapper=note + _renamed(r.wrapper, renames))
    return out


def _renamed(text: str, renames: dict[str, str]) -> str:
    """``text`` with every name in ``renames`` replaced at once (a swap stays a swap)."""
    if not renames:
        return text
    pattern = r"\b(" + "|".join(re.escape(old) for old in renames) + r")\b"
    return re.sub(pattern, lambda m: renames[m.group()], text)


def _canonical(text: str) -> tuple[str, str, list[str]] | None:
    """(the function's name, its canonical form, its constexpr parameters in order) for a
    single kernel function, else None."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    fn = tree.body[0]
    name = fn.name
    constexprs = [a.arg for a in fn.args.args if _is_constexpr(a)]
    fn.name = "_"
    first = fn.body[0] if fn.body else None
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        fn.body = fn.body[1:] or [ast.Pass()]
    local = [a.arg for a in fn.args.args]
    local += [n.id for n in ast.walk(fn)
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    order = {v: f"v{i}" for i, v in enumerate(dict.fromkeys(local))}
    for node in ast.walk(fn):
        if isinstance(node, ast.arg) and node.arg in order:
            node.arg = order[node.arg]
        elif isinstance(node, ast.Name) and node.id in order:
            node.id = order[node.id]
    return name, ast.dump(fn, annotate_fields=False, include_attributes=False), constexprs


def _is_constexpr(a: ast.arg) -> bool:
    return a.annotation is not None and ast.unparse(a.annotation).endswith("constexpr")
