"""optimize --workers: candidates judged by worker processes with judges of their own, every
verdict archived once, and no worker left behind (the real harness, on the CPU)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from kernelwright.archive import Archive
from kernelwright.cli import app

TASK = Path(__file__).parents[1] / "fixtures" / "tasks" / "scale_bias.py"


def _spawned_children() -> list[int]:
    """Live children of this process started by multiprocessing's spawn (the pool's workers;
    not its resource tracker, which lives as long as this process by design)."""
    me, found = os.getpid(), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and b"spawn_main" in cmdline:
            found.append(int(pid))
    return found


def test_two_workers_judge_the_search_s_candidates(tmp_path: Path, capture_in_process: None
                                                   ) -> None:
    # the graph is captured in this process (where is not the point here: see the fixture)
    archive, summary = tmp_path / "a.sqlite", tmp_path / "s.json"
    res = CliRunner().invoke(app, [
        "optimize", str(TASK), "--device", "cpu", "--budget-candidates", "2", "--workers", "2",
        "--archive", str(archive), "--json", str(summary), "--quiet"])
    assert res.exit_code == 0, res.output
    found = json.loads(summary.read_text())
    assert found["evaluated"] == 2 and found["correct"] == 2 and found["stopped"] == "budget"
    with Archive(archive) as store:
        records = store.history(run_id=found["run_id"])
    assert len(records) == 2 and all(r.verdict.correct for r in records)
    assert sorted(n["id"] for n in found["tree"]) == sorted(r.candidate_id for r in records)
    assert not _spawned_children()
    bad = CliRunner().invoke(app, ["optimize", str(TASK), "--workers", "0"])
    assert bad.exit_code == 2 and "--workers must be at least 1" in bad.output
