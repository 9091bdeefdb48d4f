"""Write a formal model as a constraints file that :func:`.loader.load_constraints` reads back.

Each clause that came from words carries them as a comment above it, so the file still says why
it holds what it holds. References are not written (they are files, named in the original).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from kernelwright.constraints.clauses import Clause
from kernelwright.constraints.model import Constraints
from kernelwright.constraints.source_rules import BACKENDS


def to_toml(constraints: Constraints, clauses: Sequence[Clause] = ()) -> str:
    """The constraints file of ``constraints``; ``clauses`` give the words shown as comments."""
    words: dict[str, list[str]] = {}
    for c in clauses:
        words.setdefault(c.formal, [])
        if c.words not in words[c.formal]:
            words[c.formal].append(c.words)

    def said(*formal: str) -> list[str]:
        found = [w for f in formal for w in words.get(f, [])]
        return [f"# from: {w}" for w in dict.fromkeys(found)]

    top: list[str] = []
    if tuple(constraints.backends) != BACKENDS:
        top += said(f"only {', '.join(constraints.backends)}")
        top.append(f"backends = {_list(constraints.backends)}")
    if constraints.precision is not None:
        top.append(f"precision = {_str(constraints.precision.value)}")
    if constraints.forbidden_ops:
        top += said(*constraints.forbidden_ops)
        top.append(f"forbidden_ops = {_list(constraints.forbidden_ops)}")
    if constraints.forbidden_constructs:
        top += said(*constraints.forbidden_constructs)
        top.append(f"forbidden_constructs = {_list(constraints.forbidden_constructs)}")
    tables: list[list[str]] = []
    if constraints.signatures:
        tables.append(
            ["[signatures]"]
            + [f"{_str(name)} = {_list(params)}" for name, params in constraints.signatures]
        )
    budget = {
        "candidates": constraints.candidates,
        "minutes": constraints.minutes,
        "llm_calls": constraints.llm_calls,
        "cost_usd": constraints.cost_usd,
    }
    if any(v is not None for v in budget.values()):
        tables.append(["[budget]"] + [f"{k} = {v}" for k, v in budget.items() if v is not None])
    if constraints.dtypes is not None:
        d = constraints.dtypes
        tables.append(
            ["[dtypes]", *said(f"{d.storage} storage", f"{d.math} math")]
            + [f"storage = {_str(d.storage)}", f"math = {_str(d.math)}"]
        )
    space = constraints.space
    if space.restrictions or space.domains:
        lines = ["[space]", "restrictions = ["]
        for r in space.restrictions:
            lines += [f"  {line}" for line in said(r)] + [f"  {_str(r)},"]
        lines.append("]")
        if space.derived:
            lines.append(_inline("derived", [f"{k} = {_str(v)}" for k, v in space.derived]))
        if space.domains:
            lines.append(_inline("domains", [f"{k} = {_list(v)}" for k, v in space.domains]))
        tables.append(lines)
    props = constraints.properties
    if props:
        lines = ["[properties]  # checked by the harness (the memory ceiling on a GPU)"]
        if props.deterministic:
            lines += said("bit-identical repeated runs") + ["deterministic = true"]
        if props.memory_ceiling_bytes is not None:
            formal = f"peak extra memory <= {props.memory_ceiling_bytes} bytes"
            lines += said(formal) + [f"memory_ceiling_bytes = {props.memory_ceiling_bytes}"]
        if props.shape_ranges:
            lines += said(*(r.describe() for r in props.shape_ranges))
            ranges = ", ".join(
                f"{{ dim = {_str(r.dim)}, low = {r.low}, high = {r.high} }}"
                for r in props.shape_ranges
            )
            lines.append(f"shape_ranges = [{ranges}]")
        tables.append(lines)
    blocks = ["\n".join(top)] if top else []
    blocks += ["\n".join(t) for t in tables]
    return "\n\n".join(blocks) + "\n"


def _inline(key: str, items: list[str]) -> str:
    return f"{key} = {{ {', '.join(items)} }}"


def _str(value: str) -> str:
    return json.dumps(value)  # a TOML basic string: the same escapes as JSON


def _list(values: Sequence[object]) -> str:
    return "[" + ", ".join(_str(v) if isinstance(v, str) else str(v) for v in values) + "]"
