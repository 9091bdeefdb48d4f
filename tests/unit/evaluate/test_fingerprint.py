"""The harness's fingerprint follows its source: any edit to a file of kernelwright.evaluate."""

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
