"""Where each skill paid: measured effects read back from the archive.

Every template candidate stores its skills in ``Candidate.design`` (``skills`` and, per group,
``skill``/``variant``/``options``) and its verdict, so the archive answers:

    skill_stats(archive)         per skill: applied, correct, speed-ups vs eager/compile, tasks
    skill_priors(archive, lib)   how each skill fared against the alternatives, to re-rank stage 1
    matching_measurements(...)   timings of one skill's parameters on other tasks (warm start)

Only representative timings (a GPU) count towards speed-ups; CPU runs count applications and
correctness.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernelwright.skills.library import SkillLibrary


@dataclass
class SkillStat:
    """One skill's record in the archive."""

    skill: str
    applied: int = 0
    correct: int = 0
    speedups: list[float] = field(default_factory=list)
    speedups_compile: list[float] = field(default_factory=list)
    tasks: set[str] = field(default_factory=set)
    best: float | None = None

    @property
    def geomean(self) -> float | None:
        """Geometric-mean speed-up over eager of its correct, timed candidates."""
        if not self.speedups:
            return None
        return math.exp(sum(math.log(s) for s in self.speedups) / len(self.speedups))

    @property
    def geomean_compile(self) -> float | None:
        """Geometric-mean speed-up over torch.compile."""
        if not self.speedups_compile:
            return None
        return math.exp(
            sum(math.log(s) for s in self.speedups_compile) / len(self.speedups_compile)
        )


def _template_records(archive: Any) -> Iterator[Any]:
    """Template candidates the harness measured (a verdict reused from an equivalent candidate
    is not a measurement: counting it would weigh one kernel twice)."""
    from kernelwright.search.proposer import EQUIVALENT

    for rec in archive.history():
        if EQUIVALENT in rec.verdict.flags:
            continue
        if rec.candidate.origin == "template" and rec.candidate.design.get("skills"):
            yield rec


def skill_stats(archive: Any) -> dict[str, SkillStat]:
    """Per-skill counts and measured speed-ups (see the module docstring)."""
    stats: dict[str, SkillStat] = {}
    for rec in _template_records(archive):
        v = rec.verdict
        for sid in rec.candidate.design.get("skills", []):
            s = stats.setdefault(sid, SkillStat(sid))
            s.applied += 1
            s.tasks.add(rec.task_name)
            if not v.correct:
                continue
            s.correct += 1
            if v.timing.representative and v.timing.speedup_vs_eager:
                s.speedups.append(v.timing.speedup_vs_eager)
                s.best = max(s.best or 0.0, v.timing.speedup_vs_eager)
            if v.timing.representative and v.timing.speedup_vs_compile:
                s.speedups_compile.append(v.timing.speedup_vs_compile)
    return stats


def skill_priors(archive: Any, library: SkillLibrary, min_tasks: int = 3) -> Mapping[str, float]:
    """Head to head: on each task where designs with and without the skill were both timed, the
    task's best time over the skill's best time (1.0 when the skill was in the winner); the
    prior is the geometric mean of those ratios over at least ``min_tasks`` tasks, clipped to
    [0.5, 1].

    Why not speed-ups over eager: they do not compare across tasks (eager is one kernel on one
    task, eight on the next), so a skill looked bad wherever eager happened to be good. Why each
    skill's best candidate per task: one bad tuning suggestion must not sink a skill (a
    geometric mean over every candidate once ranked a looped kernel that reads a row twice above
    the one-pass kernel that reads it once, after one poor tuning suggestion on another task)."""
    skill_ms: dict[str, dict[str, float]] = {}  # task -> skill -> its best ms there
    task_ms: dict[str, float] = {}
    measured: dict[str, list[frozenset[str]]] = {}  # task -> the skill sets timed there
    for rec in _template_records(archive):
        t = rec.verdict.timing
        if not rec.verdict.correct or not t.representative or t.candidate is None:
            continue
        ms, skills = t.candidate.median_ms, frozenset(rec.candidate.design.get("skills", []))
        per_task = skill_ms.setdefault(rec.task_sha256, {})
        for sid in skills:
            per_task[sid] = min(ms, per_task.get(sid, math.inf))
        task_ms[rec.task_sha256] = min(ms, task_ms.get(rec.task_sha256, math.inf))
        measured.setdefault(rec.task_sha256, []).append(skills)
    ratios: dict[str, list[float]] = {}
    for task, per_task in skill_ms.items():
        for sid, ms in per_task.items():
            if all(sid in s for s in measured[task]):
                continue  # no design without the skill was timed here: nothing to compare
            ratios.setdefault(sid, []).append(task_ms[task] / ms)
    priors: dict[str, float] = {}
    for sid, rs in ratios.items():
        if len(rs) < min_tasks:
            continue
        try:
            library.get(sid)
        except Exception:  # a skill the library no longer has
            continue
        g = math.exp(sum(math.log(r) for r in rs) / len(rs))
        priors[sid] = min(1.0, max(0.5, g))
    return priors


def matching_measurements(
    archive: Any, skill: str, variant: str, exclude_task: str
) -> list[tuple[dict[str, int], float, str]]:
    """(params, ms, source) of the groups of ``skill``/``variant`` in template candidates on
    other tasks. A single-group candidate's source is its task; a group of a larger design is
    labelled by its task, its group and everything else the candidate chose (the other groups'
    skills and parameters), so that the timings of one source differ in this group's
    parameters alone: a move's effect can be read off two of them, whatever the task's total
    time."""
    found: list[tuple[dict[str, int], float, str]] = []
    for rec in _template_records(archive):
        groups = rec.candidate.design.get("groups") or {}
        if rec.task_sha256 == exclude_task or not groups:
            continue
        t = rec.verdict.timing
        if not rec.verdict.correct or not t.representative or t.candidate is None:
            continue
        for gid, g in groups.items():
            if g.get("skill") != skill or g.get("variant") != variant:
                continue
            prefix = f"{gid}."
            params = {k[len(prefix):]: int(v) for k, v in rec.candidate.params.items()
                      if k.startswith(prefix)}
            source = rec.task_sha256[:8]
            if len(groups) > 1:
                rest = (sorted((k, repr(v)) for k, v in groups.items() if k != gid),
                        sorted((k, v) for k, v in rec.candidate.params.items()
                               if not k.startswith(prefix)))
                digest = hashlib.sha256(repr(rest).encode()).hexdigest()[:8]
                source = f"{source}/{gid}/{digest}"
            found.append((params, t.candidate.median_ms, source))
    return found
