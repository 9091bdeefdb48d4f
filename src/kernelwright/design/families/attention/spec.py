"""What an attention group computes: one ``scaled_dot_product_attention`` node.

    out[b, h, i] = sum_j softmax_j(q[b, h, i] . k[b, g, j] * scale + mask[b, h, i, j]) v[b, g, j]

operands   query ``(B, H, M, D)``, key ``(B, Hk, N, D)``, value ``(B, Hk, N, Dv)``, any strides;
           ``g = h // (H // Hk)`` (grouped-query heads, ``enable_gqa``; else ``Hk == H``)
scale      ``scale`` or ``1 / sqrt(D)``
causal     ``is_causal``: query i sees keys 0..i (torch's top-left aligned lower triangle)
mask       none; boolean (True: attend) or additive (added to the scaled scores), of any shape
           broadcastable to ``(B, H, M, N)``
dropout    ``dropout_p`` must be 0 (inference)
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelwright.design.aten import SDPA
from kernelwright.design.fusion import Group
from kernelwright.design.graph import Arg, Node, OpGraph, Ref
from kernelwright.design.kernel.common import DesignError
from kernelwright.design.recognise_attention import WRITTEN_OUT
from kernelwright.skills.conditions import AttentionShape

# The schema's argument order after (query, key, value), with each argument's default
OPTIONS = (("attn_mask", None), ("dropout_p", 0.0), ("is_causal", False))


@dataclass(frozen=True, slots=True)
class AttentionSpec:
    """One attention group's node and its arguments (see the module docstring).

    Attributes:
        node: the ``scaled_dot_product_attention`` node.
        q, k, v: the operands' value names.
        mask: the mask's value name (None: no mask).
        causal: ``is_causal``.
        scale: the literal scale (None: ``1 / sqrt(D)`` from the runtime head dim).
        dropout: ``dropout_p``.
        gqa: ``enable_gqa``.
        written_out: the task multiplies the scores itself (a matrix product, a softmax and a
            second product, recognised as one attention) rather than calling SDPA.
    """

    node: Node
    q: str
    k: str
    v: str
    mask: str | None
    causal: bool
    scale: float | None
    dropout: float
    gqa: bool
    written_out: bool = False


def attention_spec(graph: OpGraph, group: Group) -> AttentionSpec:
    """The attention node of ``group`` and its arguments.

    Raises:
        DesignError: the group holds no attention node, or its operands are not tensors.
    """
    node = graph.node(group.nodes[0])
    if node.target != SDPA:
        raise DesignError(
            f"an attention group holds {node.target}, not scaled_dot_product_attention"
        )
    q, k, v = node.args[:3]
    if not (isinstance(q, Ref) and isinstance(k, Ref) and isinstance(v, Ref)):
        raise DesignError("scaled_dot_product_attention of non-tensor operands")
    opts = {
        name: node.args[3 + i] if len(node.args) > 3 + i else node.kwarg(name, default)
        for i, (name, default) in enumerate(OPTIONS)
    }
    mask = opts["attn_mask"]
    if mask is not None and not isinstance(mask, Ref):
        raise DesignError(f"an attention mask that is no tensor: {mask!r}")
    scale = node.kwarg("scale")
    return AttentionSpec(
        node,
        q.name,
        k.name,
        v.name,
        mask.name if isinstance(mask, Ref) else None,
        bool(opts["is_causal"]),
        float(scale) if isinstance(scale, int | float) else None,
        float(_number(opts["dropout_p"])),
        bool(node.kwarg("enable_gqa", False)),
        node.origin.startswith(WRITTEN_OUT),
    )


def attention_shape(graph: OpGraph, spec: AttentionSpec) -> AttentionShape:
    """The sizes and options at capture (the skills' conditions read them)."""
    qm, km, vm = graph.meta(spec.q), graph.meta(spec.k), graph.meta(spec.v)
    if (qm.rank, km.rank, vm.rank) != (4, 4, 4):
        ranks = f"{qm.rank}, {km.rank}, {vm.rank}"
        why = f"operands of rank {ranks}: the template reads (batch, heads, seq, dim)"
        return AttentionShape(1, 1, 1, 1, 1, 1, 1, operands=why)
    b, h, m, d = qm.hint
    kb, hk, n, kd = km.hint
    why = ""
    if (kb, kd) != (b, d) or vm.hint[:3] != (b, hk, n):
        why = f"query {qm.hint}, key {km.hint}, value {vm.hint} do not match"
    elif hk != h and not (spec.gqa and h % hk == 0):
        why = f"{h} query heads and {hk} key heads (grouped-query heads need enable_gqa)"
    return AttentionShape(
        b,
        h,
        m,
        n,
        d,
        vm.hint[-1],
        hk,
        causal=spec.causal,
        mask=_mask_kind(graph, spec, (b, h, m, n)),
        dropout=spec.dropout,
        operands=why,
    )


def _mask_kind(graph: OpGraph, spec: AttentionSpec, full: tuple[int, ...]) -> str:
    """``""``, ``"bool"`` or ``"additive"``; ``"other: why"`` for a mask the kernel cannot read."""
    if spec.mask is None:
        return ""
    meta = graph.meta(spec.mask)
    lead = full[: len(full) - meta.rank]
    if meta.rank > 4 or any(
        s not in (1, f) for s, f in zip(meta.hint, full[len(lead) :], strict=True)
    ):
        return f"other: a mask of shape {meta.hint} does not broadcast to {full}"
    if meta.dtype == "bool":
        return "bool"
    if meta.is_float:
        return "additive"
    return f"other: a {meta.dtype} mask"


def _number(a: Arg) -> float:
    return float(a) if isinstance(a, int | float) else float("nan")
