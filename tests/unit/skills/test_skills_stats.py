"""Where each skill paid, read back from the archive."""

from __future__ import annotations

from kernelwright.archive import Archive
from kernelwright.records import Candidate, Status, Task, Timing, TimingStats, Verdict
from kernelwright.skills import SkillLibrary, skill_stats
from kernelwright.skills.stats import matching_measurements, skill_priors


def verdict(correct: bool, speedup: float | None, ms: float = 1.0) -> Verdict:
    stats = TimingStats(ms, ms, ms, 0.0, 10)
    timing = Timing(candidate=stats, speedup_vs_eager=speedup, representative=True)
    return Verdict(Status.CORRECT if correct else Status.INCORRECT, correct, timing=timing)


def candidate(i: int, skills: list[str], params: dict[str, int]) -> Candidate:
    groups = {
        "g0": {"skill": skills[0], "variant": "onepass", "options": skills[1:], "kind": "reduction"}
    }
    return Candidate(
        f"# {i}",
        "template",
        design={"skills": skills, "groups": groups, "stage": "structure"},
        params=params,
    )


def test_stats_priors_and_warm_start_measurements() -> None:
    archive = Archive(":memory:")
    a = Task("/a.py", "a", "A", "sha-a")
    b = Task("/b.py", "b", "B", "sha-b")
    archive.add(
        a, candidate(1, ["row-onepass", "online-softmax"], {"g0.ROWS": 4}), verdict(True, 3.0)
    )
    archive.add(a, candidate(2, ["row-looped"], {"g0.LOOP_BLOCK": 1024}), verdict(False, None))
    archive.add(b, candidate(3, ["row-onepass"], {"g0.ROWS": 8}), verdict(True, 6.0, 0.5))
    archive.add(b, candidate(4, ["row-onepass"], {"g0.ROWS": 16}), verdict(True, 12.0, 0.25))
    stats = skill_stats(archive)
    one = stats["row-onepass"]
    assert (one.applied, one.correct, len(one.tasks)) == (3, 3, 2)
    assert round(one.geomean or 0, 6) == 6.0 and one.best == 12.0
    assert stats["row-looped"].correct == 0 and stats["row-looped"].geomean is None
    priors = skill_priors(archive, SkillLibrary.builtin())
    assert priors == {"row-onepass": 2.0}  # measured 6x over an expected 3x, clipped at 2
    found = matching_measurements(archive, "row-onepass", "onepass", exclude_task="sha-a")
    assert sorted(found, key=lambda t: t[1]) == [
        ({"ROWS": 16}, 0.25, "sha-b"),
        ({"ROWS": 8}, 0.5, "sha-b"),
    ]
