"""Written-out attention (q @ k^T, a scale, a mask, softmax, @ v) becomes one
scaled_dot_product_attention node, read by the attention family as a captured one; look-alikes
and shapes SDPA cannot express leave the graph as it is. No kernel runs here (see
families/attention/test_attention_written_out.py for the numbers)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from design_checks import attention_task, captured, precision_rule, write_task

from kernelwright.design.capture import capture_path
from kernelwright.design.families.attention.spec import AttentionSpec, attention_spec
from kernelwright.design.fusion import Partition, fuse
from kernelwright.design.graph import OpGraph, Ref, graph_from_dict
from kernelwright.design.lower import lower
from kernelwright.design.recognise_attention import recognise_attention

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[3]
# batch 2, 3 heads, 13 queries and keys, head dim 20 (q, k, v inputs)
QKV = "torch.randn(2, 3, 13, 20), torch.randn(2, 3, 13, 20), torch.randn(2, 3, 13, 20)"
CAUSAL_FLOAT = "self.register_buffer('bias', torch.tril(torch.ones(24, 24)).view(1, 1, 24, 24))"
CAUSAL_BOOL = "self.register_buffer('keep', torch.ones(24, 24, dtype=torch.bool).tril())"
ADDITIVE = "self.register_buffer('bias', torch.randn(13, 13))"
PRODUCTS = ("aten.bmm.default", "aten._softmax.default")


def attention_graph(
    tmp: Path, forward: str, init: str = "", inputs: str = QKV, params: str = "q, k, v"
) -> OpGraph:
    """The attention task's graph at its small size (one capture a task text per process)."""
    return captured(write_task(tmp, attention_task(forward, inputs, init, params=params)))


def the_attention(graph: OpGraph) -> tuple[Partition, AttentionSpec]:
    """The partition of the rewritten graph and its one attention group's spec."""
    rewritten = recognise_attention(graph)
    assert not any(n.target in PRODUCTS for n in rewritten.nodes), "products or softmax left"
    part = fuse(lower(rewritten))
    (group,) = [g for g in part.groups if g.kind == "attention"]
    return part, attention_spec(part.graph, group)


def test_mingpt_attention_becomes_one_attention_node(tmp_path: Path) -> None:
    forward = (
        "T = q.size(-2)\n"
        "att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))\n"
        "att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))\n"
        "att = self.attn_dropout(F.softmax(att, dim=-1))\n"
        "return att @ v"
    )
    init = f"{CAUSAL_FLOAT}\nself.attn_dropout = nn.Dropout(0.1)"  # eval mode: a copy
    graph = attention_graph(tmp_path, forward, init)
    rewritten = recognise_attention(graph)
    assert graph_from_dict(rewritten.to_dict()) == rewritten  # the origin travels too
    part, spec = the_attention(graph)
    assert (spec.q, spec.k, spec.v) == ("q", "k", "v")
    assert spec.scale == pytest.approx(1 / math.sqrt(20), rel=1e-15)
    assert not spec.causal and spec.dropout == 0.0 and not spec.gqa
    # masked_fill(bias == 0, -inf): SDPA attends where the negated condition holds
    assert spec.mask is not None
    negation = part.graph.node(spec.mask)
    assert negation.target == "aten.logical_not.default"
    assert part.graph.node(negation.args[0].name).target == "aten.eq.Scalar"  # type: ignore[union-attr]
    origin = "recognised from written-out attention (scale 0.223607, boolean mask)"
    assert spec.node.origin == origin
    assert spec.written_out


@pytest.mark.parametrize("written", [True, False], ids=["written-out", "sdpa"])
def test_scores_keep_fp32_accuracy_unless_a_written_out_attention_asks_for_tf32(
    tmp_path: Path, written: bool
) -> None:
    """Where TF32 is allowed the values' product takes it; the scores keep fp32 accuracy by
    default (TF32 scores rounding otherwise than the task's own missed it on scaled inputs),
    and TF32_SCORES 1 gives them TF32 only where the task multiplies them itself."""
    from kernelwright.design.families.attention.launch import render_attention

    forward = (
        "return F.softmax(q @ k.transpose(-2, -1) / math.sqrt(20), dim=-1) @ v"
        if written
        else "return F.scaled_dot_product_attention(q, k, v)"
    )
    graph = attention_graph(tmp_path, forward)
    part = fuse(lower(recognise_attention(graph)))
    (group,) = [g for g in part.groups if g.kind == "attention"]
    assert attention_spec(part.graph, group).written_out is written

    def rule(params: dict[str, int]) -> str:
        source = render_attention(part.graph, group, "attn", "flash", params).wrapper
        lines = [x.strip() for x in source.splitlines()]
        return "\n".join(x for x in lines if x.startswith(("DOT_PRECISION =", "QK_PRECISION =")))

    # TF32 allowed: the values' product takes it; the scores' by default keep fp32 accuracy
    assert precision_rule(rule({}), allow_tf32=True) == ("tf32", "tf32x3")
    assert precision_rule(rule({}), allow_tf32=False) == ("tf32x3", "tf32x3")
    # asked for TF32 scores: taken where the task wrote the scores' product, not for SDPA
    asked = rule({"TF32_SCORES": 1})
    assert precision_rule(asked, allow_tf32=True) == ("tf32", "tf32" if written else "tf32x3")
    assert precision_rule(asked, allow_tf32=False) == ("tf32x3", "tf32x3")


@pytest.mark.parametrize(
    ("forward", "init", "scale", "mask"),
    [
        (
            "return F.softmax(q @ k.transpose(-2, -1) / math.sqrt(20), dim=-1) @ v",
            "",
            1 / math.sqrt(20),
            None,
        ),
        ("return torch.softmax(torch.matmul(q, k.transpose(-2, -1)), -1) @ v", "", 1.0, None),
        (
            "return F.softmax(q @ k.transpose(-2, -1) * 0.5 + self.bias, -1) @ v",
            ADDITIVE,
            0.5,
            "b_bias",
        ),
        (
            "T = q.size(-2)\n"
            "att = torch.where(self.keep[:T, :T], q @ k.transpose(-2, -1), float('-inf'))\n"
            "return F.softmax(att * 0.25, dim=-1) @ v",
            CAUSAL_BOOL,
            0.25,
            "slice_2",
        ),
    ],
    ids=["divide-by-sqrt-d", "no-scale-no-mask", "additive-mask", "causal-tril-then-scale"],
)
def test_variants_keep_their_scale_and_mask(
    tmp_path: Path, forward: str, init: str, scale: float, mask: str | None
) -> None:
    _, spec = the_attention(attention_graph(tmp_path, forward, init))
    assert (spec.q, spec.k, spec.v) == ("q", "k", "v")
    assert spec.scale == pytest.approx(scale, rel=1e-15)  # exactly 1.0 when none was written
    assert spec.mask == mask  # a bool mask marking where to attend is SDPA's mask itself


# heads flattened into the products' batch, the key transposed after flattening
FLATTENED = (
    "T, D = q.shape[-2:]\n"
    "s = q.reshape(-1, T, D) @ k.reshape(-1, T, D).transpose(1, 2)\n"
    "p = F.softmax(s.view(q.shape[:-1] + (T,)), -1)\n"
    "return (p.reshape(-1, T, T) @ v.reshape(-1, T, D)).view(q.shape)"
)


def test_heads_flattened_into_the_batch_are_read_back(tmp_path: Path) -> None:
    forward = "q, k, v = x.split(20, dim=-1)\n" + FLATTENED  # one (B, H, T) for q, k and v
    graph = attention_graph(tmp_path, forward, inputs="torch.randn(2, 3, 13, 60)", params="x")
    part, spec = the_attention(graph)
    assert [part.graph.node(x).target for x in (spec.q, spec.k, spec.v)] == ["getitem"] * 3
    assert spec.scale == 1.0


def test_keys_and_values_of_one_head_become_grouped_query_heads(tmp_path: Path) -> None:
    forward = "kv, vv = k[:, :1], v[:, :1]\nreturn F.softmax(q @ kv.transpose(-2, -1), -1) @ vv"
    _, spec = the_attention(attention_graph(tmp_path, forward))
    assert spec.gqa and spec.q == "q"


# 6 query heads on 2 key/value heads (q, k, v inputs)
GROUPED_QKV = "torch.randn(2, 6, 13, 20), torch.randn(2, 2, 11, 20), torch.randn(2, 2, 11, 20)"
# Hugging Face's repeat_kv, the group size read from the shapes as LLM code does
REPEAT_KV = (
    "def repeat_kv(x, n):\n"
    "    b, kv, s, d = x.shape\n"
    "    return x[:, :, None, :, :].expand(b, kv, n, s, d).reshape(b, kv * n, s, d)\n"
    "n = q.shape[1] // k.shape[1]\n"
)
GROUPED_ATTENTION = "return F.softmax(q @ kr.transpose(2, 3) / math.sqrt(20), -1) @ vr"


@pytest.mark.parametrize(
    "repeat",
    [
        REPEAT_KV + "kr, vr = repeat_kv(k, n), repeat_kv(v, n)\n",
        "kr, vr = k.repeat_interleave(3, dim=1), v.repeat_interleave(3, dim=1)\n",
    ],
    ids=["repeat-kv", "repeat-interleave"],
)
def test_keys_and_values_repeated_per_head_become_grouped_query_heads(
    tmp_path: Path, repeat: str
) -> None:
    """Head h of the repeated keys and values is head h // 3 of k and v: SDPA's enable_gqa
    order, so the attention reads k and v themselves and the copies are never made."""
    graph = attention_graph(tmp_path, repeat + GROUPED_ATTENTION, inputs=GROUPED_QKV)
    part, spec = the_attention(graph)
    assert (spec.q, spec.k, spec.v) == ("q", "k", "v")
    assert spec.gqa and spec.node.kwarg("enable_gqa") is True
    assert spec.scale == pytest.approx(1 / math.sqrt(20), rel=1e-15)
    copies = ("aten.clone.default", "aten.expand.default", "aten.repeat_interleave.self_int")
    assert not any(n.target in copies for n in part.graph.nodes)


def test_repeated_keys_given_transposed_are_transposed_back(tmp_path: Path) -> None:
    forward = REPEAT_KV.replace("k.shape", "kt.shape")
    forward += "return F.softmax(q @ repeat_kv(kt, n) * 0.3, -1) @ repeat_kv(v, n)"
    inputs = "torch.randn(2, 6, 13, 20), torch.randn(2, 2, 20, 11), torch.randn(2, 2, 11, 20)"
    graph = attention_graph(tmp_path, forward, inputs=inputs, params="q, kt, v")
    part, spec = the_attention(graph)
    assert spec.gqa and spec.v == "v"
    key = part.graph.node(spec.k)
    assert key.target == "aten.permute.default" and key.args == (Ref("kt"), (0, 1, 3, 2))
    assert part.graph.meta(spec.k).hint == (2, 2, 11, 20)


@pytest.mark.parametrize(
    ("repeat", "kv_heads"),
    [
        # tiled: head h is head h % 2, not SDPA's h // 3
        ("kr, vr = k.repeat(1, 3, 1, 1), v.repeat(1, 3, 1, 1)\n", 2),
        (
            "kr = k[:, None].expand(2, 3, 2, 11, 20).reshape(2, 6, 11, 20)\n"
            "vr = v[:, None].expand(2, 3, 2, 11, 20).reshape(2, 6, 11, 20)\n",
            2,
        ),
        # keys in groups of 3, values in groups of 2 (or of 6: one head for all)
        ("kr, vr = k[:, :2].repeat_interleave(3, dim=1), v.repeat_interleave(2, dim=1)\n", 3),
        ("kr, vr = k[:, :2].repeat_interleave(3, dim=1), v[:, :1].expand(2, 6, 11, 20)\n", 3),
    ],
    ids=["repeat-tiles-heads", "expand-tiles-heads", "groups-of-3-and-2", "groups-of-3-and-6"],
)
def test_heads_repeated_otherwise_are_attended_as_copies(
    tmp_path: Path, repeat: str, kv_heads: int
) -> None:
    """Keys and values repeated in another order, or in groups of two sizes: still one
    attention, over the (2, 6, ., .) repeated tensors as they are, without grouped heads."""
    inputs = GROUPED_QKV.replace("(2, 2,", f"(2, {kv_heads},")
    part, spec = the_attention(attention_graph(tmp_path, repeat + GROUPED_ATTENTION, inputs=inputs))
    assert not spec.gqa and spec.node.kwarg("enable_gqa") is None
    for x in (spec.k, spec.v):
        assert part.graph.has_node(x), x  # the repeated copy, not the input k or v
        assert part.graph.meta(x).hint[1] == 6


def test_keys_given_transposed_are_transposed_back(tmp_path: Path) -> None:
    inputs = "torch.randn(2, 3, 13, 20), torch.randn(2, 3, 20, 11), torch.randn(2, 3, 11, 20)"
    forward = "return F.softmax(q @ kt * 0.3, -1) @ v"
    graph = attention_graph(tmp_path, forward, inputs=inputs, params="q, kt, v")
    part, spec = the_attention(graph)
    key = part.graph.node(spec.k)
    assert key.target == "aten.permute.default" and key.args == (Ref("kt"), (0, 1, 3, 2))
    assert part.graph.meta(spec.k).hint == (2, 3, 11, 20)


SOFTMAX_OF_SCORES = "att = q @ k.transpose(-2, -1) * 0.2\n"


@pytest.mark.parametrize(
    ("forward", "init", "inputs"),
    [
        (SOFTMAX_OF_SCORES + "return F.relu(att) @ v", "", QKV),
        (SOFTMAX_OF_SCORES + "return F.softmax(att, dim=-2) @ v", "", QKV),
        (
            SOFTMAX_OF_SCORES + "return F.dropout(F.softmax(att, -1), 0.1, training=True) @ v",
            "",
            QKV,
        ),
        (SOFTMAX_OF_SCORES + "return (F.softmax(att, -1) @ v) * att.amax()", "", QKV),
        (SOFTMAX_OF_SCORES + "p = F.softmax(att, -1)\nreturn p @ v, p", "", QKV),
        (
            "return F.softmax(q @ k.transpose(-2, -1) * self.scale, -1) @ v",
            "self.scale = nn.Parameter(torch.tensor(0.2))",
            QKV,
        ),
        ("return F.softmax(q @ k.transpose(-2, -1) * -0.2, -1) @ v", "", QKV),
        (
            "att = (q @ k.transpose(-2, -1)).masked_fill(self.bias[:, :, :13, :13] == 0, -1e9)\n"
            "return F.softmax(att, -1) @ v",
            CAUSAL_FLOAT,
            QKV,
        ),
        ("return F.softmax((q @ k.transpose(-2, -1) + self.bias) * 0.2, -1) @ v", ADDITIVE, QKV),
        (
            # the keys and values hold (3, 2) leading dims, the queries (2, 3): both flatten to 6
            # batches, but SDPA would pair other heads (or fail to broadcast)
            FLATTENED,
            "",
            "torch.randn(2, 3, 13, 20), torch.randn(3, 2, 13, 20), torch.randn(3, 2, 13, 20)",
        ),
    ],
    ids=[
        "relu-for-softmax",
        "softmax-over-queries",
        "dropout-in-training",
        "scores-read-twice",
        "weights-returned",
        "parameter-scale",
        "negative-scale",
        "fill-not-minus-inf",
        "scale-after-additive-mask",
        "other-batch-dims",
    ],
)
def test_look_alikes_leave_the_graph_unchanged(
    tmp_path: Path, forward: str, init: str, inputs: str
) -> None:
    graph = attention_graph(tmp_path, forward, init, inputs)
    assert sum(n.target == "aten.bmm.default" for n in graph.nodes) == 2  # the two products
    assert recognise_attention(graph) is graph


def test_heads_flattened_throughout_are_attended_as_one_batch(tmp_path: Path) -> None:
    """(B*H, L, D) operands (nn.MultiheadAttention's math), the query scaled before the product:
    one (1, B*H, L, D) attention, the query's scale its own, the result regrouped back."""
    forward = "return torch.bmm(F.softmax(torch.bmm(q * 0.5, k.transpose(1, 2)), -1), v)"
    inputs = "torch.randn(3, 13, 20), torch.randn(3, 11, 20), torch.randn(3, 11, 12)"
    graph = recognise_attention(attention_graph(tmp_path, forward, "", inputs))
    part, spec = the_attention(graph)
    assert spec.scale == 0.5
    for x, source in ((spec.q, "q"), (spec.v, "v")):
        node = part.graph.node(x)
        assert node.target == "aten.unsqueeze.default" and node.args == (Ref(source), 0)
    assert part.graph.meta(spec.q).hint == (1, 3, 13, 20)
    (out,) = graph.output_names()
    assert graph.meta(out).hint == (3, 13, 12)
    assert not any(n.target == "aten.mul.Tensor" for n in graph.nodes)  # the scale moved in


def test_a_scaled_query_read_elsewhere_keeps_its_multiply(tmp_path: Path) -> None:
    forward = "qs = q * 0.5\nreturn F.softmax(qs @ k.transpose(-2, -1), -1) @ v, qs.sum()"
    part, spec = the_attention(attention_graph(tmp_path, forward))
    assert spec.scale == 1.0 and part.graph.node(spec.q).target == "aten.mul.Tensor"


def test_kernelbench_vision_attention_plans_one_attention_group() -> None:
    task = ROOT / "kernelbench" / "level3" / "31_VisionAttention.py"
    part = fuse(lower(recognise_attention(capture_path(task, "full"))))
    (group,) = [g for g in part.groups if g.kind == "attention"]
    spec = attention_spec(part.graph, group)
    assert spec.scale == pytest.approx(1 / math.sqrt(32)) and spec.mask is None


# the look-alike relu-for-softmax (a ReLU where the softmax goes) takes the same refusal
@pytest.mark.slow
def test_kernelbench_relu_self_attention_is_left_alone() -> None:
    task = ROOT / "kernelbench" / "level3" / "50_ReLUSelfAttention.py"
    graph = capture_path(task, "full")
    assert recognise_attention(graph) is graph


def test_kernelbench_mingpt_block_plans_one_attention_group() -> None:
    task = ROOT / "kernelbench" / "level3" / "44_MiniGPTBlock.py"
    part = fuse(lower(recognise_attention(capture_path(task, "full"))))
    kinds = [g.kind for g in part.groups]
    assert kinds.count("attention") == 1 and "reduction" in kinds  # the layer norms stay
    (group,) = [g for g in part.groups if g.kind == "attention"]
    spec = attention_spec(part.graph, group)
    assert spec.scale == pytest.approx(1 / math.sqrt(96)) and spec.mask is not None
