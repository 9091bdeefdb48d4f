"""``kernelwright constraints formulate`` and ``check``."""

from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.constraints import load_constraints

TEXT = "Don't use atomics. Tiles multiples of 64. Keep peak extra memory under 1 GB. Be nice."


def test_formulate_shows_the_model_and_writes_a_file_check_reads(tmp_path):
    path = tmp_path / "c.toml"
    made = CliRunner().invoke(app, ["constraints", "formulate", TEXT, "-o", str(path)])
    assert made.exit_code == 0, made.output
    for shown in ("Formal constraint model", "forbidden construct", "BLOCK_M % 64 == 0",
                  "memory ceiling", "not understood: 'Be nice'"):  # fmt: skip
        assert shown in made.output
    rules = load_constraints(path)
    assert rules.forbidden_constructs == ("atomics",)
    assert "BLOCK_M % 64 == 0" in rules.space.restrictions
    checked = CliRunner().invoke(app, ["constraints", "check", str(path)])
    assert checked.exit_code == 0, checked.output
    assert "10 clauses, no conflict" in checked.output and "memory ceiling" in checked.output


def test_a_conflict_is_one_line_exit_two_and_nothing_is_written(tmp_path):
    path = tmp_path / "c.toml"
    text = "BLOCK_M <= 32; BLOCK_M a multiple of 64"
    ran = CliRunner().invoke(app, ["constraints", "formulate", text, "-o", str(path)])
    assert ran.exit_code == 2
    assert "error: the constraints conflict: `BLOCK_M <= 32` and `BLOCK_M % 64 == 0`" in ran.output
    assert not path.exists()


def test_check_refuses_a_conflicting_or_malformed_file(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[space]\nrestrictions = ["WARPS >= 16", "WARPS <= 4"]\n')
    ran = CliRunner().invoke(app, ["constraints", "check", str(path)])
    assert ran.exit_code == 2 and "`WARPS >= 16` and `WARPS <= 4` cannot all hold" in ran.output
    path.write_text('[space]\nrestrictions = ["open(1)"]\n')
    ran = CliRunner().invoke(app, ["constraints", "check", str(path)])
    assert ran.exit_code == 2 and "only min(), max() and abs() may be called" in ran.output


def test_empty_requirements_are_bad_input():
    ran = CliRunner().invoke(app, ["constraints", "formulate", " "])
    assert ran.exit_code == 2 and "no requirements given" in ran.output


def test_an_endpoint_without_a_model_is_bad_input():
    ran = CliRunner().invoke(
        app, ["constraints", "formulate", "no atomics", "--llm-base-url", "http://localhost:1"]
    )
    assert ran.exit_code == 2 and "--llm-base-url needs --llm SPEC" in ran.output
