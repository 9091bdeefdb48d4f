"""The README's commands run as written from a fresh clone (those quick enough, with no GPU)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.tuning.measured import load_measured_csv

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def readme_command(prefix: str) -> list[str]:
    """The first README line that starts with ``prefix``, split like a shell would."""
    lines = [line.strip() for line in README.read_text().splitlines()]
    line = next(line for line in lines if line.startswith(prefix))
    return shlex.split(line.split(" #")[0])


def test_the_bundled_tuning_space_is_the_measured_table_with_its_license():
    space = load_measured_csv(ROOT / "data" / "tuning" / "convolution_A100.csv")
    assert len(space.space) == 4362 and space.best_ms == pytest.approx(0.5536)
    assert "MIT License" in (ROOT / "data" / "tuning" / "LICENSE.benchmark_hub").read_text()


# Slow (a Bayesian-optimisation replay of 40 steps, 10 times): the command's parts are checked by
# tuning/test_tuning_cli.py's test_replay_prints_scores_and_writes_the_trace (the replay command),
# tuning/test_tuning_replay.py's test_bo_beats_random_on_a_synthetic_space (the bo strategy's
# replay) and the test above (the bundled table)
@pytest.mark.slow
def test_the_readme_replay_command_runs_as_written(monkeypatch):
    command = readme_command("kernelwright tune replay")
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, command[1:])
    assert result.exit_code == 0, result.output
    assert "score vs random" in result.output and "convolution_A100" in result.output
