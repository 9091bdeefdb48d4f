"""The element-wise skills: flat when every operand is contiguous, rows x columns when one
broadcasts."""

from __future__ import annotations

from kernelwright.skills import SkillLibrary
from kernelwright.skills.conditions import GroupFacts


def test_a_broadcast_operand_takes_rows_and_columns() -> None:
    lib = SkillLibrary.builtin()
    pw = GroupFacts("pointwise", domain=(3, 5, 7), flat=False)
    ids = {x.skill.id: x.ok for x in lib.assess(pw)}
    assert ids == {"elementwise-rows": True, "elementwise-flat": False}
    flat = {x.skill.id: x.ok for x in lib.assess(GroupFacts("pointwise", domain=(3, 5, 7)))}
    assert flat == {"elementwise-rows": False, "elementwise-flat": True}
