"""Equivalence-aware pruning: designs that render to the same kernel at the task's shapes are
one candidate; the controller evaluates one and reuses its verdict for the others."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doubles.judges import synthetic_judge

from kernelwright.archive import Archive
from kernelwright.design.canonical import padded
from kernelwright.design.choices import Design
from kernelwright.errors import ConfigError
from kernelwright.evaluate import EvalOptions
from kernelwright.records import Candidate
from kernelwright.search import Budget, Proposal, run_search
from kernelwright.skills.base import skill_from_dict
from kernelwright.skills.stats import skill_stats


def with_params(design: Design, **params: int) -> Design:
    choice = design.choices[0]
    return Design((choice.with_params({**choice.params, **params}),), stage="tuning")


def test_padded_is_the_next_power_of_two() -> None:
    assert [padded(n) for n in (0, 1, 2, 3, 800, 1024, 1025)] == [1, 1, 2, 4, 1024, 1024, 2048]


def test_blocks_past_the_padded_extent_are_one_kernel(pointwise_plan) -> None:  # type: ignore[no-untyped-def]
    base = pointwise_plan.designs[0]
    assert base.choices[0].skill == "elementwise-flat"  # 8 x 100: 800 elements, padded to 1024
    key = pointwise_plan.canonical_key
    assert key(with_params(base, BLOCK=1024)) == key(with_params(base, BLOCK=2048))
    assert key(with_params(base, BLOCK=4096)) == key(with_params(base, BLOCK=1024))
    assert key(with_params(base, BLOCK=512)) != key(with_params(base, BLOCK=1024))
    # a parameter its template does not clamp always tells kernels apart
    assert key(with_params(base, BLOCK=2048, WARPS=2)) != key(with_params(base, BLOCK=2048))


def test_a_scan_clamps_its_block_to_the_row(two_group_plan) -> None:  # type: ignore[no-untyped-def]
    base = two_group_plan.designs[0]
    scan = base.choices[1]
    assert scan.skill == "scan-rows"  # rows of 300: BLOCK_N >= 512 is one kernel

    def block_n(v: int) -> Design:
        return Design((base.choices[0], scan.with_params({**scan.params, "BLOCK_N": v})))

    key = two_group_plan.canonical_key
    assert key(block_n(512)) == key(block_n(4096)) != key(block_n(256))


def test_an_unknown_extent_is_refused() -> None:
    data = {
        "id": "x",
        "intent": "i",
        "applies_to": "pointwise",
        "variant": "flat",
        "expected_gain": 1.0,
        "params": {"BLOCK": {"values": [64], "extent": "rows"}},
    }
    with pytest.raises(ConfigError, match="extent 'rows'"):
        skill_from_dict(data)


class Scripted:
    """Proposes the given designs in order, one per ask."""

    name = "scripted"

    def __init__(self, plan, designs):  # type: ignore[no-untyped-def]
        self.plan, self.designs = plan, designs

    def ask(self, task, history, n, seed):  # type: ignore[no-untyped-def]
        if len(history) >= len(self.designs):
            return []
        d = self.designs[len(history)]
        source = self.plan.render(d)
        return [Proposal(Candidate(source, "template", design=d.to_json(), params=d.params_json()))]


def test_an_equivalent_proposal_reuses_the_verdict_and_costs_no_evaluation(
    pointwise_plan, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    base = pointwise_plan.designs[0]
    designs = [with_params(base, BLOCK=1024), with_params(base, BLOCK=4096)]
    designs.append(with_params(base, BLOCK=256))
    calls: list[Candidate] = []
    judge = synthetic_judge(lambda d, p: 1.0 if p["g0.BLOCK"] >= 1024 else 1.5, calls)
    archive = Archive(tmp_path / "a.sqlite")

    def run(budget: int):  # type: ignore[no-untyped-def]
        return run_search(
            pointwise_plan.task,
            Scripted(pointwise_plan, designs),
            EvalOptions(device="cpu"),
            archive,
            Budget(candidates=budget),
            "run-1",
            evaluate_fn=judge,
            equivalence=pointwise_plan.candidate_key,
        )

    result = run(2)
    assert [c.params["g0.BLOCK"] for c in calls] == [1024, 256]  # 4096 was never judged
    assert [t.reused for t in result.trials] == [False, True, False]
    assert result.evaluated == 2 and result.pruned_equivalent == 1 and result.stopped == "budget"
    first, twin = result.trials[0], result.trials[1]
    assert twin.candidate.source != first.candidate.source
    assert twin.verdict.timing == first.verdict.timing and twin.verdict.correct
    assert f"candidate {first.candidate_id}" in twin.verdict.message
    # archived with its flag: a resumed run counts two evaluations, not three
    records = archive.history(pointwise_plan.task.sha256, "run-1")
    assert len(records) == 3 and [r.candidate.params["g0.BLOCK"] for r in records][1] == 4096
    assert skill_stats(archive)["elementwise-flat"].applied == 2  # a reused verdict is no data
    calls.clear()
    again = run(2)
    assert calls == [] and again.evaluated == 2 and again.reused == 1


def test_without_an_equivalence_only_the_source_prunes(pointwise_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    base = pointwise_plan.designs[0]
    designs = [with_params(base, BLOCK=1024), with_params(base, BLOCK=4096)]
    calls: list[Candidate] = []
    result = run_search(
        pointwise_plan.task,
        Scripted(pointwise_plan, designs),
        EvalOptions(device="cpu"),
        Archive(":memory:"),
        Budget(candidates=5),
        "run-1",
        evaluate_fn=synthetic_judge(lambda d, p: 1.0, calls),
    )
    assert len(calls) == 2 and result.pruned_equivalent == 0


# (plan, design, group, skill, parameter, how its template launches it: ``min(VALUE, ...`` up to
# the next power of two of the extent)
CLAMPS = [
    (
        "pointwise_plan",
        0,
        0,
        "elementwise-flat",
        "BLOCK",
        r"min\(V, _pow2\(max\(n_elements, 1\)\)\)",
    ),
    (
        "two_group_plan",
        0,
        1,
        "scan-rows",
        "BLOCK_N",
        r"min\(V, _pow2\(n_scan\)\)",
    ),
    ("two_group_plan", 0, 1, "scan-rows", "ROWS", r"min\(V, _pow2\(n_rows\)\)"),
    (
        "softmax_plan",
        0,
        0,
        "row-onepass",
        "ROWS",
        r"min\(V, max\(1, \d+ // BLOCK_N\), _pow2\(n_rows\)\)",
    ),
    (
        "softmax_plan",
        1,
        0,
        "row-looped",
        "LOOP_BLOCK",
        r"min\(V, _pow2\(n_cols\)\)",
    ),
    (
        "softmax_plan",
        1,
        0,
        "row-looped",
        "LOOP_ROWS",
        r"min\(V, _pow2\(n_rows\)\)",
    ),
]


@pytest.mark.parametrize(
    ("plan_name", "index", "group", "skill", "param", "clamp"),
    CLAMPS,
    ids=[f"{skill}.{param}" for _, _, _, skill, param, _ in CLAMPS],
)
def test_every_declared_extent_is_clamped_by_its_template(
    request: pytest.FixtureRequest,
    plan_name: str,
    index: int,
    group: int,
    skill: str,
    param: str,
    clamp: str,
) -> None:
    plan = request.getfixturevalue(plan_name)
    design = plan.designs[index]
    choice = design.choices[group]
    assert choice.skill == skill
    value = 777  # a value no default has, to find it in the source
    choices = list(design.choices)
    choices[group] = choice.with_params({**choice.params, param: value})
    source = plan.render(Design(tuple(choices)))
    assert re.search(clamp.replace("V", str(value)), source), source


def test_every_extent_is_in_the_clamp_test(pointwise_plan) -> None:  # type: ignore[no-untyped-def]
    """Equivalence trusts a declared extent: each one must be checked against its template."""
    with_extent = {(s.id, p.name) for s in pointwise_plan.library for p in s.params if p.extent}
    assert with_extent == {(skill, param) for _, _, _, skill, param, _ in CLAMPS}


def test_a_proposal_breaking_the_constraints_is_refused_even_when_its_kernel_was_judged(
    pointwise_plan, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from kernelwright.constraints import Constraints
    from kernelwright.constraints.space_rules import SpaceRules

    base = pointwise_plan.designs[0]
    designs = [with_params(base, BLOCK=1024), with_params(base, BLOCK=4096)]
    calls: list[Candidate] = []
    result = run_search(
        pointwise_plan.task,
        Scripted(pointwise_plan, designs),
        EvalOptions(device="cpu", constraints=Constraints(space=SpaceRules(("BLOCK <= 2048",)))),
        Archive(":memory:"),
        Budget(candidates=5),
        "run-1",
        evaluate_fn=synthetic_judge(lambda d, p: 1.0, calls),
        equivalence=pointwise_plan.candidate_key,
    )
    assert len(calls) == 1  # BLOCK=4096 runs the same kernel, but the clause names its value
    assert [t.refused for t in result.trials] == [False, True]
    assert "BLOCK <= 2048" in result.trials[1].verdict.message
    assert result.pruned_equivalent == 0
