"""Measuring a suite's baselines through the harness, one (task, precision) at a time.

Each item is timed exactly as an evaluation times its baselines (:func:`~kernelwright.evaluate.
harness.measure_baselines`: the task's own model in a process of its own, eager and under
torch.compile, on the judge's clock), so the table and every later ``eval`` agree. Records are
appended (and flushed) to the state folder's ``results.jsonl`` and to ``OUT/baselines.jsonl``
as they are produced; a later call with the same state folder skips what is measured
(``fresh`` to redo). Past the deadline nothing new starts and what is left is recorded
``not_run``; a task that fails is a record, never the end of the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO


@dataclass(frozen=True, slots=True)
class Item:
    """One (task, precision) to measure."""

    task_id: str
    task_path: str
    group: str
    family: str
    precision: str

    @property
    def label(self) -> str:
        """``06_softmax_rows/bf16``."""
        return f"{self.task_id}/{self.precision}"


@dataclass(frozen=True, slots=True)
class Config:
    """A single run of ``bench baselines``."""

    items: tuple[Item, ...]
    device: str
    size: str
    compile: bool
    seed: int = 0
    deadline_s: float = 3600.0
    item_timeout_s: float = 900.0
    state_dir: Path = Path("baselines")
    out_dir: Path | None = None
    fill_cache: bool = False
    fresh: bool = False


def previous_records(state_dir: Path) -> list[dict[str, Any]]:
    """Records of earlier calls kept in the state folder (unreadable lines skipped)."""
    path = state_dir / "results.jsonl"
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def finished_before(records: Sequence[dict[str, Any]], config: Config) -> set[tuple[str, str]]:
    """(task, precision) pairs an earlier call finished (measured, or failed for good) with the
    same device, size and compile setting; ``not_run`` is tried again."""
    done = set()
    for r in records:
        if (
            r.get("kind") == "measure"
            and r.get("status") in ("ok", "eager_only", "error")
            and r.get("size") == config.size
            and r.get("device_kind") == config.device
            and r.get("compiled") == config.compile
        ):
            done.add((r["task"], r["precision"]))
    return done


def run(config: Config, echo: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Measure every item not measured before; the records of this call."""
    state = config.state_dir.resolve()
    state.mkdir(parents=True, exist_ok=True)
    skip = set() if config.fresh else finished_before(previous_records(state), config)
    files: list[TextIO] = [open(state / "results.jsonl", "a")]  # noqa: SIM115
    if config.out_dir is not None:
        config.out_dir.mkdir(parents=True, exist_ok=True)
        files.append(open(config.out_dir / "baselines.jsonl", "a"))  # noqa: SIM115
    records: list[dict[str, Any]] = []
    start = time.monotonic()
    earlier = sum(1 for item in config.items if (item.task_id, item.precision) in skip)
    if earlier:
        echo(f"{earlier} item(s) measured by an earlier call: skipped (--fresh measures again)")
    try:
        for item in config.items:
            if (item.task_id, item.precision) in skip:
                continue
            if time.monotonic() - start > config.deadline_s:
                record = _base(config, item) | {"status": "not_run", "error": "deadline"}
            else:
                record = _measure(config, item)
            echo(_line(record))
            records.append(record)
            for f in files:
                f.write(json.dumps(record) + "\n")
                f.flush()
    finally:
        for f in files:
            f.close()
    return records


def _measure(config: Config, item: Item) -> dict[str, Any]:
    from kernelwright.errors import KernelwrightError
    from kernelwright.evaluate.harness import measure_baselines
    from kernelwright.evaluate.options import EvalOptions
    from kernelwright.evaluate.verdict import stats_of
    from kernelwright.records import Precision

    options = EvalOptions(
        device=config.device,
        precision=Precision(item.precision),
        size=config.size,
        seed=config.seed,
        compile_baseline=config.compile,
        timeout_s=config.item_timeout_s,
        cache_baselines=config.fill_cache,
    )
    started = time.monotonic()
    base = _base(config, item)
    try:
        found, prepared = measure_baselines(item.task_path, options)
    except (KernelwrightError, OSError) as exc:
        return base | {"status": "error", "error": str(exc)[:500],
                       "seconds": time.monotonic() - started}
    eager, compiled = stats_of(found.get("eager")), stats_of(found.get("compile"))
    status = "ok" if eager and (compiled or not config.compile) else (
        "eager_only" if eager else "error")
    info = prepared.get("device_info") or {}
    return base | {
        "status": status,
        "eager_ms": eager.median_ms if eager else None,
        "compile_ms": compiled.median_ms if compiled else None,
        "bytes": prepared.get("bytes"),
        "flops": prepared.get("flops"),
        "gpu": info.get("name"),
        "torch": info.get("torch"),
        "triton": info.get("triton"),
        "cuda": info.get("cuda"),
        "notes": prepared.get("notes") or [],
        "seconds": time.monotonic() - started,
    }


def _base(config: Config, item: Item) -> dict[str, Any]:
    return {
        "kind": "measure",
        "task": item.task_id,
        "group": item.group,
        "family": item.family,
        "precision": item.precision,
        "size": config.size,
        "device_kind": config.device,
        "compiled": config.compile,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def _line(record: dict[str, Any]) -> str:
    def ms(key: str) -> str:
        value = record.get(key)
        return f"{value:.4f}" if isinstance(value, int | float) else "-"

    return (
        f"  {record['task']:<34} {record['precision']:<5} {record['status']:<10} "
        f"eager {ms('eager_ms')} ms  compile {ms('compile_ms')} ms  {record.get('error', '')}"
    )
