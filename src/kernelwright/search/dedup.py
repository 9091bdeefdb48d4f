"""Equivalence-aware pruning: candidates that differ only in form cost no evaluation.

Two sources are the same candidate when their ASTs are equal after dropping docstrings and
comments (formatting, comments and docstrings never change a kernel). Deeper equivalences
(renamed variables, reordered independent statements) are a proposer's business: template
proposers de-duplicate on their design and parameters before rendering.
"""

from __future__ import annotations

import ast
import hashlib


def canonical_key(source: str) -> str:
    """A hash equal for sources that differ only in comments, docstrings or layout."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "raw:" + hashlib.sha256(source.encode()).hexdigest()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    dumped = ast.dump(tree, annotate_fields=False, include_attributes=False)
    return "ast:" + hashlib.sha256(dumped.encode()).hexdigest()
