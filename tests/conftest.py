"""Shared test set-up: a clean environment per test, GPU tests skipped without a GPU."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Triton's interpreter multiplies blocks with NumPy: on cores the test workers share, OpenBLAS's
# threads make a 128 x 32 x 128 product ~25x slower (1.5 ms against 60 us). One BLAS thread for
# the test processes and every process they start (the harness's own processes on the CPU get
# one OpenMP thread, which OpenBLAS reads too); set before anything loads NumPy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

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


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One baseline and ceiling cache for the tests of a test process: what it holds is a fact
    about this machine, and measuring the eager baseline again in every test costs minutes."""
    return tmp_path_factory.mktemp("kwcache")


@pytest.fixture(scope="session")
def shared_executor() -> Iterator[Any]:
    """One executor (a ``SubprocessExecutor`` keeping a spare) for the tests of a test process
    that judge candidates through the real harness but are not about an executor's own life (its
    spares, fork servers, faults): its fork server for the CPU's candidates starts once, not once
    a test (seconds of CPU: it imports torch and Triton). Each candidate still runs in a process
    of its own, forked for it; the spare started after one test's candidate serves the next's."""
    from kernelwright.evaluate.executor import SubprocessExecutor

    executor = SubprocessExecutor(prestart=1)
    yield executor
    executor.close()


@pytest.fixture(autouse=True)
def clean_environ(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, shared_cache: Path
) -> None:
    """No TRITON_* or KERNELWRIGHT_* leaks between tests; a private kernelwright home (a test
    about caching sets its own KERNELWRIGHT_CACHE)."""
    import os

    for name in list(os.environ):
        if name.startswith(("TRITON_", "KERNELWRIGHT_")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KERNELWRIGHT_HOME", str(tmp_path_factory.mktemp("kwhome")))
    monkeypatch.setenv("KERNELWRIGHT_CACHE", str(shared_cache))


@pytest.fixture
def fixtures() -> Path:
    """The folder of fixture tasks and solutions."""
    return FIXTURES
