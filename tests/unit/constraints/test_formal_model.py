"""The formal model's parts in a constraints file: space restrictions, forbidden constructs,
properties, dtypes; their enforcement on sources, parameters and tuning spaces."""

import dataclasses
import hashlib
import json
import textwrap

import pytest

from kernelwright.constraints import Constraints, load_constraints
from kernelwright.constraints.formulate import formulate, review
from kernelwright.constraints.properties import DtypePolicy
from kernelwright.constraints.space_rules import SpaceRules, library_domains
from kernelwright.constraints.writer import to_toml
from kernelwright.design.choices import Design, GroupChoice
from kernelwright.errors import ConfigError
from kernelwright.records import Precision
from kernelwright.search.tunable import DesignSpace
from kernelwright.skills.library import SkillLibrary

ATOMIC_TRITON = """
import triton
import triton.language as tl


@triton.jit
def k(out_ptr, x_ptr):
    tl.atomic_add(out_ptr, tl.load(x_ptr))
"""

ATOMIC_CUDA = '''
from torch.utils.cpp_extension import load_inline

SRC = """
__global__ void k(float* out, const float* x) { atomicAdd(out, x[threadIdx.x]); }
"""
'''

CLEAN = """
import triton
import triton.language as tl


@triton.jit
def k(out_ptr, x_ptr):
    tl.store(out_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, 16)), axis=0))
"""


def test_atomics_are_refused_in_triton_and_in_cuda_strings():
    rules = Constraints(forbidden_constructs=("atomics",))
    (triton_hit,) = rules.violations(ATOMIC_TRITON)
    assert triton_hit.check == "constraint-forbidden-construct"
    assert "line 8: uses triton.language.atomic_add" in triton_hit.reason
    (cuda_hit,) = rules.violations(ATOMIC_CUDA)
    assert "CUDA source calls atomicAdd" in cuda_hit.reason
    assert rules.violations(CLEAN) == []
    assert Constraints().violations(ATOMIC_TRITON) == []


def test_the_red_team_atomics_solution_breaks_the_construct_clause(fixtures):
    source = (fixtures / "solutions" / "mse_loss__atomics.py").read_text()
    (hit,) = Constraints(forbidden_constructs=("atomics",)).violations(source)
    assert "uses triton.language.atomic_add (atomics are forbidden)" in hit.reason


def test_determinism_is_handed_to_the_harness_and_changes_the_run():
    from kernelwright.constraints.properties import Properties
    from kernelwright.evaluate.options import EvalOptions

    rules = Constraints(properties=Properties(deterministic=True))
    assert rules.apply(EvalOptions()).determinism
    assert not Constraints().apply(EvalOptions()).determinism
    assert rules.fingerprint != Constraints().fingerprint


def test_parameters_are_screened_only_when_given():
    rules = Constraints(space=SpaceRules(("BLOCK_M % 64 == 0",)))
    assert rules.violations(CLEAN) == []
    (hit,) = rules.violations(CLEAN, {"g0.BLOCK_M": 32})
    assert hit.check == "constraint-space" and "`BLOCK_M % 64 == 0`" in hit.reason


def test_restrictions_prune_the_tuning_space_built_from_the_skills():
    library = SkillLibrary.builtin()
    rules = Constraints(space=SpaceRules(("BLOCK_M % 64 == 0", "WARPS <= 4")))
    skill = library.get("gemm-tiled")
    params = {p.name: p.values[-1] for p in skill.params}
    params.update(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, STAGES=2, WARPS=4)
    base = Design((GroupChoice(0, "gemm", skill.id, skill.variant, params=params),))
    before = DesignSpace.of(base, library).space
    after = DesignSpace.of(base, rules.restrict(library)).space
    assert 0 < len(after) < len(before)
    assert set(after.column("g0_BLOCK_M")) == {64, 128, 256} & set(before.column("g0_BLOCK_M"))
    assert set(after.column("g0_WARPS")) == {4}
    assert rules.restrict(library).get("row-onepass").constraints == (
        library.get("row-onepass").constraints + ("WARPS <= 4",)
    )


def test_a_formulated_model_round_trips_through_its_file(tmp_path):
    text = (
        "Results must be bit-identical run to run. No more than 96 KB of shared memory. "
        "BLOCK_M a multiple of 64. Must work for any batch size from 1 to 4096. "
        "bf16 storage, fp32 math. Don't use atomics. Keep peak extra memory under 1 GB. "
        "Only Triton. Never call torch.matmul."
    )
    model = formulate(text)
    assert model.constraints is not None
    path = tmp_path / "c.toml"
    path.write_text(to_toml(model.constraints, model.clauses))
    assert "# from: Don't use atomics" in path.read_text()
    loaded = load_constraints(path)
    assert dataclasses.replace(loaded, path="") == model.constraints
    reviewed = review(loaded)
    assert reviewed.ok and {c.kind for c in reviewed.clauses} == {c.kind for c in model.clauses}


def test_older_files_keep_their_fingerprint():
    rules = Constraints(backends=("triton",), forbidden_ops=("torch.matmul",))
    old = [rules.backends, rules.precision, rules.forbidden_ops, rules.signatures]
    digest = hashlib.sha256(json.dumps(old, default=str, sort_keys=True).encode()).hexdigest()
    assert rules.fingerprint == digest[:10]
    stricter = dataclasses.replace(rules, forbidden_constructs=("atomics",))
    assert stricter.fingerprint != rules.fingerprint


def test_dtypes_give_the_precision_and_must_agree_with_it(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[dtypes]\nstorage = "bf16"\nmath = "fp32"\n')
    assert load_constraints(path).precision is Precision.BF16
    path.write_text('precision = "fp32"\n[dtypes]\nstorage = "bf16"\nmath = "fp32"\n')
    with pytest.raises(ConfigError, match="is precision 'bf16', but precision is 'fp32'"):
        load_constraints(path)
    with pytest.raises(ConfigError, match="not a policy"):
        DtypePolicy("bf16", "tf32").precision  # noqa: B018


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('forbidden_constructs = ["gotos"]', "forbidden_constructs \\['gotos'\\] unknown"),
        ('[space]\nrestrictions = ["import os"]', "not an expression"),
        ('[space]\nrules = ["BLOCK > 1"]', "unknown key\\(s\\) \\['rules'\\]"),
        ("[space]\ndomains = { BLOCK = [] }", "domains.BLOCK must be a non-empty list"),
        ('[properties]\ndeterministic = "yes"', "deterministic must be true or false"),
        ("[properties]\nmemory_ceiling_bytes = -1", "memory_ceiling_bytes must be a positive"),
        ('[properties]\nshape_ranges = [{ dim = "batch", low = 8, high = 1 }]', "0 < low <= high"),
        ('[dtypes]\nstorage = "fp8"\nmath = "fp32"', "storage = 'fp8'"),
    ],
)
def test_bad_new_sections_are_errors(tmp_path, body, message):
    path = tmp_path / "c.toml"
    path.write_text(textwrap.dedent(body) + "\n")
    with pytest.raises(ConfigError, match=message):
        load_constraints(path)


def test_library_domains_gather_every_skills_values():
    domains = library_domains(SkillLibrary.builtin())
    assert {16, 32, 64, 128, 256} <= set(domains["BLOCK_M"])
    assert list(domains["WARPS"]) == sorted(domains["WARPS"])
