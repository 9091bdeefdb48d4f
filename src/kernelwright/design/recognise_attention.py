"""Recognise attention written out as two products around a softmax and replace it with one
``scaled_dot_product_attention`` node, the node capture keeps whole for
``F.scaled_dot_product_attention``: the attention family renders it as one flash kernel, so the
``M x N`` scores never reach memory.

    s = q @ k^T               bmm of (B*H, M, D) and (B*H, D, N) regroupings of (B, H, ., .)
                              tensors (how torch.export spells matmul: views, expands, copies;
                              k transposed before or after its heads are flattened), or of
                              (B*H, ., .) tensors themselves (nn.MultiheadAttention's math),
                              attended as (1, B*H, ., .)
    q = q * c  or  q / c      optional, before the product, c as below       -> scale c
    s = s * c  or  s / c      optional, c a positive finite literal          -> scale c (else 1)
    s = masked_fill(s, m, -inf)  or  where(m, -inf, s)                      -> attn_mask = ~m
        where(m, s, -inf)                                                    -> attn_mask = m
        s + bias              bias floating, in the scores' dtype            -> attn_mask = bias
    p = softmax(s, -1)
    p = dropout(p)            in eval mode or with p = 0 (a copy)
    out = p @ v               bmm, reshaped back to (B, H, M, Dv)
      -> out = scaled_dot_product_attention(q, k, v, attn_mask, scale=c[, enable_gqa=True])

A scale may come before or after a boolean mask (-inf times a positive scale stays -inf), but
only before an additive one (after it, the mask would be scaled too).

Keys and values whose H heads repeat KV heads in groups of consecutive heads (head h is head
h // (H / KV), the order of SDPA's ``enable_gqa``) become grouped-query attention on the KV
heads themselves, so the repeated copies are never made:

    x[:, :1] expanded to the H heads                    one key/value head
    x[:, :, None].expand(B, KV, n, S, D)                KV heads in groups of n (Hugging Face's
        .reshape(B, KV * n, S, D)                       repeat_kv)
    x.repeat_interleave(n, dim=1)                       the same, as torch.export captures it

keys and values in groups of one size. Keys or values repeated another way (``x.repeat(1, n,
1, 1)`` tiles the heads: head h is head h % KV), or in groups of two sizes, are attended as the
(B, H, ., .) tensors they are: the copies first, then one attention over them.

Anything else leaves the graph as it is, so the rewrite never changes what is computed:
another op between the products (a ReLU in place of the softmax, a second mask, a fill other
than -inf, dropout in training mode), a scale that is no literal or not positive, a softmax over
another dimension, an intermediate value read elsewhere (the scores, the softmax's output: it
would still have to be computed), operands whose leading dimensions are not the output's (a
product of reshapes that pairs other heads).

A row whose keys are all masked out: the written-out softmax gives NaN, SDPA gives 0 (the
flash kernel, torch's math backend) or NaN (other torch backends). Nothing here treats such
rows specially: the harness compares every candidate with the task's own Model, so a task whose
masks empty whole rows fails that check. A causal (lower-triangular) mask never empties a row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from kernelwright.design.aten import SDPA
from kernelwright.design.builder import meta_like, meta_swapped
from kernelwright.design.graph import Arg, Node, OpGraph, Ref, TensorMeta

# The origin of an attention node built from a written-out attention (its first words)
WRITTEN_OUT = "recognised from written-out attention"

BMM = "aten.bmm.default"
SOFTMAX = "aten._softmax.default"
EXPAND = "aten.expand.default"
# Ops that only regroup the leading dimensions (callers check that the last two stay)
RESHAPES = frozenset(
    {
        "aten.view.default",
        "aten._unsafe_view.default",
        "aten.reshape.default",
        "aten.unsqueeze.default",
        "aten.squeeze.dim",
        "aten.squeeze.dims",
    }
)
# Ops whose result holds the input's values (dropout in eval mode or with p = 0 is a clone)
COPIES = frozenset({"aten.clone.default", "aten.alias.default"})
# Scaling by a literal: target -> whether it divides
SCALES = {
    "aten.mul.Tensor": False,
    "aten.mul.Scalar": False,
    "aten.div.Tensor": True,
    "aten.div.Scalar": True,
}
# Rank-0 constants a -inf fill may be spelled with: target -> position of the value
CONSTANT_VALUES = {"aten.scalar_tensor.default": 0, "aten.full.default": 1}
TRANSPOSE_LAST = (0, 1, 3, 2)


def recognise_attention(graph: OpGraph) -> OpGraph:
    """``graph`` with every written-out attention replaced by one attention node (see the module
    docstring); ``graph`` itself when it holds none."""
    users = graph.users()
    outputs = set(graph.output_names())
    found: dict[str, _Attention] = {}
    for n in graph.nodes:
        if n.target == BMM:
            match = _match(graph, users, outputs, n)
            if match is not None:
                found[match.out.name] = match
    if not found:
        return graph
    taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
    nodes: list[Node] = []
    for n in graph.nodes:
        match = found.get(n.name)
        nodes.extend(_attention_nodes(graph, match, taken) if match is not None else (n,))
    return graph.replace(tuple(nodes)).pruned()


@dataclass(frozen=True, slots=True)
class _Mask:
    """What SDPA's ``attn_mask`` becomes: ``value`` itself (bool: True attends; floating: added
    to the scaled scores), or for ``negate`` its negation (``value`` marks the -inf fills)."""

    value: Ref
    meta: TensorMeta
    negate: bool = False

    @property
    def additive(self) -> bool:
        return self.meta.dtype != "bool"


@dataclass(frozen=True, slots=True)
class _Scores:
    """The steps between the first product and the softmax, walked back from the softmax."""

    first: Node  # the bmm computing q @ k^T
    scale: float
    mask: _Mask | None
    steps: tuple[str, ...]  # in execution order, for the rendered file
    interior: tuple[str, ...]  # the values computed on the way


@dataclass(frozen=True, slots=True)
class _Grouped:
    """Key or value heads that a (B, H, ., .) operand reads in groups of consecutive heads."""

    heads: Ref  # (B, KV, ., .)
    size: str  # H / KV, as the graph spells it
    swapped: bool  # ``heads`` hold the operand SDPA reads with its last two dimensions exchanged


@dataclass(frozen=True, slots=True)
class _Attention:
    """One match: SDPA's operands and the node whose value it replaces."""

    q: Ref
    k: Ref
    k_transposed: bool  # k holds (B, H, D, N): SDPA reads its transpose
    v: Ref
    mask: _Mask | None
    scale: float
    gqa: bool
    out: Node
    steps: tuple[str, ...]
    flat: bool = False  # (B*H, ., .) operands and result, attended as (1, B*H, ., .)


def _match(
    graph: OpGraph, users: dict[str, list[str]], outputs: set[str], product: Node
) -> _Attention | None:
    """The attention whose second product (``p @ v``) is ``product``, or None."""
    interior: list[str] = []  # values computed only on the way from q @ k^T to the output
    out = _reshaped_result(graph, users, outputs, product, interior)
    flat = out is None
    if out is None:  # heads flattened throughout: the product is the result
        interior = []
        out = product
    lead = out.out.shape[: out.out.rank - 2]
    softmax = _source(graph, product.args[0], interior)
    if softmax is None or not _last_dim_softmax(softmax, lead):
        return None
    interior.append(softmax.name)
    scores = _scores(graph, softmax.args[0], lead, scaled_after=False, masked=False)
    if scores is None:
        return None
    interior.extend(scores.interior)
    if any(len(users[x]) != 1 or x in outputs for x in interior):
        return None  # an intermediate value is read elsewhere: it must still be computed
    q = _operand(graph, scores.first.args[0], lead)
    k = _keys(graph, scores.first.args[1], lead)
    v = _operand(graph, product.args[1], lead)
    if q is None or k is None or v is None:
        return None
    query, scale, steps = q[0], scores.scale, scores.steps
    scaled_q = _producer(graph, query)
    folded = _scaled(graph, scaled_q) if scaled_q is not None else None
    alone = scaled_q is not None and len(users[scaled_q.name]) == 1 and scaled_q.name not in outputs
    if folded is not None and isinstance(unscaled := folded[1], Ref) and alone:
        # (c q) k^T = c (q k^T): the query's scale is the attention's
        factor = folded[0]
        query, scale, steps = unscaled, scale * factor, (f"query scaled {factor:.6g}", *steps)
    key, value, gqa = k[0], v[0], False
    grouped_k, grouped_v = k[1], v[1]
    if grouped_k is not None and grouped_v is not None and _sdpa_groups(grouped_k, grouped_v):
        # SDPA reads the fewer heads itself: the copies repeating them are never made
        key, value, gqa = (grouped_k.heads, grouped_k.swapped), grouped_v.heads, True
    return _Attention(query, *key, value, scores.mask, scale, gqa, out, steps, flat)


def _sdpa_groups(keys: _Grouped, values: _Grouped) -> bool:
    """SDPA can read these as grouped-query heads: keys and values in groups of one size (so as
    many heads of each), the values' last two dimensions in their order."""
    return keys.size == values.size and not values.swapped


def _producer(graph: OpGraph, a: Arg) -> Node | None:
    return graph.node(a.name) if isinstance(a, Ref) and graph.has_node(a.name) else None


def _same_values(graph: OpGraph, node: Node) -> bool:
    """``node`` copies its input, regroups its leading dimensions or expands without
    broadcasting: indexed by (leading positions flattened, row, column), its values are its
    input's."""
    src = node.args[0] if node.args else None
    if not isinstance(src, Ref) or len(node.meta) != 1:
        return False
    before, after = graph.meta(src.name), node.out
    if min(before.rank, after.rank) < 2 or before.shape[-2:] != after.shape[-2:]:
        return False
    if before.dtype != after.dtype:
        return False
    if node.target == EXPAND:
        return before.shape == after.shape
    return node.target in RESHAPES or node.target in COPIES


def _source(graph: OpGraph, a: Arg, interior: list[str]) -> Node | None:
    """The node computing ``a``, looking through copies and regroupings of the leading
    dimensions (each recorded in ``interior``)."""
    node = _producer(graph, a)
    while node is not None and _same_values(graph, node):
        interior.append(node.name)
        node = _producer(graph, node.args[0])
    return node


def _reshaped_result(
    graph: OpGraph,
    users: dict[str, list[str]],
    outputs: set[str],
    product: Node,
    interior: list[str],
) -> Node | None:
    """The (B, H, M, Dv) value a (B*H, M, Dv) product is regrouped into, through values read by
    nothing else; None when the product is read another way."""
    node = product
    while node.out.rank != 4:
        readers = users.get(node.name, [])
        if len(readers) != 1 or node.name in outputs:
            return None
        interior.append(node.name)
        node = graph.node(readers[0])
        if node.args[:1] != (Ref(interior[-1]),) or not _same_values(graph, node):
            return None
    return node if node is not product else None


def _last_dim_softmax(node: Node, lead: Sequence[str]) -> bool:
    """A softmax over the keys (the last dimension) of (B, H, M, N) scores (``lead``: (B, H),
    or (B*H,) for flattened heads), in their dtype."""
    if node.target != SOFTMAX or len(node.args) != 3:
        return False
    dim, half_to_float = node.args[1], node.args[2]
    m = node.out
    rank = len(lead) + 2
    return (
        m.rank == rank
        and m.shape[: len(lead)] == tuple(lead)
        and isinstance(dim, int)
        and dim % rank == rank - 1
        and half_to_float is False
    )


def _scores(
    graph: OpGraph, a: Arg, lead: Sequence[str], scaled_after: bool, masked: bool
) -> _Scores | None:
    """The scaling and masking steps that lead from the first product to ``a``, walked back
    from ``a``; ``scaled_after``/``masked``: a scale or a mask was met after ``a``."""
    node = _producer(graph, a)
    if node is None or len(node.meta) != 1:
        return None
    scaled = _scaled(graph, node)
    if scaled is not None:
        factor, x = scaled
        rest = _scores(graph, x, lead, True, masked)
        if rest is None:
            return None
        step = f"scale {factor:.6g}"
        return _Scores(
            rest.first,
            rest.scale * factor,
            rest.mask,
            (*rest.steps, step),
            (*rest.interior, node.name),
        )
    readings = _masked(graph, node)
    if readings:
        for mask, x in readings:
            if masked or (mask.additive and scaled_after):
                continue  # a second mask; or a scale after an additive mask would scale it too
            rest = _scores(graph, x, lead, scaled_after, True)
            if rest is not None:
                step = "additive mask" if mask.additive else "boolean mask"
                return _Scores(
                    rest.first, rest.scale, mask, (*rest.steps, step), (*rest.interior, node.name)
                )
        return None
    interior: list[str] = []
    first = _source(graph, a, interior)
    if first is None or first.target != BMM or not isinstance(a, Ref):
        return None
    scores = graph.meta(a.name)
    if scores.rank != len(lead) + 2 or scores.shape[: len(lead)] != tuple(lead):
        return None
    return _Scores(first, 1.0, None, (), (*interior, first.name))


def _scaled(graph: OpGraph, node: Node) -> tuple[float, Arg] | None:
    """(factor, scores) of a multiplication or division of the scores by a positive finite
    literal; None for any other node."""
    divides = SCALES.get(node.target)
    if divides is None or len(node.args) != 2 or node.kwargs:
        return None
    x, c = node.args
    if not isinstance(x, Ref) or isinstance(c, bool) or not isinstance(c, int | float):
        return None
    if graph.meta(x.name).shape != node.out.shape or graph.meta(x.name).dtype != node.out.dtype:
        return None
    if not math.isfinite(c) or c <= 0:
        return None  # -inf * 0 is NaN; a negative scale turns -inf into +inf
    return (1.0 / c if divides else float(c)), x


def _masked(graph: OpGraph, node: Node) -> list[tuple[_Mask, Arg]]:
    """Each way ``node`` reads as a mask of the scores: (the SDPA mask, the scores)."""
    args = node.args
    if node.target == "aten.masked_fill.Scalar" and len(args) == 3:
        return _filled(graph, node, args[0], args[1], negate=True) if args[2] == -math.inf else []
    if node.target == "aten.where.self" and len(args) == 3:
        if _minus_inf(graph, args[1]):
            return _filled(graph, node, args[2], args[0], negate=True)
        if _minus_inf(graph, args[2]):
            return _filled(graph, node, args[1], args[0], negate=False)
        return []
    if node.target == "aten.add.Tensor" and len(args) == 2 and not node.kwargs:
        return [
            (_Mask(bias, graph.meta(bias.name)), scores)
            for scores, bias in ((args[0], args[1]), (args[1], args[0]))
            if isinstance(scores, Ref)
            and isinstance(bias, Ref)
            and _adds(graph, node, scores, bias)
        ]
    return []


def _adds(graph: OpGraph, node: Node, scores: Ref, bias: Ref) -> bool:
    """``scores + bias`` is an additive SDPA mask: the bias broadcasts to the scores (which keep
    their shape and dtype) and is floating in their dtype."""
    sm, bm = graph.meta(scores.name), graph.meta(bias.name)
    return (
        sm.shape == node.out.shape
        and sm.dtype == node.out.dtype
        and bm.is_float
        and bm.dtype == sm.dtype
        and bm.rank <= 4
    )


def _filled(
    graph: OpGraph, node: Node, scores: Arg, cond: Arg, negate: bool
) -> list[tuple[_Mask, Arg]]:
    """A -inf fill of ``scores`` where ``cond`` (``negate``) or where not: a boolean SDPA mask
    when the fill keeps the scores' shape and dtype."""
    if not isinstance(scores, Ref) or not isinstance(cond, Ref):
        return []
    sm, cm = graph.meta(scores.name), graph.meta(cond.name)
    keeps = (sm.shape, sm.dtype) == (node.out.shape, node.out.dtype)
    if cm.dtype != "bool" or cm.rank > 4 or not keeps:
        return []
    return [(_Mask(cond, cm, negate), scores)]


def _minus_inf(graph: OpGraph, a: Arg) -> bool:
    """``a`` is -inf: a literal, or a constant tensor of one element."""
    if a == -math.inf:
        return True
    node = _producer(graph, a)
    if node is None or node.target not in CONSTANT_VALUES or not node.meta or node.out.rank:
        return False
    position = CONSTANT_VALUES[node.target]
    return len(node.args) > position and node.args[position] == -math.inf


def _operand(graph: OpGraph, a: Arg, lead: Sequence[str]) -> tuple[Ref, _Grouped | None] | None:
    """The (B, H, R, C) tensor a (B*H, R, C) bmm operand regroups, and the (B, KV, ., .) one
    whose heads it reads in groups of H / KV (``_fewer_heads``); None when there is none. With
    flattened heads (``lead`` (B*H,)), the (B*H, R, C) operand itself."""
    full: Ref | None = None
    value = a
    while isinstance(value, Ref):
        meta = graph.meta(value.name)
        node = _producer(graph, value)
        if meta.rank == len(lead) + 2 and meta.shape[: len(lead)] == tuple(lead):
            full = value
            if len(lead) == 1:
                break  # flattened heads: nothing to regroup
            fewer = _fewer_heads(graph, value)
            if fewer is not None:
                return full, fewer
        if node is None or not _same_values(graph, node):
            break
        value = node.args[0]
    return (full, None) if full is not None else None


def _fewer_heads(graph: OpGraph, x: Ref) -> _Grouped | None:
    """The (B, KV, ., .) tensor whose heads ``x`` (B, H, ., .) holds in groups of H / KV
    consecutive heads (head h holds head h // (H / KV), SDPA's grouped-query order): one head
    expanded to all, or each head repeated by an expand and a reshape (``repeat_kv``,
    ``repeat_interleave``). An expand of the heads alone and an exchange of the last two
    dimensions are looked through, in that order; None for any other ``x``."""
    heads = graph.meta(x.name).shape[1]
    node = _producer(graph, x)
    if node is not None and node.target == EXPAND and _expands_heads_only(graph, node):
        x = _first_ref(node)
    node = _producer(graph, x)
    swapped = node is not None and _swaps_last_two(node)
    if node is not None and swapped:
        x = _first_ref(node)
    if graph.meta(x.name).shape[1] == "1":
        return _Grouped(x, heads, swapped) if heads != "1" else None
    repeated = _repeated_heads(graph, x)
    return _Grouped(repeated[0], repeated[1], swapped) if repeated is not None else None


def _first_ref(node: Node) -> Ref:
    """The tensor a view (an expand, a transpose) was taken of."""
    src = node.args[0]
    assert isinstance(src, Ref)
    return src


def _expands_heads_only(graph: OpGraph, node: Node) -> bool:
    """An expand of a (B, X, R, C) tensor to (B, H, R, C): every other dimension kept. X is H,
    or 1 (broadcast); any other size would fail to expand."""
    src = node.args[0]
    if not isinstance(src, Ref) or len(node.meta) != 1:
        return False
    before, after = graph.meta(src.name), node.out
    if before.rank != 4 or after.rank != 4 or before.dtype != after.dtype:
        return False
    return before.shape[0] == after.shape[0] and before.shape[2:] == after.shape[2:]


def _repeated_heads(graph: OpGraph, x: Ref) -> tuple[Ref, str] | None:
    """The (B, KV, R, C) tensor ``x`` (B, KV*n, R, C) repeats head by head (head h of ``x`` is
    its head h // n), and n: a (B, KV, 1, R, C) view expanded to (B, KV, n, R, C), then copied
    and reshaped into ``x``. Flattening (KV, n) in row-major order is what puts the n copies of
    a head next to each other; a tiling (``x.repeat``: head h is head h % KV) is no such chain."""
    shape = graph.meta(x.name).shape
    node = _producer(graph, x)
    while node is not None and node.target != EXPAND and _same_values(graph, node):
        node = _producer(graph, node.args[0])
    if node is None or node.target != EXPAND or node.out.rank != 5 or len(shape) != 4:
        return None
    batch, kv, n, rows, cols = node.out.shape
    src = node.args[0]
    if (shape[0], *shape[2:]) != (batch, rows, cols):
        return None  # the reshape regroups more than the heads and their copies
    if not isinstance(src, Ref) or graph.meta(src.name).shape != (batch, kv, "1", rows, cols):
        return None  # the expand broadcasts more than the new axis
    source = _view_of(graph, src, (batch, kv, rows, cols))
    return (source, n) if source is not None else None


def _view_of(graph: OpGraph, x: Ref, shape: tuple[str, ...]) -> Ref | None:
    """The earliest tensor of ``shape`` that ``x`` holds the values of in row-major order,
    through copies, reshapes and slices that keep everything; None when there is none."""
    found: Ref | None = None
    value: Arg = x
    while isinstance(value, Ref):
        if graph.meta(value.name).shape == shape:
            found = value
        node = _producer(graph, value)
        if node is None or not (_same_values(graph, node) or _slices_nothing(graph, node)):
            break
        value = node.args[0]
    return found


def _slices_nothing(graph: OpGraph, node: Node) -> bool:
    """A slice from 0 with step 1 that keeps the whole dimension (``x[:, :, None]`` spells
    these around its new axis)."""
    args = node.args
    if node.target != "aten.slice.Tensor" or len(node.meta) != 1 or len(args) < 3:
        return False
    src = args[0]
    step = args[4] if len(args) > 4 else 1
    if not isinstance(src, Ref) or args[2] not in (0, None) or step != 1:
        return False
    before = graph.meta(src.name)
    return (before.shape, before.dtype) == (node.out.shape, node.out.dtype)


def _keys(
    graph: OpGraph, a: Arg, lead: Sequence[str]
) -> tuple[tuple[Ref, bool], _Grouped | None] | None:
    """As ``_operand`` for q @ k^T's right operand ``a`` (B*H, D, N), the full keys paired with
    whether they still hold k^T (B, H, D, N) and need transposing (grouped keys: ``swapped``).
    The transpose is looked through where it was taken of the 4-D keys or of their (B*H, N, D)
    regrouping."""
    found = _operand(graph, a, lead)
    if found is not None:
        full, grouped = found
        # the operand holds k^T: fewer heads seen through a transpose are k itself
        if grouped is not None:
            grouped = replace(grouped, swapped=not grouped.swapped)
        return _untransposed(graph, full), grouped
    transpose = _source(graph, a, [])
    if transpose is None or not _swaps_last_two(transpose):
        return None
    found = _operand(graph, transpose.args[0], lead)
    if found is None:
        return None
    full, grouped = found
    return (full, False), grouped


def _untransposed(graph: OpGraph, kt: Ref) -> tuple[Ref, bool]:
    """(k, False) when ``kt`` is k with its last two dimensions exchanged; else (kt, True): the
    key has to be transposed."""
    node = _producer(graph, kt)
    if node is not None and isinstance(node.args[0], Ref) and _swaps_last_two(node):
        return node.args[0], False
    return kt, True


def _swaps_last_two(node: Node) -> bool:
    """``node`` is a permute or transpose that exchanges the last two dimensions only."""
    args = node.args
    if not node.meta or not args or not isinstance(args[0], Ref):
        return False
    rank = node.out.rank
    last_two = {rank - 2, rank - 1}
    if node.target == "aten.permute.default" and len(args) == 2 and isinstance(args[1], tuple):
        order = tuple(d % rank for d in args[1] if isinstance(d, int))
        return order == (*range(rank - 2), rank - 1, rank - 2)
    if node.target == "aten.transpose.int" and len(args) == 3:
        return {d % rank for d in args[1:3] if isinstance(d, int)} == last_two
    return False


def _attention_nodes(graph: OpGraph, a: _Attention, taken: set[str]) -> list[Node]:
    """The nodes replacing ``a.out``: the operands' views and the mask's negation where needed,
    then the attention node under ``a.out``'s name (with flattened heads, its regrouping back),
    so its readers are left as they are."""
    made: list[Node] = []

    def add(
        base: str,
        target: str,
        args: tuple[Arg, ...],
        meta: TensorMeta,
        kwargs: tuple[tuple[str, Arg], ...] = (),
        origin: str = "",
    ) -> Ref:
        name, k = base, 1
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        made.append(Node(name, "call", target, args, kwargs, (meta,), origin=origin))
        return Ref(name)

    def meta_of(x: Ref) -> TensorMeta:
        mine = [n.out for n in made if n.name == x.name]
        return mine[0] if mine else graph.meta(x.name)

    def heads(role: str, x: Ref) -> Ref:
        """(B*H, ., .) -> (1, B*H, ., .): a view."""
        meta = meta_unsqueezed(meta_of(x))
        return add(f"{a.out.name}_{role}", "aten.unsqueeze.default", (x, 0), meta)

    query, key, value = a.q, a.k, a.v
    if a.flat:
        query, key, value = heads("query", query), heads("keys", key), heads("values", value)
    if a.k_transposed:
        meta = meta_swapped(meta_of(key))
        key = add(f"{a.out.name}_key", "aten.permute.default", (key, TRANSPOSE_LAST), meta)
    args: tuple[Arg, ...] = (query, key, value)
    if a.mask is not None:
        mask = a.mask.value
        if a.mask.negate:  # SDPA attends where its boolean mask is True
            meta = meta_like(a.mask.meta)
            mask = add(f"{a.out.name}_attend", "aten.logical_not.default", (mask,), meta)
        if a.flat and a.mask.meta.rank == 3:  # a mask per flattened head
            mask = heads("mask", mask)
        args += (mask,)
    kwargs: tuple[tuple[str, Arg], ...] = (("scale", a.scale),)
    if a.gqa:
        kwargs += (("enable_gqa", True),)
    origin = WRITTEN_OUT + (
        f" ({', '.join(a.steps)})" if a.steps else ""
    )
    meta = meta_like(a.out.out)
    if not a.flat:
        made.append(Node(a.out.name, "call", SDPA, args, kwargs, (meta,), origin=origin))
        return made
    out = add(f"{a.out.name}_heads", SDPA, args, meta_unsqueezed(meta), kwargs, origin)
    made.append(Node(a.out.name, "call", "aten.squeeze.dims", (out, (0,)), (), (meta,)))
    return made


def meta_unsqueezed(m: TensorMeta) -> TensorMeta:
    """The metadata of ``m`` with a leading dimension of 1 (a view)."""
    return TensorMeta(("1", *m.shape), (1, *m.hint), (m.numel or 1, *m.strides), m.dtype)
