"""Stage 1 (structure): which skill drives each fusion group, ranked by expected gain.

For every fused group the library's skills are checked against the group's facts; each primary
skill whose conditions hold becomes an option, with the modifier skills that apply to its variant
(online softmax, Welford) and their reasons. An option the template cannot render for this group
is dropped with the template's reason. Options are ranked by the product of expected gains
(optionally scaled by what the archive measured for each skill), and designs are made by taking
the best option everywhere, then changing one group at a time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kernelwright.design.choices import Design, GroupChoice
from kernelwright.design.emit import render_group
from kernelwright.design.facts import group_facts
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.kernel.common import DesignError
from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.library import SkillLibrary


@dataclass(frozen=True, slots=True)
class Option:
    """One way to build a group, with its ranking score."""

    choice: GroupChoice
    score: float


@dataclass
class GroupOptions:
    """A group's facts, its ranked options and the skills skipped (with reasons)."""

    group: Group
    facts: GroupFacts
    options: list[Option] = field(default_factory=list)
    skipped: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


def group_options(
    partition: Partition,
    group: Group,
    library: SkillLibrary,
    device: str = "cuda",
    prior: Mapping[str, float] | None = None,
) -> GroupOptions:
    """Check every skill for ``group`` and rank the options that hold."""
    facts = group_facts(partition, group, device)
    result = GroupOptions(group, facts)
    assessments = library.assess(facts)
    modifiers = [a for a in assessments if a.skill.is_modifier]
    for m in modifiers:
        if not m.ok:
            result.skipped.append((m.skill.id, m.reasons))
    prior = prior or {}
    for a in assessments:
        if a.skill.is_modifier:
            continue
        if not a.ok:
            result.skipped.append((a.skill.id, a.reasons))
            continue
        params = library.defaults(a.skill, facts)
        mods = [m for m in modifiers if m.ok and a.skill.variant in m.skill.modifies]
        variants = [tuple(mods)]
        if mods and a.skill.variant == "looped":
            variants.append(())  # the same structure without the folds measures what they pay
        for chosen in variants:
            choice = GroupChoice(
                group.id,
                group.kind,
                a.skill.id,
                a.skill.variant,
                tuple(m.skill.id for m in chosen),
                params,
                a.reasons + tuple(r for m in chosen for r in m.reasons),
            )
            try:
                render_group(partition.graph, group, choice, f"probe_{group.id}")
            except DesignError as exc:
                result.skipped.append((a.skill.id, (f"template: {exc}",)))
                break
            except Exception as exc:  # a template bug must cost this option, not the run
                result.skipped.append(
                    (a.skill.id, (f"template failed: {type(exc).__name__}: {exc}",))
                )
                break
            score = a.skill.expected_gain * prior.get(a.skill.id, 1.0)
            for m in chosen:
                score *= m.skill.expected_gain * prior.get(m.skill.id, 1.0)
            result.options.append(Option(choice, score))
    result.options.sort(key=lambda o: -o.score)
    return result


def rank_designs(per_group: Sequence[GroupOptions], limit: int = 12) -> list[Design]:
    """Designs, most promising first: the best option everywhere, then one group changed."""
    usable = [g for g in per_group if g.options]
    if not usable:
        return []
    best = tuple(g.options[0] for g in usable)
    scored: list[tuple[float, tuple[Option, ...]]] = [(_score(best), best)]
    for i, g in enumerate(usable):
        for alt in g.options[1:]:
            combo = best[:i] + (alt,) + best[i + 1 :]
            scored.append((_score(combo), combo))
    scored.sort(key=lambda t: -t[0])
    designs: list[Design] = []
    seen: set[str] = set()
    for _, combo in scored:
        d = Design(tuple(o.choice for o in combo))
        if d.structure_key() not in seen:
            seen.add(d.structure_key())
            designs.append(d)
        if len(designs) >= limit:
            break
    return designs


def _score(combo: Sequence[Option]) -> float:
    return math.prod(o.score for o in combo)
