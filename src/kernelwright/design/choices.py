"""A design: for each fusion group, the skill that drives it, its template variant and params.

Stored in the archive as the candidate's ``design`` and ``params`` (JSON), so every verdict can
be traced back to the skills that produced it:

    design = {"groups": {"g0": {"skill": "row-onepass", "variant": "onepass",
                                "options": ["online-softmax"], "kind": "reduction"}},
              "stage": "structure", "task_size": "small"}
    params = {"g0.ROWS": 16, "g0.WARPS": 4}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class GroupChoice:
    """The structure and parameters chosen for one group.

    Attributes:
        group: the group id (``Group.id``).
        kind: the group's kind (pointwise, reduction, scan, pool).
        skill: the primary skill's id.
        variant: the template variant it drives (flat, tiled, onepass, looped, split, scan, pool).
        options: modifier skills applied on top (online-softmax, welford).
        params: tunable parameters of the template.
        reasons: the preconditions that held, for the file header and the report.
    """

    group: int
    kind: str
    skill: str
    variant: str
    options: tuple[str, ...] = ()
    params: Mapping[str, int] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()

    def with_params(self, params: Mapping[str, int]) -> GroupChoice:
        """A copy with other parameters."""
        return GroupChoice(
            self.group,
            self.kind,
            self.skill,
            self.variant,
            self.options,
            dict(params),
            self.reasons,
        )


@dataclass(frozen=True, slots=True)
class Design:
    """Choices for every fused group, in group order."""

    choices: tuple[GroupChoice, ...]
    stage: str = "structure"

    def choice(self, group: int) -> GroupChoice | None:
        """The choice for group ``group`` (None: not fused)."""
        for c in self.choices:
            if c.group == group:
                return c
        return None

    @property
    def skills(self) -> list[str]:
        """Every skill id the design applies (primary and modifiers)."""
        found: list[str] = []
        for c in self.choices:
            for s in (c.skill, *c.options):
                if s not in found:
                    found.append(s)
        return found

    def structure_key(self) -> str:
        """Identifies the structure (skills and variants), ignoring parameters."""
        return "|".join(
            f"g{c.group}:{c.skill}:{c.variant}:{'+'.join(c.options)}" for c in self.choices
        )

    def to_json(self) -> dict[str, Any]:
        """The archive's ``Candidate.design``."""
        return {
            "stage": self.stage,
            "skills": self.skills,
            "groups": {
                f"g{c.group}": {
                    "kind": c.kind,
                    "skill": c.skill,
                    "variant": c.variant,
                    "options": list(c.options),
                    "reasons": list(c.reasons),
                }
                for c in self.choices
            },
        }

    def params_json(self) -> dict[str, int]:
        """The archive's ``Candidate.params`` (``g<id>.<NAME>``)."""
        return {
            f"g{c.group}.{k}": int(v) for c in self.choices for k, v in sorted(c.params.items())
        }


def design_from_json(design: Mapping[str, Any], params: Mapping[str, Any]) -> Design:
    """Rebuild a :class:`Design` from the archive's JSON."""
    choices: list[GroupChoice] = []
    for key, g in (design.get("groups") or {}).items():
        gid = int(str(key).lstrip("g"))
        prefix = f"{key}."
        ps = {k[len(prefix) :]: int(v) for k, v in params.items() if k.startswith(prefix)}
        choices.append(
            GroupChoice(
                gid,
                str(g.get("kind", "")),
                str(g["skill"]),
                str(g["variant"]),
                tuple(g.get("options", ())),
                ps,
                tuple(g.get("reasons", ())),
            )
        )
    choices.sort(key=lambda c: c.group)
    return Design(tuple(choices), str(design.get("stage", "structure")))
