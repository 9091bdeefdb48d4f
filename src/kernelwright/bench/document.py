"""The JSON document of a bench run (``--json``), and reading it back (reports, comparisons).

    {
      "format": "kernelwright-bench/1",
      "run":      {run_id, step, device, size, precision, representative, options,
                   started_at, finished_at, resumed, not_run, notes, counts, n_correct,
                   versions, commit},
      "summary":  {exactly kernelwright.bench.metrics.SUMMARY_KEYS},
      "families": {family: {the same keys}},
      "tasks":    [BenchResult.to_dict(), ...]
    }

docs/bench.md describes every field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernelwright.bench.results import BenchResult
from kernelwright.bench.runner import BenchRun
from kernelwright.provenance import source_commit

FORMAT = "kernelwright-bench/1"


def bench_document(run: BenchRun) -> dict[str, Any]:
    """The whole run as one JSON-ready dict."""
    results = run.results
    return {
        "format": FORMAT,
        "run": {
            "run_id": run.run_id,
            "step": run.step,
            "device": run.fingerprint["device"],
            "device_name": _device_name(results),
            "size": run.fingerprint["size"],
            "precision": run.fingerprint["precision"],
            "representative": run.representative,
            "baselines": list(run.baselines),
            "options": run.fingerprint,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "resumed": run.resumed,
            "not_run": list(run.not_run),
            "notes": list(run.notes),
            "n_correct": sum(1 for r in results if r.correct),
            "counts": run.counts(),
            "versions": _versions(results),
            "commit": source_commit(),
        },
        "summary": run.summary(),
        "families": run.families(),
        "tasks": [r.to_dict() for r in results],
    }


class DocumentWriter:
    """Writes a run's document to every path after each task (a ``run_bench`` checkpoint), so
    whatever stops the run, the files hold every finished task."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self.finished = 0  # tasks in the last document written

    def __call__(self, run: BenchRun) -> None:
        """Write ``bench_document(run)`` to each path."""
        self.finished = len(run.results)
        if self.paths:
            document = bench_document(run)
            for path in self.paths:
                write_json(document, path)


def write_json(document: Mapping[str, Any], path: str | Path) -> None:
    """Write the document atomically (a reader never sees half of it)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(document, indent=2))
    tmp.replace(target)


def read_document(path: str | Path) -> tuple[dict[str, Any], list[BenchResult]]:
    """A document written by :func:`write_json` and its tasks as :class:`BenchResult`."""
    from kernelwright.errors import ConfigError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        data = None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{path}: not a kernelwright bench JSON document ({FORMAT})")
    return data, [BenchResult.from_dict(t) for t in data.get("tasks", [])]


def _device_name(results: tuple[BenchResult, ...]) -> str | None:
    for r in results:
        if r.verdict is not None and r.verdict.device is not None:
            return r.verdict.device.name
    return None


def _versions(results: tuple[BenchResult, ...]) -> dict[str, str | None]:
    from kernelwright import __version__

    versions: dict[str, str | None] = {"kernelwright": __version__}
    for r in results:
        if r.verdict is not None and r.verdict.device is not None:
            d = r.verdict.device
            return versions | {"torch": d.torch, "triton": d.triton, "cuda": d.cuda}
    return versions
