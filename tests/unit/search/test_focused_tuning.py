"""A many-kernel design is tuned a few groups at a time: the joint space of every group's
parameters is never enumerated (a ten-kernel model's would not fit in memory)."""

from __future__ import annotations

from typing import Any

import pytest

from kernelwright.design.choices import Design
from kernelwright.design.plan import DesignPlan
from kernelwright.errors import ConfigError
from kernelwright.search import tunable
from kernelwright.search.decisions import DecisionSpace
from kernelwright.search.templates import TemplateProposer
from kernelwright.search.tunable import DesignSpace, focus_groups
from kernelwright.tuning.space import MAX_ENUMERATED, Param, Space
from kernelwright.tuning.strategies import get_strategy


def test_small_joint_spaces_are_tuned_whole(two_group_plan: DesignPlan) -> None:
    base = two_group_plan.designs[0]
    assert len(base.choices) == 2
    assert focus_groups(base, two_group_plan.library) is None


def test_past_the_limit_the_heaviest_group_is_tuned(two_group_plan: DesignPlan) -> None:
    base = two_group_plan.designs[0]
    first, second = (c.group for c in base.choices)
    for heavy, light in ((first, second), (second, first)):
        weights = {heavy: 10.0, light: 1.0}
        assert focus_groups(base, two_group_plan.library, weights, limit=1) == {heavy}
    # no weights: the design's order
    assert focus_groups(base, two_group_plan.library, limit=1) == {first}


def test_plan_weights_cover_every_group(two_group_plan: DesignPlan) -> None:
    weights = two_group_plan.group_weights()
    assert set(weights) == {g.group.id for g in two_group_plan.groups}
    assert all(w > 0 for w in weights.values())


def test_a_focused_space_ignores_trials_of_other_values_elsewhere(
    two_group_plan: DesignPlan,
) -> None:
    base = two_group_plan.designs[0]
    first, second = base.choices
    space = DesignSpace.of(base, two_group_plan.library, {first.group})
    assert {idx for idx, _, _ in space.names} == {0}
    assert space.config(base) is not None
    name, values = tunable.tunable(two_group_plan.library, second)[0]
    other = next(v for v in values if v != second.params.get(name))
    moved = base.__class__((first, second.with_params({**second.params, name: other})))
    assert space.config(moved) is None  # its time measures another second group


def test_the_proposer_tunes_only_the_focused_group(
    two_group_plan: DesignPlan, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tunable, "MAX_JOINT_CONFIGS", 1)
    base = two_group_plan.designs[0]
    heavy = base.choices[1].group
    proposer = TemplateProposer(
        two_group_plan.designs,
        two_group_plan.render,
        two_group_plan.library,
        get_strategy("random"),
        weights={heavy: 1.0},
    )
    designs, _ = proposer._tune(base, [], 6, seed=0)
    assert designs
    for d in designs:
        for old, new in zip(base.choices, d.choices, strict=True):
            if old.group != heavy:
                assert dict(new.params) == dict(old.params)
    assert any(dict(d.choices[1].params) != dict(base.choices[1].params) for d in designs)


def test_a_space_too_large_to_enumerate_is_refused_by_name() -> None:
    params = tuple(Param(f"p{i}", (1, 2)) for i in range(MAX_ENUMERATED.bit_length()))
    space = Space(params)
    assert space.size > MAX_ENUMERATED
    with pytest.raises(ConfigError, match="configurations"):
        len(space)


def test_parameter_moves_reach_every_group(two_group_plan: DesignPlan) -> None:
    space = DecisionSpace.of_plan(two_group_plan)
    moves = space.parameter_moves(two_group_plan.designs[0])
    groups = {label.split(".")[0] for _, label in moves}
    assert groups == {f"g{c.group}" for c in two_group_plan.designs[0].choices}


def _moved(design: Design, group: int, library: Any, step: int) -> Design:
    """``design`` with one tunable parameter of ``group`` set to its ``step``-th other value."""
    choices = list(design.choices)
    idx = next(i for i, c in enumerate(choices) if c.group == group)
    name, values = tunable.tunable(library, choices[idx])[0]
    others = [v for v in values if v != choices[idx].params.get(name)]
    choices[idx] = choices[idx].with_params({**choices[idx].params, name: others[step]})
    return Design(tuple(choices), "tuning")


def test_groups_take_turns_once_the_heaviest_had_its_trials(two_group_plan: DesignPlan) -> None:
    base = two_group_plan.designs[0]
    lib = two_group_plan.library
    heavy, light = (c.group for c in base.choices)
    weights = {heavy: 10.0, light: 1.0}
    per = tunable.TRIALS_PER_GROUP
    on_heavy = [(_moved(base, heavy, lib, i), 1.0) for i in range(per)]
    on_light = [(_moved(base, light, lib, i), None) for i in range(per)]  # failures count too
    assert focus_groups(base, lib, weights, limit=1, tried=on_heavy[:-1]) == {heavy}
    assert focus_groups(base, lib, weights, limit=1, tried=on_heavy) == {light}
    assert focus_groups(base, lib, weights, limit=1, tried=on_heavy + on_light) == {heavy}
    counts = tunable.trials_by_group(base, on_heavy + on_light + [(base, 1.0)])
    assert counts == {heavy: per, light: per}
