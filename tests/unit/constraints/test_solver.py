"""Space restrictions: SymPy formulas, and satisfiability, conflicts, redundancy and equivalence
over finite domains."""

import pytest

from kernelwright.constraints.expressions import canonical, equivalent, expand_derived, formula
from kernelwright.constraints.solver import analyse
from kernelwright.constraints.space_rules import SpaceRules
from kernelwright.errors import ConfigError

BLOCK = {"BLOCK": (16, 32, 64, 128)}
GEMM = {
    "BLOCK_M": (16, 32, 64, 128, 256),
    "BLOCK_N": (16, 32, 64, 128, 256),
    "BLOCK_K": (16, 32, 64, 128),
    "STAGES": (2, 3, 4, 5),
}
SHARED = (("shared_bytes", "(BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * STAGES * 4"),)


def test_a_divisibility_implied_by_a_stricter_one_is_redundant():
    found = analyse(SpaceRules(("BLOCK % 64 == 0", "BLOCK % 128 == 0")), BLOCK)
    assert found.ok and found.redundant == (("BLOCK % 64 == 0", ("BLOCK % 128 == 0",)),)


def test_a_bound_and_a_divisibility_that_exclude_each_other_conflict():
    found = analyse(SpaceRules(("BLOCK <= 32", "BLOCK % 64 == 0")), BLOCK)
    assert not found.ok and found.conflicts == (("BLOCK <= 32", "BLOCK % 64 == 0"),)


def test_a_conflict_names_only_the_clauses_involved():
    rules = SpaceRules(("BLOCK >= 16", "BLOCK <= 32", "BLOCK_M >= 64", "BLOCK % 64 == 0"))
    found = analyse(rules, {**BLOCK, "BLOCK_M": (32, 64)})
    assert found.conflicts == (("BLOCK <= 32", "BLOCK % 64 == 0"),)


def test_the_same_restrictions_without_the_conflict_are_satisfiable():
    found = analyse(SpaceRules(("BLOCK <= 64", "BLOCK % 64 == 0")), BLOCK)
    assert found.ok and found.sizes == {"BLOCK <= 64": 3, "BLOCK % 64 == 0": 2}


def test_a_restriction_true_everywhere_in_the_domain_is_redundant():
    found = analyse(SpaceRules(("BLOCK % 16 == 0",)), BLOCK)
    assert found.redundant == (("BLOCK % 16 == 0", ()),)
    assert "always true here" in found.lines()[0]


def test_equivalent_spellings_are_found_symbolically_and_over_the_domain():
    found = analyse(SpaceRules(("BLOCK <= 64", "not BLOCK > 64", "BLOCK < 65")), BLOCK)
    assert ("BLOCK <= 64", "not BLOCK > 64") in found.equivalent  # the same SymPy formula
    assert ("BLOCK <= 64", "BLOCK < 65") in found.equivalent  # the same configurations
    assert equivalent("BLOCK <= 64", "not BLOCK > 64")
    assert not equivalent("BLOCK <= 64", "BLOCK < 65")  # differ over the reals


def test_names_without_a_domain_are_reported_not_checked():
    found = analyse(SpaceRules(("BLOCK <= 32", "SPLIT > 2")), BLOCK)
    assert found.unchecked == (("SPLIT > 2", "no finite domain for SPLIT"),)
    declared = analyse(SpaceRules(("SPLIT > 2",), domains=(("SPLIT", (1, 2)),)), BLOCK)
    assert declared.conflicts == (("SPLIT > 2",),)


def test_derived_quantities_are_expanded_before_solving():
    rules = SpaceRules(("shared_bytes <= 16384", "STAGES <= 3", "BLOCK_M >= 128"), SHARED)
    found = analyse(rules, GEMM)
    # the smallest such tiles, (128 * 16 + 16 * 16) * 2 stages * 4 bytes, take 18 KiB
    assert found.conflicts == (("shared_bytes <= 16384", "BLOCK_M >= 128"),)
    assert analyse(SpaceRules(rules.restrictions[:2], SHARED), GEMM).ok
    assert expand_derived("shared_bytes <= 1", dict(SHARED)).startswith("(BLOCK_M * BLOCK_K")


def test_formulas_are_built_from_the_whitelisted_tree():
    assert str(formula("BLOCK_M % 64 == 0")) == "Eq(Mod(BLOCK_M, 64), 0)"
    assert canonical("shared_bytes <= 96*1024", dict(SHARED)).endswith("<= 98304")
    assert canonical("0 == BLOCK % 64") == canonical("BLOCK % 64 == 0")


@pytest.mark.parametrize(
    "text",
    ["__import__('os').system('true') == 0", "BLOCK.real > 1", "[BLOCK][0] > 1", "lambda: 1"],
)
def test_anything_outside_the_whitelist_is_refused_before_sympy_sees_it(text):
    with pytest.raises(ConfigError):
        formula(text)
    with pytest.raises(ConfigError):
        SpaceRules((text,))


def test_candidate_parameters_are_screened_group_by_group():
    rules = SpaceRules(("BLOCK_M % 64 == 0", "shared_bytes <= 98304"), SHARED)
    params = {"g0.BLOCK_M": 64, "g0.BLOCK_N": 128, "g0.BLOCK_K": 64, "g0.STAGES": 4}
    broken = rules.violations({**params, "g1.BLOCK_M": 32, "g1.WARPS": 4})
    assert [v.reason for v in broken] == [
        "group g0: BLOCK_K=64, BLOCK_M=64, BLOCK_N=128, STAGES=4 breaks `shared_bytes <= 98304`",
        "group g1: BLOCK_M=32 breaks `BLOCK_M % 64 == 0`",
    ]
    assert all(v.check == "constraint-space" for v in broken)
    assert rules.violations({"g0.WARPS": 4}) == []  # no restriction reads only WARPS


def test_a_restriction_no_library_value_meets_rules_kernels_out_without_a_conflict():
    found = analyse(SpaceRules(("TILE <= 512", "BLOCK <= 64")), {**BLOCK, "TILE": (1024, 2048)})
    assert found.ok and found.excluded == (("TILE <= 512", ("TILE",)),)
    assert "kernels with these parameters are never proposed" in found.lines()[0]
    declared = SpaceRules(("TILE <= 512",), domains=(("TILE", (1024, 2048)),))
    assert analyse(declared, {}).conflicts == (("TILE <= 512",),)  # the rules' own domain
