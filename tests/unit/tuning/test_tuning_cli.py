"""``kernelwright tune replay`` end to end on a tiny CSV written here."""

import json
import re

from tuning_synthetic import write_space_csv
from typer.testing import CliRunner

from kernelwright.cli import app


def test_replay_prints_scores_and_writes_the_trace(tmp_path):
    csv_path = write_space_csv(tmp_path / "tiny.csv")
    trace = tmp_path / "trace.jsonl"
    args = [
        "tune",
        "replay",
        str(csv_path),
        "--strategy",
        "random",
        "--budget",
        "12",
        "--repeats",
        "2",
        "--seed",
        "3",
    ]
    result = CliRunner().invoke(app, [*args, "--trace", str(trace)])
    assert result.exit_code == 0, result.output
    assert "score vs random" in result.output and "best / optimum" in result.output
    assert re.search(r"time per suggestion: \d+\.\d ms", result.output)
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert len(lines) == 24
    assert lines[0].keys() == {"repeat", "step", "config"}
    assert [(x["repeat"], x["step"]) for x in lines[:2]] == [(0, 0), (0, 1)]
    assert set(lines[0]["config"]) == {"block_x", "block_y", "tile", "use_smem"}


def test_unknown_strategy_is_a_one_line_error(tmp_path):
    csv_path = write_space_csv(tmp_path / "tiny.csv")
    result = CliRunner().invoke(app, ["tune", "replay", str(csv_path), "--strategy", "nope"])
    assert result.exit_code == 2
    assert "unknown strategy 'nope'" in result.output


def test_strategies_are_listed():
    result = CliRunner().invoke(app, ["tune", "strategies"])
    assert result.exit_code == 0 and "bo-discovered" in result.output
