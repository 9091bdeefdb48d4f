"""Skill constraints that name a group's quantities (REDUCED, SMS...) restrict tuning at the
group's shapes: a team of more slices than SMs is never proposed (the wrapper would sweep each
row with the looped kernel, which is another structure)."""

from __future__ import annotations

from kernelwright.design.choices import Design, GroupChoice
from kernelwright.search.decisions import DecisionSpace
from kernelwright.search.tunable import DesignSpace
from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.library import SkillLibrary

LIB = SkillLibrary.builtin()


def _team(slice_: int) -> Design:
    choice = GroupChoice(group=0, kind="reduction", skill="row-team", variant="team",
                         params={"TEAM_SLICE": slice_, "TEAM_WARPS": slice_ // 2048})
    return Design((choice,), stage="structure")


def _slices(space: DesignSpace) -> set[int]:
    return {int(space.space.config(i)["g0_TEAM_SLICE"]) for i in range(len(space.space))}


def test_team_slices_that_outnumber_the_sms_are_left_out():
    long_rows = GroupFacts(kind="reduction", schedule="row", reduced_length=2_097_152,
                           parallel_length=896, sm_count=132)
    shapes = {0: long_rows.constraint_names()}
    space = DesignSpace.of(_team(16384), LIB, None, shapes)
    assert _slices(space) == {16384}  # 2 M / 8192 = 256 programs > 132 SMs
    shorter = {0: GroupFacts(kind="reduction", reduced_length=393_216, sm_count=132)
               .constraint_names()}
    assert _slices(DesignSpace.of(_team(8192), LIB, None, shorter)) == {4096, 8192, 16384}


def test_without_shapes_the_constraint_restricts_nothing():
    assert _slices(DesignSpace.of(_team(8192), LIB)) == {1024, 2048, 4096, 8192, 16384}


def test_parameter_moves_respect_the_shapes():
    facts = GroupFacts(kind="reduction", reduced_length=2_097_152, sm_count=132)
    space = DecisionSpace((_team(16384),), {0: (_team(16384).choices[0],)}, LIB,
                          lambda d: repr(d), {0: facts.constraint_names()})
    moved = {m.choices[0].params["TEAM_SLICE"] for m, _ in space.parameter_moves(_team(16384))}
    assert moved == {16384}  # only the warps move


def test_every_builtin_skills_tuned_parameters_make_a_space():
    """Each skill's tuned parameters, at their defaults' values, build a tuning space: a switch
    such as the decode template's DOT (0 or 1) is categorical, never a log scale, which 0 would
    break (the space refused to build, so optimize failed on every decode task)."""
    for skill in LIB:
        params = {p.name: p.values[0] for p in skill.params}
        choice = GroupChoice(group=0, kind=skill.applies_to, skill=skill.id,
                             variant=skill.variant, params=params)
        space = DesignSpace.of(Design((choice,), stage="structure"), LIB)
        assert len(space.space) >= 1, skill.id
    decode = GroupChoice(group=0, kind="attention", skill="attention-decode", variant="decode",
                         params={"BLOCK_N": 32, "ROWS": 4, "DOT": 1, "WARPS": 4,
                                 "SPLIT_PROGRAMS": 528})
    space = DesignSpace.of(Design((decode,), stage="structure"), LIB)
    assert {int(space.space.config(i)["g0_DOT"]) for i in range(len(space.space))} == {0, 1}


def test_attention_blocks_are_bounded_at_the_groups_head_dim_and_width():
    """Shared memory holds key and value blocks of the group's own head dim and dtype: bf16 at
    head dim 64 fits 128 x 128 blocks, fp32 at head dim 128 does not (ITEM, HEAD_DIM)."""
    from kernelwright.skills.conditions import AttentionShape

    flash = LIB.get("attention-flash")
    shape = AttentionShape(batch=8, heads=16, m=2048, n=2048, d=64, dv=64, kv_heads=16)
    wide = AttentionShape(batch=8, heads=16, m=2048, n=2048, d=128, dv=128, kv_heads=16)
    blocks = {"BLOCK_M": 128, "BLOCK_N": 128, "STAGES": 3, "WARPS": 8}

    def fits(attention: AttentionShape, dtype: str) -> bool:
        facts = GroupFacts(kind="attention", dtypes=(dtype,), attention=attention)
        return flash.satisfies({**facts.constraint_names(), **blocks})

    assert GroupFacts(kind="attention", dtypes=("bfloat16", "bool")).float_item_bytes == 2
    assert fits(shape, "bfloat16") and fits(shape, "float32")
    assert fits(wide, "bfloat16") and not fits(wide, "float32")



def test_a_3d_convolution_is_tuned_on_channels_last_kernels_only():
    """The implicit GEMM's NCHW gathers are 2-D only: at a 3-D group's shapes (SPATIAL) the
    tuner never proposes CHANNELS_LAST 0, which the template would refuse; at a 2-D group's it
    proposes both."""
    from kernelwright.skills.conditions import GemmShape

    choice = GroupChoice(group=0, kind="conv", skill="conv-implicit-gemm", variant="implicit",
                         params={"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8,
                                 "STAGES": 3, "WARPS": 8, "FP32_MATH": 0, "CHANNELS_LAST": 1})
    design = Design((choice,), stage="structure")

    def layouts(spatial: int) -> set[int]:
        facts = GroupFacts(kind="conv", gemm=GemmShape(524288, 64, 864, spatial=spatial))
        space = DesignSpace.of(design, LIB, None, {0: facts.constraint_names()})
        return {int(space.space.config(i)["g0_CHANNELS_LAST"]) for i in range(len(space.space))}

    assert layouts(3) == {1} and layouts(2) == {0, 1}
