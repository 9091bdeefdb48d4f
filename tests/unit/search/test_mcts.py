"""MCTS over design decisions with a synthetic judge: it spends more of the budget under the
better structure, widens progressively, records parents, and resumes from the archive."""

from __future__ import annotations

import math
from pathlib import Path

from doubles.judges import accuracy_judge, synthetic_judge

from kernelwright.archive import Archive
from kernelwright.evaluate import EvalOptions
from kernelwright.records import Candidate, Status
from kernelwright.search import Budget, Trial, run_search
from kernelwright.search.decisions import DecisionSpace
from kernelwright.search.mcts import MCTSProposer, _Tree
from kernelwright.search.templates import TemplateProposer
from kernelwright.tuning.strategies import get_strategy


def onepass_fast(design, params) -> float:  # type: ignore[no-untyped-def]
    """row-onepass at 0.5 ms (4x eager), the looped designs at 4 ms (eager is 2 ms)."""
    return 0.5 if "row-onepass" in design["skills"] else 4.0


def search(plan, archive, budget: int, seed: int = 0, run_id: str = "mcts", judge=None):  # type: ignore[no-untyped-def]
    """MCTS over ``plan`` judged by ``judge`` (default: :func:`onepass_fast`'s times)."""
    calls: list[Candidate] = []
    result = run_search(
        plan.task,
        MCTSProposer(DecisionSpace.of_plan(plan), plan.render),
        EvalOptions(device="cpu"),
        archive,
        Budget(candidates=budget),
        run_id,
        seed=seed,
        evaluate_fn=judge or synthetic_judge(onepass_fast, calls),
        equivalence=plan.candidate_key,
    )
    return result, calls


def root_of(trial: Trial, by_id: dict[int, Trial]) -> Trial:
    while trial.candidate.parent is not None:
        trial = by_id[trial.candidate.parent]
    return trial


def test_mcts_spends_more_under_the_better_structure(softmax_plan) -> None:  # type: ignore[no-untyped-def]
    result, _ = search(softmax_plan, Archive(":memory:"), 14)
    by_id = {t.candidate_id: t for t in result.trials}
    roots = [t for t in result.trials if t.candidate.parent is None]
    assert len(roots) == len(softmax_plan.designs)  # every ranked structure was tried once
    per_root = {r.candidate_id: 0 for r in roots}
    for t in result.trials:
        per_root[root_of(t, by_id).candidate_id] += 1
    onepass = next(r for r in roots if "row-onepass" in r.candidate.design["skills"])
    assert per_root[onepass.candidate_id] > max(
        n for cid, n in per_root.items() if cid != onepass.candidate_id
    )
    assert "row-onepass" in result.best.candidate.design["skills"]  # type: ignore[union-attr]


def test_children_are_one_parameter_moves_admitted_progressively(softmax_plan) -> None:  # type: ignore[no-untyped-def]
    result, _ = search(softmax_plan, Archive(":memory:"), 12)
    by_id = {t.candidate_id: t for t in result.trials}
    for t in result.trials:
        if t.candidate.parent is None:
            continue
        parent = by_id[t.candidate.parent].candidate
        changed = {k for k, v in t.candidate.params.items() if parent.params.get(k) != v}
        assert len(changed) == 1 and t.candidate.design["groups"] == parent.design["groups"]
    tree = _Tree.rebuild(DecisionSpace.of_plan(softmax_plan), result.trials)
    for node in tree.nodes.values():
        # a node held its k-th child only once it had been evaluated about k^2 times
        assert len(node.children) <= math.ceil(max(node.visits - 1, 1) ** 0.5)


def test_parents_are_archived_and_the_same_seed_resumes_with_the_same_proposal(
    softmax_plan, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    whole, _ = search(softmax_plan, Archive(tmp_path / "whole.sqlite"), 8)
    archive = Archive(tmp_path / "cut.sqlite")
    staged = run_search(  # the archive already holds some of the same sources, other parents
        softmax_plan.task,
        TemplateProposer(
            softmax_plan.designs,
            softmax_plan.render,
            softmax_plan.library,
            get_strategy("neighbours"),
            structures=1,
        ),
        EvalOptions(device="cpu"),
        archive,
        Budget(candidates=12),
        "staged",
        evaluate_fn=synthetic_judge(onepass_fast, []),
    )
    shared = {t.candidate.source for t in staged.trials} & {
        t.candidate.source for t in whole.trials
    }
    assert len(shared) > 1
    search(softmax_plan, archive, 5)  # killed after 5 evaluations ...
    resumed, calls = search(softmax_plan, archive, 8)  # ... and run again: 3 more
    assert len(calls) == 3
    assert [t.candidate.source for t in resumed.trials] == [
        t.candidate.source for t in whole.trials
    ]
    records = archive.history(softmax_plan.task.sha256, "mcts")
    ids = [r.candidate_id for r in records]
    parents = [r.candidate.parent for r in records]
    assert any(p is not None for p in parents)
    assert all(p is None or p in ids[: ids.index(c)] for p, c in zip(parents, ids, strict=True))


def test_mcts_evaluates_each_kernel_of_a_small_space_once_then_stops(pointwise_plan) -> None:  # type: ignore[no-untyped-def]
    # elementwise-flat on 800 elements: BLOCK 256, 512 or >= 1024 (one kernel), WARPS 2, 4, 8
    result, calls = search(pointwise_plan, Archive(":memory:"), 30)
    assert result.stopped == "proposer exhausted"
    assert len(calls) == 9 and result.pruned_equivalent == 0
    kernels = {(p["g0.WARPS"], min(p["g0.BLOCK"], 1024)) for p in (c.params for c in calls)}
    assert len(kernels) == 9


def test_the_constraints_restrict_the_parameter_moves(softmax_plan) -> None:  # type: ignore[no-untyped-def]
    from kernelwright.constraints import Constraints
    from kernelwright.constraints.space_rules import SpaceRules

    base = softmax_plan.designs[0]
    free = DecisionSpace.of_plan(softmax_plan).parameter_moves(base)
    rules = Constraints(space=SpaceRules(("WARPS <= 4",)))
    kept = DecisionSpace.of_plan(softmax_plan, rules.restrict(softmax_plan.library))
    moves = kept.parameter_moves(base)
    warps = [m[0].choices[0].params.get("WARPS") for m in moves]
    assert any(m[0].choices[0].params.get("WARPS", 0) > 4 for m in free)
    assert all(w is None or w <= 4 for w in warps) and len(moves) < len(free)


def test_a_design_found_incorrect_is_repaired_then_the_repair_carries_its_line(gemm_plan) -> None:  # type: ignore[no-untyped-def]
    """The GEMM's 3xTF32 default fails the check: the next proposal is that design's child with
    IEEE fp32 products (value 0 alone would keep PUCT from descending into it); from then on the
    repair, not the incorrect design, takes the parameter moves (those would keep FP32_MATH 0)."""
    judge = accuracy_judge(synthetic_judge(lambda design, params: 1.0, []))
    result, _ = search(gemm_plan, Archive(":memory:"), 6, judge=judge)
    first, repair = result.trials[:2]
    assert first.verdict.status == Status.INCORRECT
    assert repair.candidate.parent == first.candidate_id
    assert repair.note == "mcts: accurate: g0.FP32_MATH 0->1"
    changed = {k for k, v in repair.candidate.params.items() if first.candidate.params[k] != v}
    assert changed == {"g0.FP32_MATH"}
    assert repair.verdict.correct
    incorrect = {t.candidate_id for t in result.trials if t.verdict.status == Status.INCORRECT}
    repairs = [t for t in result.trials if t.note.startswith("mcts: accurate")]
    assert sorted(t.candidate.parent for t in repairs) == sorted(incorrect)  # type: ignore[type-var]
    # every other child descends from a correct design, and so is correct itself
    moves = [t for t in result.trials if t.candidate.parent is not None and t not in repairs]
    assert moves and all(t.candidate.parent not in incorrect for t in moves)
    assert all(t.verdict.correct for t in moves)
