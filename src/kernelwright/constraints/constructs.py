"""Forbidden constructs: kinds of code, not single operations, found in a candidate's source.

    construct     what counts
    atomics       ``tl.atomic_*`` (any atomic of ``triton.language``), and CUDA's ``atomicAdd``,
                  ``atomicCAS``... inside strings (``load_inline`` sources)
    inline_asm    ``tl.inline_asm_elementwise``, and ``asm(`` / ``asm volatile(`` in CUDA strings

Atomics make floating-point sums depend on the order threads arrive in, so a person who needs
bit-identical results forbids them; inline assembly escapes every other check.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable

from kernelwright.constraints.source_rules import dotted, import_aliases
from kernelwright.errors import ConfigError
from kernelwright.records import Violation

CHECK = "constraint-forbidden-construct"
_CUDA_ATOMIC = re.compile(r"\batomic[A-Z]\w*\s*\(")
_CUDA_ASM = re.compile(r"\basm\s*(volatile\s*)?\(")


def _atomics(tree: ast.Module) -> list[str]:
    return _find(tree, lambda name: name.rpartition(".")[2].startswith("atomic_"), _CUDA_ATOMIC)


def _inline_asm(tree: ast.Module) -> list[str]:
    return _find(tree, lambda name: name.endswith("inline_asm_elementwise"), _CUDA_ASM)


CONSTRUCTS: dict[str, Callable[[ast.Module], list[str]]] = {
    "atomics": _atomics,
    "inline_asm": _inline_asm,
}


def check_constructs(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` validated against :data:`CONSTRUCTS`.

    Raises:
        ConfigError: a name that is not a known construct.
    """
    names = tuple(names)
    unknown = [n for n in names if n not in CONSTRUCTS]
    if unknown:
        raise ConfigError(f"forbidden_constructs {unknown} unknown; use {sorted(CONSTRUCTS)}")
    return names


def construct_violations(tree: ast.Module, forbidden: Iterable[str]) -> list[Violation]:
    """Uses of each forbidden construct, with the line."""
    return [
        Violation(CHECK, f"{where} ({name} are forbidden)" if name == "atomics"
                  else f"{where} ({name} is forbidden)")
        for name in forbidden
        for where in CONSTRUCTS[name](tree)
    ]  # fmt: skip


def _find(
    tree: ast.Module, matches: Callable[[str], bool], in_strings: re.Pattern[str]
) -> list[str]:
    aliases = import_aliases(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = dotted(node, aliases) or node.attr
            if matches(name):
                found.append(f"line {node.lineno}: uses {name}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            hit = in_strings.search(node.value)
            if hit:
                found.append(f"line {node.lineno}: CUDA source calls {hit.group(0).rstrip('( ')}")
    return list(dict.fromkeys(found))
