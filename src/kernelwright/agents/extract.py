"""Pull one ``ModelNew`` source file out of a model's reply, however it was written.

1. drop <think>...</think> reasoning that self-served models put in the content
2. fenced blocks (```python, ```py, ``` or ~~~; a last fence left open by a truncated reply)
   -> the last block defining ``class ModelNew``; when that block uses names that only
      other blocks define (kernel in one block, module in the next), all blocks joined
3. no fences -> the longest stretch of lines, from the first code-looking line, that parses
4. the result must parse and define ``class ModelNew``; otherwise ``code`` is None and
   ``problem`` says what was wrong, for the next turn's feedback
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n(?P<body>.*?)"
    r"(?:^[ \t]*(?P=fence)[ \t]*$|\Z)",
    re.DOTALL | re.MULTILINE,
)
_PYTHON_LANGS = frozenset({"", "python", "py", "python3", "py3"})
_CODE_START = re.compile(r"^(import |from |@|def |class |[A-Z_][A-Z0-9_]* *=|#)")
_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True, slots=True)
class Extraction:
    """The code found in a reply, or None and why not."""

    code: str | None
    problem: str = ""


def strip_reasoning(reply: str) -> str:
    """``reply`` without ``<think>...</think>`` sections."""
    return _THINK.sub("", reply or "").strip()


def extract_code(reply: str) -> Extraction:
    """The ``ModelNew`` source in ``reply`` (see the module docstring for the rules)."""
    text = strip_reasoning(reply)
    if not text:
        return Extraction(None, "the reply was empty")
    blocks = [
        m.group("body").strip("\n")
        for m in _FENCE.finditer(text)
        if m.group("lang").lower() in _PYTHON_LANGS
    ]
    blocks = [b for b in blocks if b.strip()]
    code = _from_blocks(blocks) if blocks else _from_prose(text)
    if code is None:
        return Extraction(
            None,
            "the reply contains no Python code defining `class ModelNew`"
            if "ModelNew" not in text
            else "the reply's `class ModelNew` code could not be separated from the prose",
        )
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return Extraction(None, f"the code does not parse: line {exc.lineno}: {exc.msg}")
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
        return Extraction(None, "the code does not define `class ModelNew` at module level")
    return Extraction(code.rstrip() + "\n")


def _from_blocks(blocks: list[str]) -> str | None:
    with_model = [b for b in blocks if re.search(r"^class ModelNew\b", b, re.MULTILINE)]
    if not with_model:
        return None
    chosen = with_model[-1]
    missing = _missing_names(chosen)
    helpers = [
        b
        for b in blocks[: blocks.index(chosen)]
        if "class ModelNew" not in b and missing & _defined_names(b)
    ]
    return "\n\n".join([*helpers, chosen])


def _from_prose(text: str) -> str | None:
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _CODE_START.match(line)]
    last_model = max((i for i, line in enumerate(lines) if "class ModelNew" in line), default=-1)
    for start in [i for i in starts if i <= last_model][:5]:
        # trailing prose: drop lines from the end until the rest parses
        for end in range(len(lines), last_model, -1):
            chunk = "\n".join(lines[start:end])
            if _parses(chunk):
                return chunk
    return None


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _defined_names(code: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _missing_names(code: str) -> set[str]:
    """Names ``code`` loads but neither defines nor imports (nor are builtins)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    bound = _defined_names(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    loaded = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return loaded - bound - _BUILTINS
