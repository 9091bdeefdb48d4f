"""Fixtures of the tuning tests: a synthetic measured space written as a CSV."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tuning_synthetic import RESTRICTIONS, write_space_csv

from kernelwright.tuning.measured import MeasuredSpace, load_measured_csv


@pytest.fixture
def space_csv(tmp_path: Path) -> Path:
    return write_space_csv(tmp_path / "synthetic.csv")


@pytest.fixture
def measured(space_csv: Path) -> MeasuredSpace:
    return load_measured_csv(space_csv, restrictions=RESTRICTIONS)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
