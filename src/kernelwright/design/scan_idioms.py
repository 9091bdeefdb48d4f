"""Scans written as PyTorch idioms, rewritten into kernelwright's scan primitive ``kw.scan``.

    reverse_scans      ``flip(cumsum(flip(x)))`` -> ``kw.scan(x, d, "sum", reverse=True)``
    exclusive_scans    ``cat([neutral, cumsum(x[:n-1])])`` or ``cumsum(pad(x, (1, 0))[:n])``
                       -> ``kw.scan(x, d, "sum", exclusive=True)`` (and cumprod): the kernel
                       reads each step's predecessor, so neither the shifted copy nor the
                       concatenation is written

Part of lowering (:mod:`kernelwright.design.lower`).
"""

from __future__ import annotations

from collections.abc import Callable

from kernelwright.design.graph import Arg, Node, OpGraph, Ref


def reverse_scans(graph: OpGraph) -> OpGraph:
    """``flip(cumsum(flip(x, [d]), d), [d])`` -> ``kw.scan(x, d, "sum", True)`` (and cumprod)."""
    users = graph.users()
    replace: dict[str, Node] = {}
    drop: set[str] = set()
    for n in graph.nodes:
        if n.target != "aten.flip.default" or not isinstance(n.args[0], Ref):
            continue
        scan = graph.node(n.args[0].name) if graph.has_node(n.args[0].name) else None
        if scan is None or scan.target not in ("aten.cumsum.default", "aten.cumprod.default"):
            continue
        if scan.kwarg("dtype") is not None or not isinstance(scan.args[0], Ref):
            continue
        inner = graph.node(scan.args[0].name) if graph.has_node(scan.args[0].name) else None
        if inner is None or inner.target != "aten.flip.default":
            continue
        rank = scan.out.rank
        d = int(scan.args[1]) % rank  # type: ignore[arg-type]
        dims_outer = tuple(int(x) % rank for x in n.args[1])  # type: ignore[union-attr,arg-type]
        dims_inner = tuple(int(x) % rank for x in inner.args[1])  # type: ignore[union-attr,arg-type]
        if dims_outer != (d,) or dims_inner != (d,):
            continue
        if len(users[scan.name]) != 1 or len(users[inner.name]) != 1:
            continue
        kind = "sum" if scan.target == "aten.cumsum.default" else "prod"
        replace[n.name] = Node(
            n.name, "call", "kw.scan", (inner.args[0], d, kind, True), (), n.meta
        )
        drop.update({scan.name, inner.name})
    if not replace:
        return graph
    nodes = tuple(replace.get(n.name, n) for n in graph.nodes if n.name not in drop)
    return graph.replace(nodes)


SCAN_KINDS = {"aten.cumsum.default": "sum", "aten.cumprod.default": "prod"}
NEUTRAL = {"sum": 0, "prod": 1}
# constant tensors: (target, position of the fill value; None: the value is in the name)
FILLS = {
    "aten.full_like.default": 1,
    "aten.full.default": 1,
    "aten.zeros_like.default": None,
    "aten.ones_like.default": None,
    "aten.new_zeros.default": None,
    "aten.new_ones.default": None,
}
FILL_VALUES = {"aten.zeros_like.default": 0, "aten.ones_like.default": 1,
               "aten.new_zeros.default": 0, "aten.new_ones.default": 1}


def exclusive_scans(graph: OpGraph) -> OpGraph:
    """An exclusive scan (each position gets the scan of the positions before it) written as a
    scan of a shifted tensor becomes ``kw.scan(x, d, kind, False, True)``:

        cat([fill, cumsum(x[..., :n-1], d)], d)        fill: the neutral value, extent 1 along d
        cumsum(pad(x, (1, 0) along d, neutral)[..., :n], d)

    (and cumprod with 1). Every intermediate must have no other reader."""
    users = graph.users()
    outputs = set(graph.output_names())
    replace: dict[str, Node] = {}
    drop: set[str] = set()

    def only_for(name: str) -> bool:  # read once, and not a forward output
        return len(users.get(name, [])) == 1 and name not in outputs

    for n in graph.nodes:
        found = _exclusive_of_cat(graph, n, only_for) or _exclusive_of_pad(graph, n, only_for)
        if found is None:
            continue
        x, d, kind, dead = found
        replace[n.name] = Node(n.name, "call", "kw.scan", (x, d, kind, False, True), (), n.meta)
        drop.update(dead)
    if not replace:
        return graph
    nodes = tuple(replace.get(n.name, n) for n in graph.nodes if n.name not in drop)
    return graph.replace(nodes).pruned()


def _scan_of(graph: OpGraph, a: Arg) -> tuple[Node, str] | None:
    """The plain cumsum/cumprod node ``a`` names, and its kind."""
    node = graph.node(a.name) if isinstance(a, Ref) and graph.has_node(a.name) else None
    if node is None or node.target not in SCAN_KINDS or node.kwarg("dtype") is not None:
        return None
    return node, SCAN_KINDS[node.target]


def _exclusive_of_cat(
    graph: OpGraph, n: Node, only_for: Callable[[str], bool]
) -> tuple[Ref, int, str, set[str]] | None:
    """``cat([fill, scan(x[:n-1])], d)``: (x, d, kind, nodes it replaces)."""
    if n.target != "aten.cat.default" or not n.meta:
        return None
    pieces = n.args[0]
    if not isinstance(pieces, tuple) or len(pieces) != 2:
        return None
    fill_ref, scan_ref = pieces
    scanned = _scan_of(graph, scan_ref)
    if scanned is None or not isinstance(fill_ref, Ref) or not graph.has_node(fill_ref.name):
        return None
    scan, kind = scanned
    rank = n.out.rank
    d = int(n.args[1]) % rank if len(n.args) > 1 else 0  # type: ignore[arg-type]
    src = scan.args[0]
    head = graph.node(src.name) if isinstance(src, Ref) and graph.has_node(src.name) else None
    if head is None or int(scan.args[1]) % rank != d or not only_for(scan.name):  # type: ignore[arg-type]
        return None
    x = _prefix_source(graph, head, d, only_for)
    if x is None or graph.meta(x.name).shape != n.out.shape:
        return None  # the pieces fill exactly x's shape, so the scan read x[:n-1]
    fill = graph.node(fill_ref.name)
    ones_at_d = tuple("1" if i == d else s for i, s in enumerate(n.out.shape))
    if fill.out.shape != ones_at_d or _fill_value(fill) != NEUTRAL[kind]:
        return None
    return x, d, kind, {scan.name, head.name}


def _exclusive_of_pad(
    graph: OpGraph, n: Node, only_for: Callable[[str], bool]
) -> tuple[Ref, int, str, set[str]] | None:
    """``scan(pad(x, 1 before along d, neutral)[:n])``: (x, d, kind, nodes it replaces)."""
    scanned = _scan_of(graph, Ref(n.name))
    if scanned is None or not n.meta:
        return None
    _, kind = scanned
    rank = n.out.rank
    d = int(n.args[1]) % rank  # type: ignore[arg-type]
    src = n.args[0]
    if not isinstance(src, Ref) or not graph.has_node(src.name):
        return None
    chain: set[str] = set()
    node = graph.node(src.name)
    while node.target == "aten.slice.Tensor" and _takes_prefix(node) and only_for(node.name):
        chain.add(node.name)
        inner = node.args[0]
        if not isinstance(inner, Ref) or not graph.has_node(inner.name):
            return None
        node = graph.node(inner.name)
    if not chain or node.target != "aten.constant_pad_nd.default" or not only_for(node.name):
        return None
    x, pads = node.args[0], node.args[1]
    value = node.args[2] if len(node.args) > 2 else node.kwarg("value", 0)
    want = [0] * (2 * rank)
    want[2 * (rank - 1 - d)] = 1  # pads list the last dimension first, (before, after) each
    if not isinstance(x, Ref) or value != NEUTRAL[kind] or not isinstance(pads, tuple):
        return None
    if list(pads) + [0] * (2 * rank - len(pads)) != want:
        return None
    if graph.meta(src.name).shape != graph.meta(x.name).shape:
        return None  # prefixes of the padded tensor as long as x: x moved one step along d
    return x, d, kind, chain | {node.name}


def _prefix_source(
    graph: OpGraph, head: Node, d: int, only_for: Callable[[str], bool]
) -> Ref | None:
    """The tensor ``head`` takes a prefix of along ``d`` (``x[..., :k]``), when it does."""
    if head.target != "aten.slice.Tensor" or not _takes_prefix(head) or not only_for(head.name):
        return None
    x = head.args[0]
    rank = head.out.rank
    if not isinstance(x, Ref) or int(head.args[1]) % rank != d:  # type: ignore[arg-type]
        return None
    return x


def _takes_prefix(node: Node) -> bool:
    """``aten.slice.Tensor(x, dim, 0, end[, 1])``: a prefix along ``dim``."""
    start = node.args[2] if len(node.args) > 2 else node.kwarg("start", 0)
    step = node.args[4] if len(node.args) > 4 else node.kwarg("step", 1)
    return start in (0, None) and step == 1


def _fill_value(node: Node) -> object:
    """The constant a fill node writes (None when ``node`` is no fill)."""
    if node.target not in FILLS:
        return None
    at = FILLS[node.target]
    if at is None:
        return FILL_VALUES[node.target]
    return node.args[at] if len(node.args) > at else node.kwarg("fill_value")
