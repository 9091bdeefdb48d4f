"""What an emitted ``ModelNew`` holds its callers to: the model it was generated for.

Kernels carry values of the captured model: a group count in a reshape, an ``eps``, a top-k
width, a head dimension's softmax scale (``math.sqrt`` of a size makes ``torch.export`` fix that
size and keep the float). Called with another model or such a size, a kernel would compute
something else without a word, so the file says what it was generated for and refuses the rest
with a one-line ``ValueError``:

    construction   ``_built_as({"groups": groups, ...}, {"groups": 3, ...})`` opening
                   ``__init__``: every parameter against the model's at capture (defaults
                   where the construction arguments stop); where the graph recorded them as a
                   literal
    input sizes    at the top of ``forward``, the dimensions whose size the graph holds in a
                   value (``OpGraph.held``, found at capture, or by a lowering that wrote a
                   value from one: a default attention scale), checked with the rank (from the
                   end where leading dimensions fold into a batch)

Every other size is read from the runtime tensors and stays free: the symbolic ones, and the
ones tracing fixed without computing anything from them (a pooled length, a channel count the
weights fix, which the model itself refuses to change). A size of 1 is always held.
"""

from __future__ import annotations

import ast
import textwrap

from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.emitter import safe_name

MODEL_HELPERS = {
    "_built_as": '''def _built_as(given, expected):
    """ModelNew's kernels hold values of the model built with ``expected`` (sizes, group counts,
    constants): built with ``given`` other than those it refuses, where it would compute
    something else (a list and a tuple of the same items are the same argument)."""

    def plain(value):
        if isinstance(value, list | tuple):
            return tuple(plain(v) for v in value)
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    if plain(given) != plain(expected):
        def spelled(arguments):
            return ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        raise ValueError(
            f"this ModelNew was generated for ModelNew({spelled(expected)}), not "
            f"ModelNew({spelled(given)}): its kernels hold values of that model; generate one "
            "for these arguments"
        )''',
    "_refuse_shape": """def _refuse_shape(name, tensor, expected):
    raise ValueError(
        f"this ModelNew was generated for {name} of shape {expected} (its kernels were "
        f"specialised to those sizes), not {tuple(tensor.shape)}; generate one for this shape"
    )""",
}


def guard_init(class_body: tuple[str, ...], graph: OpGraph) -> tuple[str, ...]:
    """The class body with ``_built_as(...)`` opening its ``__init__``: each parameter against
    its value at capture (the graph's construction arguments, bound by position; the
    parameter's default where they stop). Unchanged where the graph did not record them (not a
    literal), there were none, or the class has no ``__init__`` of its own."""
    if not graph.init or graph.init == "[]":
        return class_body
    literal = ast.parse(graph.init, mode="eval").body
    if not isinstance(literal, ast.List):
        return class_body
    values = [ast.unparse(v) for v in literal.elts]
    out = list(class_body)
    for k, member in enumerate(out):
        tree = ast.parse(textwrap.dedent(member))
        init = next(
            (d for d in tree.body if isinstance(d, ast.FunctionDef) and d.name == "__init__"), None
        )
        if init is None:
            continue
        pairs = _expected(init.args, values)
        if pairs is None:
            return class_body
        given = ", ".join(f"{name!r}: {name}" for name, _ in pairs)
        expected = ", ".join(f"{name!r}: {value}" for name, value in pairs)
        first = init.body[0]
        lines = member.splitlines()
        at = first.lineno - 1  # the docstring, if any, stays first
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and len(init.body) > 1
        ):
            at = init.body[1].lineno - 1
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        lines.insert(at, f"{indent}_built_as({{{given}}}, {{{expected}}})")
        out[k] = "\n".join(lines)
        return tuple(out)
    return class_body


def _expected(args: ast.arguments, values: list[str]) -> list[tuple[str, str]] | None:
    """(parameter, its value at capture as source) for every parameter of ``__init__`` after
    ``self``; None where the capture's arguments do not bind to them."""
    positional = [*args.posonlyargs, *args.args][1:]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs: list[tuple[str, str]] = []
    for k, (param, default) in enumerate(zip(positional, defaults, strict=True)):
        if k < len(values):
            pairs.append((param.arg, values[k]))
        elif default is not None:
            pairs.append((param.arg, ast.unparse(default)))
        else:
            return None
    rest = values[len(positional) :]
    if rest and args.vararg is None:
        return None
    if args.vararg is not None:
        pairs.append((args.vararg.arg, f"({', '.join(rest)}{',' if len(rest) == 1 else ''})"))
    for param, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is None:
            return None
        pairs.append((param.arg, ast.unparse(default)))
    if args.kwarg is not None:
        pairs.append((args.kwarg.arg, "{}"))
    return pairs


def shape_checks(graph: OpGraph, batch: bool) -> list[str]:
    """Statements for the top of ``forward``: each user input's held dimensions
    (``OpGraph.held``: sizes of 1, sizes the graph computed a value from, at their captured
    values), with its rank;
    ``batch``: leading dimensions fold into the first, so ranks are at least the captured one
    and dimensions count from the end."""
    lines: list[str] = []
    for u in graph.user_inputs:
        meta = u.meta
        dims = sorted(d for name, d in graph.held if name == u.name)
        if meta is None or not dims:
            continue
        fixed = [(d, meta.hint[d]) for d in dims]
        v, rank = safe_name(u.name), meta.rank
        axes = [d - rank if batch else d for d, _ in fixed]
        sizes = [s for _, s in fixed]
        rank_test = f"{v}.dim() < {rank}" if batch else f"{v}.dim() != {rank}"
        if len(fixed) == 1:
            size_test = f"{v}.shape[{axes[0]}] != {sizes[0]}"
        else:
            picked = ", ".join(f"{v}.shape[{a}]" for a in axes)
            size_test = f"({picked}) != ({', '.join(map(str, sizes))})"
        shown = [meta.shape[d] if d in dims else "_" for d in range(rank)]
        if batch:  # any leading dimensions, then the captured ones after the first
            expected = f"({', '.join(['...', *shown[1:]])})"
        else:
            expected = f"({', '.join(shown)}{',' if rank == 1 else ''})"
        lines.append(f"if {rank_test} or {size_test}:")
        lines.append(f"    _refuse_shape({v!r}, {v}, {expected!r})")
    return lines
