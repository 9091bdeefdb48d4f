"""The harness's fingerprint follows its source: any edit to a file of kernelwright.evaluate;
the generator's, any file of kernelwright.design or kernelwright.skills."""

import importlib
from pathlib import Path

fingerprint = importlib.import_module("kernelwright.evaluate.fingerprint")


def test_the_fingerprint_changes_with_any_file_of_the_harness(tmp_path: Path,
                                                              monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "guard").mkdir()
    (tmp_path / "clock.py").write_text("CALIBRATE = 1\n")
    (tmp_path / "guard" / "checks.py").write_text("LIMIT = 0.8\n")
    monkeypatch.setattr(fingerprint, "__file__", str(tmp_path / "fingerprint.py"))

    def current() -> str:
        fingerprint.harness_fingerprint.cache_clear()
        return fingerprint.harness_fingerprint()

    first = current()
    assert current() == first
    (tmp_path / "guard" / "checks.py").write_text("LIMIT = 0.9\n")
    second = current()
    assert second != first
    (tmp_path / "guard" / "checks.py").rename(tmp_path / "guard" / "moved.py")
    assert current() != second
    fingerprint.harness_fingerprint.cache_clear()


def test_the_generator_fingerprint_changes_with_a_template_or_a_skill_file(
    tmp_path: Path, monkeypatch  # type: ignore[no-untyped-def]
) -> None:
    generator = importlib.import_module("kernelwright.design.fingerprint")
    (tmp_path / "design" / "families").mkdir(parents=True)
    (tmp_path / "skills").mkdir()
    (tmp_path / "evaluate").mkdir()
    (tmp_path / "design" / "families" / "template.py").write_text("BLOCK = 1024\n")
    (tmp_path / "skills" / "rows.toml").write_text("score = 1.5\n")
    monkeypatch.setattr(generator, "__file__", str(tmp_path / "design" / "fingerprint.py"))

    def current() -> str:
        generator.generator_fingerprint.cache_clear()
        return generator.generator_fingerprint()

    first = current()
    (tmp_path / "evaluate" / "judge.py").write_text("x = 1\n")  # another package's file
    assert current() == first
    (tmp_path / "skills" / "rows.toml").write_text("score = 2.0\n")
    second = current()
    assert second != first
    (tmp_path / "design" / "families" / "template.py").write_text("BLOCK = 512\n")
    assert current() != second
    generator.generator_fingerprint.cache_clear()
