"""One key per kernel: designs that render to the same kernel at the task's shapes share it.

A template clamps some parameters to the shape it runs on (``BLOCK = min(BLOCK,
next_power_of_2(n_elements))``): at the task's size, every value at or above the padded extent
launches the same kernel. Each skill names such parameters and the group quantity they are
clamped to (``Param.extent``), so the design, which knows its groups' shapes, can clamp them
before anything is rendered:

    canonical_design(design, facts, library)   the same design with every clamped value replaced
                                               by the value the template launches with
    design_key(design)                         structure and parameters as one string

Two designs with the same key after clamping are one candidate; the search evaluates one and
reuses its verdict for the other. Parameters without an ``extent`` are kept as they are, so the
key never merges two kernels that differ.
"""

from __future__ import annotations

from collections.abc import Mapping

from kernelwright.design.choices import Design
from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.library import SkillLibrary


def padded(extent: int) -> int:
    """The next power of two at or above ``extent`` (the wrappers' ``_pow2``), at least 1."""
    return 1 << max(0, int(extent) - 1).bit_length()


def canonical_design(
    design: Design, facts: Mapping[int, GroupFacts], library: SkillLibrary
) -> Design:
    """``design`` with every parameter that its template clamps to a shape set to the clamped
    value at the shapes in ``facts`` (by group id); groups without facts are left alone."""
    choices = []
    for choice in design.choices:
        group_facts = facts.get(choice.group)
        if group_facts is None:
            choices.append(choice)
            continue
        params = dict(choice.params)
        for p in library.get(choice.skill).params:
            if p.extent and p.name in params:
                bound = padded(getattr(group_facts, p.extent))
                params[p.name] = min(int(params[p.name]), bound)
        choices.append(choice.with_params(params))
    return Design(tuple(choices), design.stage)


def design_key(design: Design) -> str:
    """Structure (skills, variants, modifiers per group) and parameters, as one string."""
    params = ",".join(f"{k}={v}" for k, v in sorted(design.params_json().items()))
    return f"{design.structure_key()}#{params}"
