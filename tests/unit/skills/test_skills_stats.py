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
    # a has both designs timed, but one task is too few for a prior
    assert skill_priors(archive, SkillLibrary.builtin()) == {}
    found = matching_measurements(archive, "row-onepass", "onepass", exclude_task="sha-a")
    assert sorted(found, key=lambda t: t[1]) == [
        ({"ROWS": 16}, 0.25, "sha-b"),
        ({"ROWS": 8}, 0.5, "sha-b"),
    ]


def test_priors_compare_designs_on_the_same_task_and_ignore_bad_tuning() -> None:
    """Each skill's best candidate per task against the task's best: the winner everywhere has
    prior 1, a skill twice as slow 0.5; a terrible tuning suggestion and tasks where the skill
    had no rival change nothing."""
    archive = Archive(":memory:")
    times = {"a": (1.0, 2.0), "b": (0.5, 0.25), "c": (1.0, 1.5)}  # (onepass, looped) ms
    for name, (onepass, looped) in times.items():
        task = Task(f"/{name}.py", name, name, f"sha-{name}")
        # speed-ups over eager deliberately disagree with the times: they must not be used
        archive.add(task, candidate(1, ["row-onepass"], {}), verdict(True, 1.0, onepass))
        archive.add(task, candidate(2, ["row-looped"], {}), verdict(True, 9.0, looped))
        archive.add(task, candidate(3, ["row-onepass"], {}), verdict(True, 0.1, 40.0))  # tuning
    alone = Task("/d.py", "d", "d", "sha-d")  # only one-pass timed: no comparison
    archive.add(alone, candidate(4, ["row-onepass"], {}), verdict(True, 0.2, 30.0))
    priors = skill_priors(archive, SkillLibrary.builtin())
    assert round(priors["row-onepass"], 4) == round((1.0 * 0.5 * 1.0) ** (1 / 3), 4)
    assert round(priors["row-looped"], 4) == round((0.5 * 1.0 * (1.0 / 1.5)) ** (1 / 3), 4)
    assert priors["row-onepass"] > priors["row-looped"]


def test_a_group_of_a_larger_design_is_measured_against_its_own_structure() -> None:
    """Candidates of a two-group design: the convolution group's timings share a source only
    where everything else the candidate chose is the same, so two of them differ in that
    group's parameters alone."""
    archive = Archive(":memory:")
    task = Task("/c.py", "c", "C", "sha-c")
    groups = {"g0": {"skill": "conv-direct", "variant": "direct", "options": [], "kind": "conv"},
              "g1": {"skill": "row-onepass", "variant": "onepass", "options": [],
                     "kind": "reduction"}}

    def add(m: int, rows: int, ms: float) -> None:
        cand = Candidate(f"# {m} {rows}", "template",
                         design={"skills": ["conv-direct", "row-onepass"], "groups": groups},
                         params={"g0.BLOCK_M": m, "g1.ROWS": rows})
        archive.add(task, cand, verdict(True, 1.0, ms))

    add(128, 4, 1.0)
    add(64, 4, 5.0)
    add(64, 8, 4.0)  # another reduction setting: another source
    found = matching_measurements(archive, "conv-direct", "direct", exclude_task="sha-x")
    sources = [source for _, _, source in found]
    assert [params for params, _, _ in found] == [{"BLOCK_M": 128}, {"BLOCK_M": 64},
                                                   {"BLOCK_M": 64}]
    assert sources[0] == sources[1] != sources[2] and sources[0].startswith("sha-c/g0/")
    assert matching_measurements(archive, "conv-direct", "direct", exclude_task="sha-c") == []
