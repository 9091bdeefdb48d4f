"""Conditions of the attention skills: the operands, the head dims, the mask and dropout."""

from __future__ import annotations

from kernelwright.skills.base import Fail, Ok, Outcome
from kernelwright.skills.conditions import AttentionShape, GroupFacts, condition


def _shape(f: GroupFacts) -> AttentionShape:
    a = f.attention
    assert a is not None
    return a


@condition("attention_operands")
def attention_operands(f: GroupFacts) -> Outcome:
    """Floating (batch, heads, seq, dim) operands the template reads, no dropout."""
    a = _shape(f)
    if a.operands:
        return Fail(a.operands)
    bad = [d for d in f.dtypes if d not in ("float32", "float16", "bfloat16")]
    if bad:
        return Fail(f"{', '.join(bad)} operands: tl.dot takes fp32, bf16 and fp16 only")
    if a.dropout != 0.0:
        return Fail(f"dropout_p = {a.dropout}: the template has no dropout (inference only)")
    heads = f"{a.heads} heads" if a.kv_heads == a.heads else f"{a.heads}/{a.kv_heads} heads"
    return Ok(f"(B, H, seq, dim) operands ({heads}), no dropout, fp32 accumulation")


@condition("attention_mask_supported")
def attention_mask_supported(f: GroupFacts) -> Outcome:
    """No mask, or a boolean or additive one that broadcasts to (B, H, M, N)."""
    a = _shape(f)
    if a.mask.startswith("other"):
        return Fail(a.mask.removeprefix("other: "))
    what = {"": "no mask", "bool": "a boolean mask", "additive": "an additive mask"}[a.mask]
    return Ok(what + (", causal" if a.causal else ""))


@condition("head_dim_at_most")
def head_dim_at_most(f: GroupFacts, limit: int) -> Outcome:
    """Both head dims fit one block of the template (its accumulator's width)."""
    a = _shape(f)
    d = max(a.d, a.dv)
    if d <= limit:
        return Ok(f"head dim {d} <= {limit}: q, k and v rows each fit one block")
    return Fail(f"head dim {d} > {limit}: the output block would not fit in registers")


@condition("head_dim_above")
def head_dim_above(f: GroupFacts, limit: int) -> Outcome:
    """A head dim past ``limit``: a wider block needs smaller tiles."""
    a = _shape(f)
    d = max(a.d, a.dv)
    if d > limit:
        return Ok(f"head dim {d} > {limit}: smaller query and key blocks")
    return Fail(f"head dim {d} <= {limit}: the narrower template's tiles fit")


@condition("queries_at_most")
def queries_at_most(f: GroupFacts, limit: int) -> Outcome:
    """A few queries a (batch, head): a decode step, or a handful of speculative tokens."""
    a = _shape(f)
    if a.m <= limit:
        return Ok(f"{a.m} quer{'y' if a.m == 1 else 'ies'} a head <= {limit}: a decode step "
                  "streams the keys and values once")
    return Fail(f"{a.m} queries a head > {limit}: blocks of queries share each key block")
