"""Reductions before affine maps: ``mean(x * a + c, D)`` -> ``mean(x, D) * a + c``.

A mean over dimensions D of a chain of element-wise adds, subtracts, multiplies, divides and
negations of one tensor x, whose other operands are constant along every dimension of D (plain
numbers, or tensors of extent 1 there), equals the same chain applied to the mean of x. Inside
one reduced slice every step is ``x -> x * a + c`` with the same a and c for all n elements, and
``sum_i (x_i * a + c) / n = (sum_i x_i / n) * a + c``. A sum commutes with the scaling steps
alone (multiply, divide by, negate): an added term would be counted n times, so a sum's chain
ends at its first add or subtract.

A norm followed by a mean over some of its dimensions (GroupNorm then a mean over space,
BatchNorm then a global average pool) then reduces the norm's input instead of its output: the
normalised tensor is neither written nor read back, and only the reduced values go through the
norm's centring, scale and shift.

Conditions, each needed for the identity or for the rewrite to save work:

- the reduction is a float ``mean.dim`` or ``sum.dim_IntList`` over listed dimensions, of the
  input's dtype (no dtype argument);
- the value it reduces is read by nothing else and is no output, so it is no longer computed at
  full size; further back, a step that others read stays for them, and the reduction reads past
  it (a norm's centred input is also squared for the variance);
- each step's one varying operand has the step's shape and dtype (it is not broadcast), appears
  once, and is the dividend of a divide; anything non-linear (an activation, ``x * x``, a
  divide by x) ends the chain.
"""

from __future__ import annotations

from collections.abc import Sequence

from kernelwright.design.builder import fresh_name, meta_reduced
from kernelwright.design.graph import Arg, Node, OpGraph, Ref, TensorMeta

MEAN_OR_SUM = {"aten.mean.dim": "mean", "aten.sum.dim_IntList": "sum"}
# element-wise steps affine in one operand -> the positions that operand may take (a divide is
# affine in its dividend alone)
SCALING_STEPS = {
    "aten.mul.Tensor": (0, 1),
    "aten.mul.Scalar": (0,),
    "aten.div.Tensor": (0,),
    "aten.div.Scalar": (0,),
    "aten.neg.default": (0,),
}
SHIFTING_STEPS = {
    "aten.add.Tensor": (0, 1),
    "aten.add.Scalar": (0,),
    "aten.sub.Tensor": (0, 1),
    "aten.sub.Scalar": (0,),
}
REDUCED_FIRST = "reduced before the element-wise chain it read (constant along the reduced dims)"
CHAIN_AFTER = "an element-wise step moved after the reduction it fed"
SQUEEZED = "a constant of the moved chain, without the dimensions the reduction drops"


def reductions_through_affine(graph: OpGraph) -> OpGraph:
    """Every mean or sum that reads an affine chain (see the module docstring) reduces the
    chain's source instead; the chain's steps follow on the reduced values, the last one under
    the reduction's name, so its readers are unchanged."""
    users = graph.users()
    outputs = set(graph.output_names())
    taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
    nodes: list[Node] = []
    for n in graph.nodes:
        found = _affine_chain(graph, n, users, outputs)
        nodes += [n] if found is None else _reduce_first(graph, n, *found, taken)
    return graph.replace(tuple(nodes)).pruned()


def _affine_chain(
    graph: OpGraph, n: Node, users: dict[str, list[str]], outputs: set[str]
) -> tuple[list[tuple[Node, int]], Ref] | None:
    """(the chain's steps from the one ``n`` reads back, each with the position of the operand
    that varies, and the tensor the chain starts from) when ``n`` is a mean or sum that can
    reduce that tensor first; else None."""
    dims = reduced_dims(graph, n)
    head = n.args[0] if n.args else None
    if dims is None or not isinstance(head, Ref) or not graph.has_node(head.name):
        return None
    if users[head.name] != [n.name] or head.name in outputs:
        return None  # the reduced value is needed at full size anyway
    steps = SCALING_STEPS if MEAN_OR_SUM[n.target] == "sum" else SCALING_STEPS | SHIFTING_STEPS
    chain: list[tuple[Node, int]] = []
    source: Arg = head
    while isinstance(source, Ref) and graph.has_node(source.name):
        step = graph.node(source.name)
        varying = _varying_operand(graph, step, dims, steps, n.out.dtype)
        if varying is None:
            break
        chain.append((step, varying))
        source = step.args[varying]
    assert isinstance(source, Ref)
    return (chain, source) if chain else None


def reduced_dims(graph: OpGraph, n: Node) -> set[int] | None:
    """The dimensions ``n`` reduces, when it is a float mean or sum over listed dimensions
    that keeps its input's dtype; else None."""
    if n.target not in MEAN_OR_SUM or len(n.meta) != 1 or n.kwarg("dtype") is not None:
        return None
    x = n.args[0] if n.args else None
    dims = n.args[1] if len(n.args) > 1 else n.kwarg("dim")
    if not isinstance(x, Ref) or not isinstance(dims, tuple) or not dims:
        return None
    xm = graph.meta(x.name)
    if xm.rank == 0 or not xm.is_float or n.out.dtype != xm.dtype:
        return None
    return {int(d) % xm.rank for d in dims}  # type: ignore[arg-type]


def _varying_operand(
    graph: OpGraph, step: Node, dims: set[int], steps: dict[str, tuple[int, ...]], dtype: str
) -> int | None:
    """The position of the operand of ``step`` that varies along ``dims`` when ``step`` is
    affine in it with every other operand constant along ``dims`` (see the module docstring);
    else None."""
    if step.kind != "call" or step.target not in steps or step.kwargs or len(step.meta) != 1:
        return None
    if step.out.dtype != dtype:
        return None
    varying = [i for i, a in enumerate(step.args) if not _constant_along(graph, a, step, dims)]
    if len(varying) != 1 or varying[0] not in steps[step.target]:
        return None
    x = step.args[varying[0]]
    assert isinstance(x, Ref)  # numbers are constant
    xm = graph.meta(x.name)
    if xm.shape != step.out.shape or xm.dtype != step.out.dtype:
        return None  # a broadcast operand, or a cast on the way
    return varying[0]


def _constant_along(graph: OpGraph, a: Arg, step: Node, dims: set[int]) -> bool:
    """``a`` (an operand of ``step``) holds one value along each of ``dims`` of the step's
    output: a number, or a tensor of extent 1 there (right-aligned, as broadcasting goes)."""
    if isinstance(a, bool | int | float):
        return True
    if not isinstance(a, Ref):
        return False
    m = graph.meta(a.name)
    lead = step.out.rank - m.rank
    return lead >= 0 and all(m.shape[d - lead] == "1" for d in dims if d >= lead)


def _reduce_first(
    graph: OpGraph, n: Node, chain: list[tuple[Node, int]], source: Ref, taken: set[str]
) -> list[Node]:
    """The nodes that replace ``n``: its reduction of ``source``, each constant operand
    without the reduced dimensions where the reduction drops them, then ``chain``'s steps
    (innermost first) on the reduced values, the last under ``n``'s name."""
    rank = graph.meta(source.name).rank
    dims = sorted(reduced_dims(graph, n) or ())
    keepdim = bool(n.args[2]) if len(n.args) > 2 else bool(n.kwarg("keepdim", False))
    reduced_name = fresh_name(taken, f"{source.name}_{MEAN_OR_SUM[n.target]}")
    made = [Node(reduced_name, "call", n.target, (source, *n.args[1:]), n.kwargs,
                 (meta_reduced(graph.meta(source.name), dims, keepdim),), origin=REDUCED_FIRST)]
    value = Ref(reduced_name)
    squeezed: dict[str, Ref] = {}
    for i, (step, varying) in enumerate(reversed(chain)):
        last = i == len(chain) - 1
        args: list[Arg] = []
        for k, a in enumerate(step.args):
            if k == varying:
                args.append(value)
            elif isinstance(a, Ref) and not keepdim:
                args.append(_squeezed(graph, a, dims, rank, squeezed, made, taken))
            else:
                args.append(a)
        name = n.name if last else fresh_name(taken, f"{step.name}_reduced")
        meta = n.meta if last else (meta_reduced(step.out, dims, keepdim),)
        made.append(Node(name, "call", step.target, tuple(args), (), meta, origin=CHAIN_AFTER))
        value = Ref(name)
    return made


def _squeezed(
    graph: OpGraph,
    a: Ref,
    dims: Sequence[int],
    rank: int,
    done: dict[str, Ref],
    made: list[Node],
    taken: set[str],
) -> Ref:
    """``a`` without the reduced ``dims`` it holds (right-aligned against ``rank``), so it
    lines up with a reduction that drops them; ``a`` itself when it holds none."""
    if a.name in done:
        return done[a.name]
    m = graph.meta(a.name)
    lead = rank - m.rank
    own = tuple(d - lead for d in dims if d >= lead)
    if not own:
        return a
    kept = [d for d in range(m.rank) if d not in own]
    meta = TensorMeta(tuple(m.shape[d] for d in kept), tuple(m.hint[d] for d in kept),
                      tuple(m.strides[d] for d in kept), m.dtype)
    name = fresh_name(taken, f"{a.name}_squeezed")
    made.append(Node(name, "call", "aten.squeeze.dims", (a, own), (), (meta,), origin=SQUEEZED))
    done[a.name] = Ref(name)
    return done[a.name]


__all__ = ["reduced_dims", "reductions_through_affine"]
