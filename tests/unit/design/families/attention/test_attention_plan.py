"""The attention family without running a kernel: capture keeps SDPA one node, fusion gives it
an attention group, the skills' conditions choose the template by head dim and refuse what it
cannot do (with the reason), and a refused node runs in PyTorch."""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import forward_task, write_task

from kernelwright.design.capture import capture_path
from kernelwright.design.fusion import fuse
from kernelwright.design.lower import lower
from kernelwright.design.structures import group_options
from kernelwright.skills.library import SkillLibrary

pytest.importorskip("torch")


def options(tmp: Path, call: str, inputs: str, params: str = "q, k, v"):  # type: ignore[no-untyped-def]
    body = forward_task(f"return F.scaled_dot_product_attention({call})", inputs, "[]", params)
    part = fuse(lower(capture_path(write_task(tmp, body), "small")))
    (group,) = [g for g in part.groups if g.kind == "attention"]
    return group_options(part, group, SkillLibrary.builtin())


QKV = "torch.randn(1, 2, 9, {d}), torch.randn(1, 2, 9, {d}), torch.randn(1, 2, 9, {d})"


@pytest.mark.parametrize(
    ("d", "skill"),
    [(48, "attention-flash"), (128, "attention-flash"), (192, "attention-flash-wide")],
)
def test_the_head_dim_chooses_the_template(tmp_path: Path, d: int, skill: str) -> None:
    go = options(tmp_path, "q, k, v, is_causal=True", QKV.format(d=d))
    assert [o.choice.skill for o in go.options] == [skill]
    assert go.facts.attention is not None and go.facts.attention.causal


@pytest.mark.parametrize(
    ("call", "inputs", "params", "reason"),
    [
        # a masked one (an unmasked fp32 one is written out as two products: lowering)
        ("q, k, v, attn_mask=m", QKV.format(d=320) + ", torch.rand(9, 9) > 0.5", "q, k, v, m",
         "head dim 320 > 256"),
        ("q, k, v, dropout_p=0.1", QKV.format(d=16), "q, k, v", "dropout_p = 0.1"),
        (
            "q, k, v",
            "torch.randn(2, 9, 16), torch.randn(2, 9, 16), torch.randn(2, 9, 16)",
            "q, k, v",
            "operands of rank 3",
        ),
    ],
    ids=["head-dim", "dropout", "rank-3"],
)
def test_what_the_template_cannot_do_is_refused_with_the_reason(
    tmp_path: Path, call: str, inputs: str, params: str, reason: str
) -> None:
    go = options(tmp_path, call, inputs, params)
    assert go.options == []
    assert any(reason in " ".join(why) for _, why in go.skipped), go.skipped


def test_a_decode_step_ranks_the_decode_template_first(tmp_path: Path) -> None:
    """One query a head: the decode template first, the flash one still an option (the harness
    decides); five queries a head refuse the decode template, with the reason."""
    kv = "torch.randn(1, 2, 300, 48), torch.randn(1, 2, 300, 48)"
    decode = options(tmp_path, "q, k, v", f"torch.randn(1, 2, 1, 48), {kv}")
    assert [o.choice.skill for o in decode.options] == ["attention-decode", "attention-flash"]
    assert decode.options[0].choice.variant == "decode"
    few = options(tmp_path, "q, k, v", f"torch.randn(1, 2, 5, 48), {kv}")
    assert [o.choice.skill for o in few.options] == ["attention-flash"]
    assert any("5 queries a head > 4" in " ".join(why) for _, why in few.skipped)


def test_wide_fp32_scores_take_one_key_loop_under_every_policy():
    """Past head dim 64 fp32 scores (3xTF32) take one masked key loop (two spill at sm_90);
    the scores keep fp32 accuracy by default under tf32 too, so the rule is the same (TF32
    scores, a tuning move for a written-out attention, leave room for both loops)."""
    from kernelwright.design.families.attention.defaults import attention_flash
    from kernelwright.skills.conditions import AttentionShape, GroupFacts

    def defaults(precision: str, d: int = 96) -> dict[str, int]:
        shape = AttentionShape(batch=128, heads=8, m=512, n=512, d=d, dv=d, kv_heads=8,
                               mask="bool")
        facts = GroupFacts(kind="attention", dtypes=("bool", "float32"), precision=precision,
                           attention=shape)
        return attention_flash(facts)

    for precision in ("fp32", "tf32"):
        wide = defaults(precision)
        assert (wide["SPLIT_KEYS"], wide["TF32_SCORES"]) == (0, 0)
        assert defaults(precision, d=64)["SPLIT_KEYS"] == 1
