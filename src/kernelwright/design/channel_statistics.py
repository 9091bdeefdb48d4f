"""A norm's statistics from the finer ones a mean of the same input computes anyway.

A group norm followed by a mean over space (once the mean has moved before the norm's affine
map, ``affine_reductions``) reduces its input x twice: the norm's statistics over each group's
channels and positions (the mean, then the mean of squared deviations), and the mean over each
channel's positions. Each reduction is a pass over x. The group's statistics follow exactly from
per-channel ones: the channels of a group hold as many values each, so the group's mean is the
mean of its channel means, and its variance is the mean of the channel variances plus the
variance of the channel means (the law of total variance). So x is reduced once, per channel (a
mean and a variance, one Welford pass), and the group's statistics come from (N, C) values.

    mean_g = mean(x, G, keepdim)                     mean_c = mean(x, C, keepdim)
    var_g  = mean((x - mean_g) ** 2, G, keepdim)  ->  var_c  = mean((x - mean_c) ** 2, C, keepdim)
    m      = mean(x, C)                              mean_g = mean(mean_c, G - C, keepdim)
                                                     var_g  = mean(var_c, G - C, keepdim)
                                                              + mean((mean_c - mean_g) ** 2, G - C,
                                                                     keepdim)
                                                     m      = mean_c without the dims of C

where C is a proper subset of G. Only where the norm's deviations feed its variance alone (the
normalised tensor, which reads x again, is no longer computed): otherwise x is read a second
time anyway and the finer statistics save nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelwright.design.affine_reductions import reduced_dims
from kernelwright.design.builder import fresh_name, meta_reduced
from kernelwright.design.graph import Arg, Node, OpGraph, Ref, TensorMeta

MEAN = "aten.mean.dim"
FINER = "statistics of each slice of a norm's groups (a mean over part of its dims reads them)"
COMBINED = "a norm's statistics combined from those of its groups' slices"


@dataclass(frozen=True, slots=True)
class _Statistics:
    """A mean and a variance of one tensor over the same dims (a norm's), and a mean of the
    same tensor over some of those dims."""

    mean: Node
    var: Node
    finer: Node
    source: Ref
    coarse_dims: tuple[int, ...]
    fine_dims: tuple[int, ...]


def statistics_from_finer_means(graph: OpGraph) -> OpGraph:
    """Every norm's mean and variance that a finer mean of the same input can give, computed
    from per-slice statistics instead (see the module docstring)."""
    for stats in _found(graph):
        graph = _rewritten(graph, stats)
    return graph


def _found(graph: OpGraph) -> list[_Statistics]:
    users = graph.users()
    means: dict[str, list[Node]] = {}
    for n in graph.nodes:
        if _mean_dims(graph, n) is not None:
            means.setdefault(n.args[0].name, []).append(n)  # type: ignore[union-attr]
    found: list[_Statistics] = []
    taken: set[str] = set()
    for var in graph.nodes:
        pattern = _variance_of(graph, var, users)
        if pattern is None:
            continue
        mean, source = pattern
        coarse = _mean_dims(graph, mean)
        assert coarse is not None
        for finer in means.get(source.name, []):
            fine = _mean_dims(graph, finer)
            if fine and set(fine) < set(coarse) and finer.name not in taken:
                found.append(_Statistics(mean, var, finer, source, coarse, fine))
                taken |= {finer.name, mean.name}
                break
    return found


def _mean_dims(graph: OpGraph, n: Node) -> tuple[int, ...] | None:
    """The dims a float mean over listed dims reduces (its input's dtype kept); else None."""
    dims = reduced_dims(graph, n) if n.target == MEAN else None
    return tuple(sorted(dims)) if dims is not None else None


def _keepdim(n: Node) -> bool:
    return bool(n.args[2]) if len(n.args) > 2 else bool(n.kwarg("keepdim", False))


def _variance_of(graph: OpGraph, var: Node, users: dict[str, list[str]]) -> tuple[Node, Ref] | None:
    """(the mean, the tensor) when ``var`` is mean((x - mean(x, D, keepdim)) ** 2, D, keepdim)
    whose deviations and their squares nothing else reads; else None."""
    dims = _mean_dims(graph, var)
    if dims is None or not _keepdim(var) or not graph.has_node(var.args[0].name):  # type: ignore[union-attr]
        return None
    sq = graph.node(var.args[0].name)  # type: ignore[union-attr]
    if (sq.target != "aten.mul.Tensor" or len(sq.args) != 2 or sq.args[0] != sq.args[1]
            or not isinstance(sq.args[0], Ref) or not graph.has_node(sq.args[0].name)):
        return None
    centred = graph.node(sq.args[0].name)
    if centred.target != "aten.sub.Tensor" or centred.kwargs or len(centred.args) != 2:
        return None
    x, m = centred.args
    if not isinstance(x, Ref) or not isinstance(m, Ref) or not graph.has_node(m.name):
        return None
    mean = graph.node(m.name)
    if _mean_dims(graph, mean) != dims or not _keepdim(mean) or mean.args[0] != x:
        return None
    if set(users[centred.name]) != {sq.name} or users[sq.name] != [var.name]:
        return None  # the deviations are needed at full size anyway
    return mean, x


def _rewritten(graph: OpGraph, s: _Statistics) -> OpGraph:
    """The graph with ``s``'s statistics computed from per-slice ones: the slices' statistics
    where the first of the norm's mean and the finer mean was, the norm's mean and variance
    where theirs were, the finer mean (a view of the slices' mean) where it was."""
    taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
    x = graph.meta(s.source.name)
    rest = tuple(d for d in s.coarse_dims if d not in s.fine_dims)
    fine_meta = meta_reduced(x, s.fine_dims, True)

    def node(base: str, target: str, args: tuple[Arg, ...], meta: TensorMeta,
             origin: str) -> Node:
        return Node(fresh_name(taken, base), "call", target, args, (), (meta,), origin=origin)

    # a finer mean that keeps its dims is the slices' mean itself, under its own name
    kept = _keepdim(s.finer)
    mean_c = (Node(s.finer.name, "call", MEAN, (s.source, s.fine_dims, True), (), s.finer.meta,
                   origin=s.finer.origin or FINER) if kept else
              node(f"{s.source.name}_slice_mean", MEAN, (s.source, s.fine_dims, True),
                   fine_meta, FINER))
    dev_c = node(f"{s.source.name}_slice_centred", "aten.sub.Tensor",
                 (s.source, Ref(mean_c.name)), x, FINER)
    sq_c = node(f"{s.source.name}_slice_sq", "aten.mul.Tensor",
                (Ref(dev_c.name), Ref(dev_c.name)), x, FINER)
    var_c = node(f"{s.source.name}_slice_var", MEAN, (Ref(sq_c.name), s.fine_dims, True),
                 fine_meta, FINER)
    mean_g = Node(s.mean.name, "call", MEAN, (Ref(mean_c.name), rest, True), (), s.mean.meta,
                  origin=COMBINED)
    spread = node(f"{s.mean.name}_spread", "aten.sub.Tensor",
                  (Ref(mean_c.name), Ref(mean_g.name)), fine_meta, COMBINED)
    spread_sq = node(f"{s.mean.name}_spread_sq", "aten.mul.Tensor",
                     (Ref(spread.name), Ref(spread.name)), fine_meta, COMBINED)
    between = node(f"{s.var.name}_between", MEAN, (Ref(spread_sq.name), rest, True),
                   s.var.out, COMBINED)
    within = node(f"{s.var.name}_within", MEAN, (Ref(var_c.name), rest, True), s.var.out,
                  COMBINED)
    var_g = Node(s.var.name, "call", "aten.add.Tensor", (Ref(within.name), Ref(between.name)),
                 (), s.var.meta, origin=COMBINED)
    finer = [] if kept else [
        Node(s.finer.name, "call", "aten.squeeze.dims", (Ref(mean_c.name), s.fine_dims), (),
             s.finer.meta, origin=s.finer.origin or FINER)]  # what it stands for, as it was
    slices = [mean_c, dev_c, sq_c, var_c]
    at = {s.mean.name: [mean_g, spread, spread_sq], s.var.name: [between, within, var_g],
          s.finer.name: finer}
    nodes: list[Node] = []
    for n in graph.nodes:
        if n.name in at:
            nodes += slices + at[n.name]
            slices = []
        else:
            nodes.append(n)
    return graph.replace(tuple(nodes)).pruned()


__all__ = ["statistics_from_finer_means"]
