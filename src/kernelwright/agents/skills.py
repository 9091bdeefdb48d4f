"""Expert skills for the prompts: only those whose preconditions hold for the task.

The agents depend on this tiny record, not on the skill library's classes::

    SkillHint(id, intent, pitfalls, conditions_held)

``LibrarySkills`` adapts :mod:`kernelwright.skills` when it is importable (the structure stage
owns it); ``StaticSkills`` serves fixed hints (tests, or a user's own list). With neither, the
roles simply see no skills.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kernelwright.records import Task


@dataclass(frozen=True, slots=True)
class SkillHint:
    """One skill as a prompt shows it.

    Attributes:
        id: the skill's registered name (the planner answers with these).
        intent: what it does and why it helps.
        pitfalls: what goes wrong when it is applied carelessly.
        conditions_held: the preconditions that hold for this task, each with its reason.
    """

    id: str
    intent: str
    pitfalls: tuple[str, ...] = ()
    conditions_held: tuple[str, ...] = ()


class SkillSource(Protocol):
    """Where the roles get their skills from."""

    def hints(self, task: Task) -> Sequence[SkillHint]:
        """The skills whose preconditions hold for ``task``."""
        ...


@dataclass(frozen=True, slots=True)
class StaticSkills:
    """The same hints for every task."""

    items: tuple[SkillHint, ...] = ()

    def hints(self, task: Task) -> Sequence[SkillHint]:
        """All of them."""
        return self.items


# Functions of kernelwright.skills this adapter understands, in order of preference; each takes
# a Task and returns skill objects that hold for it.
_LIBRARY_FUNCTIONS = ("skill_hints", "applicable_skills")


class LibrarySkills:
    """Hints from :mod:`kernelwright.skills` (none when that package is not installed)."""

    def __init__(self, module: str = "kernelwright.skills") -> None:
        self.module = module

    def hints(self, task: Task) -> Sequence[SkillHint]:
        """Skills from the library whose preconditions hold for ``task``."""
        finder = self._finder()
        return tuple(to_hint(s) for s in finder(task)) if finder else ()

    def _finder(self) -> Callable[[Task], Iterable[Any]] | None:
        try:
            library = importlib.import_module(self.module)
        except ImportError:
            return None
        for name in _LIBRARY_FUNCTIONS:
            fn = getattr(library, name, None)
            if callable(fn):
                return fn  # type: ignore[no-any-return]
        return None


def to_hint(skill: Any) -> SkillHint:
    """A :class:`SkillHint` from any object with ``id``/``name``, ``intent``, ``pitfalls`` and
    ``conditions_held``/``conditions`` attributes (a SkillHint passes through)."""
    if isinstance(skill, SkillHint):
        return skill
    conditions = getattr(skill, "conditions_held", None) or getattr(skill, "conditions", ()) or ()
    return SkillHint(
        id=str(getattr(skill, "id", None) or getattr(skill, "name", "skill")),
        intent=str(getattr(skill, "intent", "") or getattr(skill, "description", "")),
        pitfalls=tuple(str(p) for p in getattr(skill, "pitfalls", ()) or ()),
        conditions_held=tuple(str(c) for c in conditions),
    )
