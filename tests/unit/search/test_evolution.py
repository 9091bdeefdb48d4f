"""Evolution over designs with a synthetic judge: a seed population of ranked structures,
offspring one decision away from their parent, per-group crossover, resume from the archive."""

from __future__ import annotations

from pathlib import Path

from doubles.judges import accuracy_judge, synthetic_judge

from kernelwright.archive import Archive
from kernelwright.design.choices import Design, design_from_json
from kernelwright.evaluate import EvalOptions
from kernelwright.records import Candidate, Status
from kernelwright.search import Budget, Trial, run_search
from kernelwright.search.decisions import DecisionSpace
from kernelwright.search.evolution import EvolutionProposer


def by_rows(design, params) -> float:  # type: ignore[no-untyped-def]
    """row-onepass beats the looped designs; more rows per program help a little."""
    ms = 1.0 if "row-onepass" in design["skills"] else 3.0
    return ms / (1 + 0.05 * sum(int(v) for k, v in params.items() if k.endswith("ROWS")))


def evolve(plan, archive, budget: int, crossover: float, run_id: str = "evo", judge=None):  # type: ignore[no-untyped-def]
    """Evolution over ``plan`` judged by ``judge`` (default: :func:`by_rows`'s times)."""
    calls: list[Candidate] = []
    proposer = EvolutionProposer(DecisionSpace.of_plan(plan), plan.render, crossover=crossover)
    result = run_search(
        plan.task,
        proposer,
        EvalOptions(device="cpu"),
        archive,
        Budget(candidates=budget),
        run_id,
        seed=3,
        evaluate_fn=judge or synthetic_judge(by_rows, calls),
        equivalence=plan.candidate_key,
    )
    return result, calls


def design(t: Trial) -> Design:
    return design_from_json(t.candidate.design, t.candidate.params)


def decisions(d: Design) -> dict[str, object]:
    """Every decision of a design: each group's structure and each parameter's value."""
    found: dict[str, object] = {}
    for c in d.choices:
        found[f"g{c.group}"] = (c.skill, c.variant, c.options)
        found.update({f"g{c.group}.{k}": v for k, v in c.params.items()})
    return found


def differing(a: Design, b: Design) -> set[str]:
    da, db = decisions(a), decisions(b)
    structural = {k for k in da.keys() | db.keys() if "." not in k and da.get(k) != db.get(k)}
    params = {k for k in da.keys() & db.keys() if "." in k and da[k] != db[k]}
    # a group whose structure changed takes that option's parameters: one decision
    params = {k for k in params if k.split(".")[0] not in structural}
    return structural | params


def test_seeds_are_the_ranked_structures_then_offspring_differ_in_one_decision(
    softmax_plan,
) -> None:  # type: ignore[no-untyped-def]
    result, calls = evolve(softmax_plan, Archive(":memory:"), 10, crossover=0.0)
    n_seeds = len(softmax_plan.designs)
    seeds = result.trials[:n_seeds]
    assert [design(t).structure_key() for t in seeds] == [
        d.structure_key() for d in softmax_plan.designs
    ]
    assert all(t.candidate.parent is None for t in seeds)
    by_id = {t.candidate_id: t for t in result.trials}
    offspring = result.trials[n_seeds:]
    assert len(offspring) == 10 - n_seeds and len(calls) == 10
    for t in offspring:
        parent = by_id[t.candidate.parent]  # type: ignore[index]
        assert len(differing(design(parent), design(t))) == 1, t.note
    assert len({softmax_plan.canonical_key(design(t)) for t in result.trials}) == 10


def test_crossover_takes_each_groups_choice_from_one_of_two_parents(two_group_plan) -> None:  # type: ignore[no-untyped-def]
    result, _ = evolve(two_group_plan, Archive(":memory:"), 10, crossover=1.0)
    by_id = {t.candidate_id: t for t in result.trials}
    crossed = [t for t in result.trials if "crossover with #" in t.note]
    assert crossed
    for t in crossed:
        mate_id = int(t.note.split("crossover with #")[1].split(")")[0].split()[0])
        a, b = design(by_id[t.candidate.parent]), design(by_id[mate_id])  # type: ignore[index]
        child = design(t)
        for i, c in enumerate(child.choices):
            assert c in (a.choices[i], b.choices[i])
        key = two_group_plan.canonical_key
        assert key(child) not in (key(a), key(b))  # some groups from each parent


def test_a_resumed_run_proposes_what_the_whole_run_did(softmax_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    whole, _ = evolve(softmax_plan, Archive(tmp_path / "whole.sqlite"), 9, crossover=0.5)
    archive = Archive(tmp_path / "cut.sqlite")
    evolve(softmax_plan, archive, 5, crossover=0.5)
    resumed, calls = evolve(softmax_plan, archive, 9, crossover=0.5)
    assert len(calls) == 4
    assert [t.candidate.source for t in resumed.trials] == [
        t.candidate.source for t in whole.trials
    ]


def test_evolution_reaches_every_kernel_of_a_small_space(pointwise_plan) -> None:  # type: ignore[no-untyped-def]
    # elementwise-flat on 800 elements: BLOCK 256, 512 or >= 1024 (one kernel), WARPS 2, 4, 8
    result, calls = evolve(pointwise_plan, Archive(":memory:"), 30, crossover=0.5)
    assert result.stopped == "proposer exhausted" and len(calls) == 9
    kernels = {(p["g0.WARPS"], min(p["g0.BLOCK"], 1024)) for p in (c.params for c in calls)}
    assert len(kernels) == 9


def test_a_design_found_incorrect_is_repaired_then_the_repair_is_the_parent(gemm_plan) -> None:  # type: ignore[no-untyped-def]
    """The GEMM's 3xTF32 default fails the check: before any other seed or offspring, the same
    design comes back with IEEE fp32 products, named as its offspring (its fitness 0 would end
    its line); offspring then descend from the repairs, never from an incorrect design (they
    would keep FP32_MATH 0)."""
    judge = accuracy_judge(synthetic_judge(lambda design, params: 1.0, []))
    result, _ = evolve(gemm_plan, Archive(":memory:"), 6, crossover=0.5, judge=judge)
    first, repair = result.trials[:2]
    assert first.verdict.status == Status.INCORRECT
    assert repair.candidate.parent == first.candidate_id
    assert repair.note == f"evolution: accurate: g0.FP32_MATH 0->1 (from #{first.candidate_id})"
    changed = {k for k, v in repair.candidate.params.items() if first.candidate.params[k] != v}
    assert changed == {"g0.FP32_MATH"}
    assert repair.verdict.correct
    incorrect = {t.candidate_id for t in result.trials if t.verdict.status == Status.INCORRECT}
    offspring = [t for t in result.trials
                 if t.candidate.parent is not None and "accurate" not in t.note]
    assert offspring and all(t.candidate.parent not in incorrect for t in offspring)
