"""The skill library: every kernel family's skill files plus any extra folders, checked against a
group.

    library = SkillLibrary.builtin()
    for c in library.assess(facts):          # every skill for the group's kind
        c.skill.id, c.ok, c.reasons           # held conditions, or the first failing one

Extra skills come from folders of ``*.toml`` files (``SkillLibrary.load([...])``) or from
installed packages that declare an entry point in the ``kernelwright.skills`` group pointing at
such a folder. Duplicate ids are refused.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kernelwright.errors import ConfigError
from kernelwright.skills.base import Outcome, Skill, skill_from_dict
from kernelwright.skills.conditions import GroupFacts, check_all
from kernelwright.skills.heuristics import defaults_for


@dataclass(frozen=True, slots=True)
class Assessment:
    """A skill checked against one group: every condition's outcome."""

    skill: Skill
    outcomes: tuple[Outcome, ...]

    @property
    def ok(self) -> bool:
        """Every condition held."""
        return all(o.ok for o in self.outcomes)

    @property
    def reasons(self) -> tuple[str, ...]:
        """The reasons that held (when ok) or the failing ones (when not)."""
        if self.ok:
            return tuple(o.reason for o in self.outcomes)
        return tuple(o.reason for o in self.outcomes if not o.ok)


class SkillLibrary:
    """An immutable collection of skills, by id."""

    def __init__(self, skills: Iterable[Skill]) -> None:
        self._skills: dict[str, Skill] = {}
        for s in skills:
            if s.id in self._skills:
                raise ConfigError(
                    f"skill id {s.id!r} is defined twice ({self._skills[s.id].source} and "
                    f"{s.source}); "
                    "rename one"
                )
            self._skills[s.id] = s

    @classmethod
    def builtin(cls) -> SkillLibrary:
        """The skills shipped with kernelwright (plus entry-point folders)."""
        return cls.load(_entry_point_dirs())

    @classmethod
    def load(cls, extra: Sequence[str | Path] = ()) -> SkillLibrary:
        """Built-in skills plus the ``*.toml`` files in ``extra`` folders."""
        skills = list(_builtin_skills())
        for folder in extra:
            for path in sorted(Path(folder).glob("*.toml")):
                skills.append(_read(path.read_text(), str(path)))
        return cls(skills)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._skills.values())

    def __len__(self) -> int:
        return len(self._skills)

    def get(self, skill_id: str) -> Skill:
        """The skill ``skill_id``.

        Raises:
            ConfigError: no such skill (the message lists the known ids).
        """
        if skill_id not in self._skills:
            raise ConfigError(
                f"unknown skill {skill_id!r}; known: {', '.join(sorted(self._skills))}"
            )
        return self._skills[skill_id]

    def for_kind(self, kind: str) -> list[Skill]:
        """Skills that apply to groups of ``kind``, primary skills first."""
        found = [s for s in self._skills.values() if s.applies_to == kind]
        return sorted(found, key=lambda s: (s.is_modifier, -s.expected_gain, s.id))

    def assess(self, facts: GroupFacts) -> list[Assessment]:
        """Check every skill for the group's kind."""
        return [
            Assessment(s, tuple(check_all(s.conditions, facts))) for s in self.for_kind(facts.kind)
        ]

    def defaults(self, skill: Skill, facts: GroupFacts) -> dict[str, int]:
        """Default parameters of ``skill`` for ``facts`` (its heuristic, else middle values)."""
        values = defaults_for(skill.defaults, facts)
        for p in skill.params:
            values.setdefault(p.name, p.values[len(p.values) // 2])
        return values


def _read(text: str, source: str) -> Skill:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc})") from exc
    return skill_from_dict(data, source)


@functools.cache
def _builtin_skills() -> tuple[Skill, ...]:
    """Every kernel family's skill files (``design/families/<family>/skills/*.toml``), read
    once a process: they are package data, and skills are immutable."""
    from kernelwright.design.families import FAMILIES

    skills = []
    for fam in FAMILIES.values():
        for entry in sorted(fam.skills.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".toml"):
                text = entry.read_text(encoding="utf-8")
                skills.append(_read(text, f"{fam.kind}/{entry.name}"))
    return tuple(skills)


def _entry_point_dirs() -> list[str]:
    from importlib.metadata import entry_points

    dirs: list[str] = []
    for ep in entry_points(group="kernelwright.skills"):
        target = ep.load()
        dirs.append(str(target() if callable(target) else target))
    return dirs
