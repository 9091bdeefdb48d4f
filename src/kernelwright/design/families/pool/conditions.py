"""Conditions of the pooling skills: how the window template's loads fall on a warp."""

from __future__ import annotations

from math import gcd

from kernelwright.design.families.pool.template import VECTOR
from kernelwright.skills.base import Fail, Ok, Outcome
from kernelwright.skills.conditions import GroupFacts, condition


@condition("w_stride_spans_vectors")
def w_stride_spans_vectors(f: GroupFacts) -> Outcome:
    """The window template's chunk of ``V = 4 / gcd(stride, 4)`` outputs reads ``V * stride``
    inputs: one 16-byte vector for W strides 1, 2 and 4 (a warp's loads contiguous), several
    for any other stride (a warp's lanes that many vectors apart)."""
    if f.pool is None:
        return Fail("not a pooling")
    stride = f.pool.stride[-1]
    span = VECTOR // gcd(stride, VECTOR) * stride
    if span > VECTOR:
        return Ok(f"W stride {stride}: a window-template chunk spans {span // VECTOR} vectors, "
                  "so a warp's loads are strided")
    return Fail(f"W stride {stride}: the window template's loads are contiguous vectors")
