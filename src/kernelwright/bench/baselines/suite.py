"""A suite's baselines, start to finish: plan the items, measure them, write the outputs.

    plan(TASKS) -> schedule_items(suite, precisions) -> measurer.run(config)
        -> collect(config, task ids): the latest record per (task, precision), this call's
           and earlier calls' (the state folder keeps them)
        -> write_outputs(OUT): baselines.md (a section with date, GPU, commit and command),
           baselines.json (the rows); baselines.jsonl is written as it goes

``kernelwright bench baselines`` is this module's command line.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwright.bench.baselines import measurer, table
from kernelwright.bench.results import BenchItem


def schedule_items(
    suite: Sequence[BenchItem], precisions: Sequence[str]
) -> tuple[measurer.Item, ...]:
    """One item per (task, precision), precision-major: a run cut short by its deadline still
    has a complete first column."""
    return tuple(
        measurer.Item(i.task_id, i.task_path, i.group, i.family, p)
        for p in precisions
        for i in suite
    )


@dataclass(frozen=True, slots=True)
class BaselineReport:
    """What a call measured, merged with what earlier calls with the same state measured."""

    rows: list[table.Row]
    probe: dict[str, Any]
    counts: dict[str, int]  # this call's measurement records per status
    started: str


def measure(config: measurer.Config, task_ids: Sequence[str], echo: Any = print) -> BaselineReport:
    """Measure what is left and collect the table rows of ``task_ids``, in that order."""
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    records = measurer.run(config, echo=echo)
    everything = measurer.previous_records(config.state_dir.resolve())
    wanted = set(task_ids)
    rows = [r for r in table.rows(everything, list(task_ids)) if r.task in wanted]
    counts: dict[str, int] = {}
    for r in records:
        if r.get("kind") == "measure":
            counts[r["status"]] = counts.get(r["status"], 0) + 1
    probe = next((r for r in everything[::-1] if r.get("gpu")), {})
    return BaselineReport(rows=rows, probe=probe, counts=counts, started=started)


def provenance(report: BaselineReport, command: str, commit: str, size: str) -> dict[str, str]:
    """The header of the markdown section: where and how the numbers were made."""
    p = report.probe
    return {
        "date": report.started,
        "GPU": str(p.get("gpu", "?")),
        "software": f"torch {p.get('torch')}, triton {p.get('triton')}, CUDA {p.get('cuda')}",
        "commit": commit,
        "command": command,
        "size": f"{size} ({len(report.rows)} tasks)",
    }


def write_outputs(
    report: BaselineReport, header: dict[str, str], precisions: Sequence[str], out_dir: Path
) -> list[Path]:
    """``baselines.md`` and ``baselines.json`` in ``out_dir``; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / "baselines.md"
    md.write_text(table.markdown(report.rows, header, precisions) + "\n")
    rows = out_dir / "baselines.json"
    rows.write_text(
        json.dumps(
            {"header": header, "rows": [r.by_precision | {"task": r.task} for r in report.rows]},
            indent=1,
        )
    )
    return [md, rows]
