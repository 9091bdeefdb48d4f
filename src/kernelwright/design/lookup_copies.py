"""A table lookup (or a range) read by several kernels becomes one copy a reader, placed just
before it, so each reader's kernel computes the rows it needs itself instead of one kernel
writing them for all. Part of lowering (:mod:`kernelwright.design.lower`)."""

from __future__ import annotations

import dataclasses

from kernelwright.design.aten import classify, lookup_fusible
from kernelwright.design.graph import Arg, Node, OpGraph, Ref


def clone_lookups(graph: OpGraph) -> OpGraph:
    """Give every reader of a table lookup (``table[index]``, possibly through views) after the
    first its own copy of the lookup and of the views between them, placed just before it.

    A lookup is an indexed load inside an element-wise kernel; a reader in another kernel than
    the first would otherwise read the gathered rows written out by the first (a rotary
    embedding's query and key kernels read one cos and one sin lookup). The emitter loads
    identical lookups once per kernel, so copies read in one kernel cost nothing. An index
    range (``arange``) is computed by the kernel that reads it: its readers get copies too."""
    chain: set[str] = set()  # fusible lookups, index ranges and views of them
    for n in graph.nodes:
        kind = classify(n)
        lookup = (kind == "lookup" and lookup_fusible(graph, n)) or kind == "index"
        view_of_one = kind == "view" and isinstance(n.args[0], Ref) and n.args[0].name in chain
        if lookup or view_of_one:
            chain.add(n.name)
    if not chain:
        return graph
    by_name = {n.name: n for n in graph.nodes}
    taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
    claimed: set[str] = set()
    nodes: list[Node] = []
    for n in graph.nodes:
        needed = set() if n.name in chain else _chain_ancestors(by_name, chain, n)
        if not needed & claimed:
            claimed |= needed  # the first reader keeps the originals
            nodes.append(n)
            continue
        rename: dict[str, str] = {}
        for c in sorted(needed, key=list(by_name).index):  # execution order
            fresh = f"{c}_for_{n.name}"
            while fresh in taken:
                fresh += "_"
            taken.add(fresh)
            rename[c] = fresh
            nodes.append(_renamed(by_name[c], rename, fresh))
        nodes.append(_renamed(n, rename, n.name))
    return graph.replace(tuple(nodes)).pruned()


def _chain_ancestors(by_name: dict[str, Node], chain: set[str], n: Node) -> set[str]:
    """The lookup-chain nodes (lookups and views of them) that ``n`` reads, with theirs."""
    found: set[str] = set()
    stack = [r for r in n.refs() if r in chain]
    while stack:
        c = stack.pop()
        if c not in found:
            found.add(c)
            stack.extend(r for r in by_name[c].refs() if r in chain)
    return found


def _renamed(n: Node, rename: dict[str, str], name: str) -> Node:
    """``n`` called ``name``, reading ``rename[r]`` in place of each renamed ``r``."""

    def arg(a: Arg) -> Arg:
        if isinstance(a, Ref):
            return Ref(rename.get(a.name, a.name))
        if isinstance(a, tuple):
            return tuple(arg(x) for x in a)
        return a

    kwargs = tuple((k, arg(v)) for k, v in n.kwargs)
    return dataclasses.replace(n, name=name, args=tuple(arg(a) for a in n.args), kwargs=kwargs)

