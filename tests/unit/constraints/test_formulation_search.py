"""The search over formulations (constraints.search): paths meaning the same model are one node,
a conflicting reading is avoided, and the value follows the module's formula."""

from __future__ import annotations

from kernelwright.constraints.formulate import read
from kernelwright.constraints.search import Reading, search

DOMAINS = {"BLOCK_M": (16, 32, 64, 128), "WARPS": (1, 2, 4, 8)}


def reading(fragment: str, restated: str, rank: int) -> Reading:
    found, left = read(restated, DOMAINS)
    assert found and not left, restated
    return Reading(fragment, restated, tuple(found), rank)


def test_readings_that_admit_the_same_tiles_meet_in_one_node() -> None:
    # over 16..128 both readings admit {64, 128}: two paths, one formulation
    readings = [[reading("big tiles", "keep BLOCK_M >= 64", 0),
                 reading("big tiles", "BLOCK_M a multiple of 64", 1)],
                [reading("few warps", "keep WARPS <= 4", 0)]]
    found = search("big tiles. few warps.", [], readings, DOMAINS)
    assert found.merged >= 1
    assert [r.restated for r in found.chosen] == ["keep BLOCK_M >= 64", "keep WARPS <= 4"]
    assert found.formulation.ok and found.formulation.unrecognised == ()


def test_the_search_avoids_a_conflict_across_fragments() -> None:
    # each first reading alone is fine; together they admit no tile: one must give way
    readings = [[reading("aligned", "BLOCK_M a multiple of 64", 0)],
                [reading("small", "keep BLOCK_M <= 32", 0),
                 reading("small", "keep BLOCK_M <= 64", 1)]]
    found = search("aligned. small.", [], readings, DOMAINS)
    assert [r.restated for r in found.chosen] == ["BLOCK_M a multiple of 64",
                                                  "keep BLOCK_M <= 64"]
    assert found.formulation.ok
    assert any("also possible: 'keep BLOCK_M <= 32'" in w for w in found.formulation.warnings)


def test_with_nothing_to_decide_the_fixed_clauses_are_the_model() -> None:
    fixed, _ = read("don't use atomics", DOMAINS)
    found = search("don't use atomics", fixed, [], DOMAINS)
    assert [c.formal for c in found.formulation.clauses] == ["atomics"] and found.chosen == ()
