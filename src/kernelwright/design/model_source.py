"""The task's own code a ``ModelNew`` file must carry: imports, module constants and helpers (in
the file's order, since a constant may call a helper above it), and ``Model.__init__`` renamed,
so ``ModelNew(*get_init_inputs())`` creates the same parameters in the same order and, seeded
alike, the same weights.

The name ``Model`` never appears in the result (the guard refuses it): ``super(Model, self)``
becomes ``super(ModelNew, self)``. Module constants are written at the size the file is emitted
for (``KERNELWRIGHT["small"]`` overrides applied for ``small``), as the task's own import at that
size would see them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

SKIP_DEFS = frozenset({"Model", "get_inputs", "get_init_inputs", "get_input_variants"})


@dataclass(frozen=True, slots=True)
class ModelSource:
    """Pieces of the task file, as source text."""

    imports: tuple[str, ...]
    constants: tuple[str, ...]
    helpers: tuple[str, ...]
    class_body: tuple[str, ...]  # Model's members except forward, renamed; indented by 4
    top_names: frozenset[str]
    # the constants and helpers in the file's order, each with its kind ("constant" or
    # "helper"): a constant may call a helper defined above it (``to_2tuple = _ntuple(2)``)
    ordered: tuple[tuple[str, str], ...] = ()

    def top_level(self) -> list[str]:
        """The constants and helpers as the file's parts, in the file's order: each run of
        constants one part (a line each), each helper a part of its own."""
        parts: list[str] = []
        run: list[str] = []
        for kind, text in self.ordered:
            if kind == "constant":
                run.append(text)
                continue
            if run:
                parts.append("\n".join(run))
                run = []
            parts.append(text)
        if run:
            parts.append("\n".join(run))
        return parts


class _Rename(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == "Model":
            return ast.copy_location(ast.Name("ModelNew", node.ctx), node)
        return node


def model_source(source: str, size: str = "full") -> ModelSource:
    """Extract the pieces from a task's source at ``size``."""
    tree = ast.parse(source)
    overrides = _small_overrides(tree) if size == "small" else {}
    imports: list[str] = []
    constants: list[str] = []
    helpers: list[str] = []
    body: list[str] = []
    ordered: list[tuple[str, str]] = []
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            if not _imports_kernelwright(node):
                imports.append(ast.unparse(node))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            tnames = [t.id for t in targets if isinstance(t, ast.Name)]
            if "KERNELWRIGHT" in tnames:
                continue
            hit = [t for t in tnames if t in overrides]
            if hit and node.value is not None:
                node.value = ast.parse(repr(overrides[hit[0]]), mode="eval").body
            names.update(tnames)
            constants.append(ast.unparse(_Rename().visit(node)))
            ordered.append(("constant", constants[-1]))
        elif isinstance(node, ast.ClassDef) and node.name == "Model":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    continue
                if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant):
                    continue  # the docstring
                text = ast.unparse(_Rename().visit(item))
                body.append("\n".join("    " + ln if ln else ln for ln in text.splitlines()))
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            if node.name in SKIP_DEFS:
                continue
            names.add(node.name)
            helpers.append(ast.unparse(_Rename().visit(node)))
            ordered.append(("helper", helpers[-1]))
    return ModelSource(
        tuple(imports), tuple(constants), tuple(helpers), tuple(body), frozenset(names),
        tuple(ordered),
    )


def _imports_kernelwright(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] == "kernelwright"
    return any(a.name.split(".")[0] == "kernelwright" for a in node.names)


def _small_overrides(tree: ast.Module) -> dict[str, object]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KERNELWRIGHT" for t in node.targets
        ):
            try:
                options = ast.literal_eval(node.value)
            except ValueError:
                return {}
            small = options.get("small", {}) if isinstance(options, dict) else {}
            return dict(small) if isinstance(small, dict) else {}
    return {}
