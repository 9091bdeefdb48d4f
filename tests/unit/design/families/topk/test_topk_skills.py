"""The top-k skill: when its rounds hold, and its defaults."""

from __future__ import annotations

from dataclasses import replace

from kernelwright.skills import SkillLibrary
from kernelwright.skills.conditions import GroupFacts


def facts(**kw: object) -> GroupFacts:
    base: dict[str, object] = dict(kind="select", schedule="row", parallel_length=4096)
    return GroupFacts(**{**base, **kw})  # type: ignore[arg-type]


def test_topk_rounds_hold_for_small_k_and_rows_that_fit() -> None:
    lib = SkillLibrary.builtin()
    moe = facts(kind="select", domain=(1782576, 128), reduced_length=128, k=8)
    (ok,) = lib.assess(moe)
    assert ok.skill.id == "topk-rounds" and ok.ok
    assert "top-8 <= 16" in " ".join(ok.reasons)
    # a row of 128 in one warp: 16 rows x 128 over 4 warps, 16 elements per thread
    assert lib.defaults(ok.skill, moe) == {"ROWS": 16, "TILE": 2048, "WARPS": 4}
    (big,) = lib.assess(replace(moe, k=32, reduced_length=8192))
    assert not big.ok and len(big.reasons) == 2
    assert lib.defaults(big.skill, replace(moe, reduced_length=4096))["WARPS"] == 8
