"""Expert skills as data: intent, validity conditions with reasons, expected gain, pitfalls,
tunable parameters, and the template each drives (see :mod:`kernelwright.skills.base`).

    SkillLibrary.builtin()       the shipped skills (``design/families/*/skills/*.toml``)
    skill_hints(task)            the skills that hold for a task's fusion groups, for prompts
    plan_hints(plan)             the same from a plan already made (no second capture)
    skill_stats(archive)         where each skill paid, from the archive's verdicts
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernelwright.skills.base import Condition, Fail, Ok, Outcome, Param, Skill
from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.library import Assessment, SkillLibrary
from kernelwright.skills.stats import SkillStat, skill_stats


@dataclass(frozen=True, slots=True)
class SkillHint:
    """A skill that holds for a task, as prompts show it (the agents' ``SkillHint`` shape)."""

    id: str
    intent: str
    pitfalls: tuple[str, ...] = ()
    conditions_held: tuple[str, ...] = ()


def skill_hints(task: Any, device: str = "cuda") -> list[SkillHint]:
    """Skills whose conditions hold for ``task`` (a :class:`~kernelwright.records.Task`).

    Captures the task's graph (in a child process) at the task's size; each hint's conditions
    name the fusion group they hold for.
    """
    from kernelwright.design.plan import plan_task

    return plan_hints(plan_task(task, device, task.size))


def plan_hints(plan: Any) -> list[SkillHint]:
    """The skills that hold for a ``DesignPlan``'s fusion groups (its device and precision
    policy), each with the conditions that held, named by group."""
    hints: dict[str, SkillHint] = {}
    for go in plan.groups:
        for option in go.options:
            for sid in (option.choice.skill, *option.choice.options):
                skill = plan.library.get(sid)
                held = tuple(f"g{go.group.id}: {r}" for r in option.choice.reasons)
                old = hints.get(sid)
                merged = tuple(dict.fromkeys((old.conditions_held if old else ()) + held))
                hints[sid] = SkillHint(sid, skill.intent, skill.pitfalls, merged)
    return list(hints.values())


__all__ = [
    "Assessment",
    "Condition",
    "Fail",
    "GroupFacts",
    "Ok",
    "Outcome",
    "Param",
    "Skill",
    "SkillHint",
    "SkillLibrary",
    "SkillStat",
    "plan_hints",
    "skill_hints",
    "skill_stats",
]
