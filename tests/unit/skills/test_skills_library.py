"""The skill library: data files, conditions with reasons, defaults, constraints, registries."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.errors import ConfigError
from kernelwright.skills import SkillLibrary
from kernelwright.skills.base import Condition, evaluate_constraint, skill_from_dict
from kernelwright.skills.conditions import GroupFacts, check, condition


def facts(**kw: object) -> GroupFacts:
    base: dict[str, object] = dict(
        kind="reduction",
        schedule="row",
        domain=(4096, 8192),
        reduced_length=8192,
        parallel_length=4096,
        n_passes=2,
    )
    return GroupFacts(**{**base, **kw})  # type: ignore[arg-type]


def test_builtin_skills_load_and_cover_every_group_kind() -> None:
    lib = SkillLibrary.builtin()
    kinds = {"pointwise", "reduction", "scan", "select", "pool", "gemm", "conv", "attention"}
    assert {s.applies_to for s in lib} == kinds
    for s in lib:
        assert s.intent and s.expected_gain > 0
        for p in s.params:
            assert list(p.values) == sorted(p.values), f"{s.id}.{p.name} values must ascend"
    assert lib.get("row-onepass").param("ROWS").tune


def test_constraints_are_arithmetic_only() -> None:
    assert evaluate_constraint(
        "LOOP_BLOCK * LOOP_ROWS <= 16384", {"LOOP_BLOCK": 4096, "LOOP_ROWS": 4}
    )
    assert not evaluate_constraint(
        "LOOP_BLOCK * LOOP_ROWS <= 16384", {"LOOP_BLOCK": 8192, "LOOP_ROWS": 4}
    )
    assert evaluate_constraint("UNKNOWN > 3", {})  # vacuous
    with pytest.raises(ConfigError):
        evaluate_constraint("__import__('os')", {})


def test_unknown_condition_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="known: .*reduced_length_at_most"):
        check(Condition("no_such_check"), facts())


def test_registries_refuse_duplicates(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="already registered"):
        condition("reduced_innermost")(lambda f: None)  # type: ignore[arg-type,return-value]
    (tmp_path / "dup.toml").write_text(
        'id = "row-onepass"\nintent = "x"\napplies_to = "reduction"\n'
        'variant = "onepass"\nexpected_gain = 1.0\n'
    )
    with pytest.raises(ConfigError, match="defined twice"):
        SkillLibrary.load([tmp_path])


def test_skill_files_are_validated(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="lacks the key 'intent'"):
        skill_from_dict(
            {"id": "x", "applies_to": "pointwise", "variant": "flat", "expected_gain": 1}
        )
    (tmp_path / "bad.toml").write_text("id = [")
    with pytest.raises(ConfigError, match="not valid TOML"):
        SkillLibrary.load([tmp_path])
    (tmp_path / "bad.toml").write_text(
        'id = "mine"\nintent = "x"\napplies_to = "scan"\nvariant = "scan"\nexpected_gain = 1.5\n'
    )
    assert SkillLibrary.load([tmp_path]).get("mine").expected_gain == 1.5
    base = {"id": "x", "intent": "i", "applies_to": "pointwise", "variant": "flat",
            "expected_gain": 1}
    assert skill_from_dict({**base, "relieves": ["tail"]}).relieves == ("tail",)
    with pytest.raises(ConfigError, match="relieves slow; the diagnoses are memory-bound"):
        skill_from_dict({**base, "relieves": ["slow"]})
