"""Shared test set-up: a clean environment per test, GPU tests skipped without a GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
# Test doubles live in tests/doubles (importable as ``doubles``), not in the package.
sys.path.insert(0, str(Path(__file__).parent))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (run on the GPU machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def clean_environ(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No TRITON_* or KERNELWRIGHT_* leaks between tests; a private kernelwright home."""
    import os

    for name in list(os.environ):
        if name.startswith(("TRITON_", "KERNELWRIGHT_")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KERNELWRIGHT_HOME", str(tmp_path_factory.mktemp("kwhome")))


@pytest.fixture
def fixtures() -> Path:
    """The folder of fixture tasks and solutions."""
    return FIXTURES
