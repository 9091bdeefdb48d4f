"""Conditions of the element-wise skills: how the operands index the domain."""

from __future__ import annotations

from kernelwright.skills.base import Fail, Ok, Outcome
from kernelwright.skills.conditions import GroupFacts, condition


@condition("contiguous_operands")
def contiguous_operands(f: GroupFacts) -> Outcome:
    if f.flat:
        return Ok(
            "every operand is contiguous over the whole domain -> one flat index, vector loads"
        )
    return Fail("an operand broadcasts or is strided: a flat index would divide per element")


@condition("broadcast_operands")
def broadcast_operands(f: GroupFacts) -> Outcome:
    if not f.flat:
        return Ok("an operand broadcasts over leading dimensions -> rows x contiguous columns")
    return Fail("no operand broadcasts")
