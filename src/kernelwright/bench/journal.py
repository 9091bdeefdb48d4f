"""The journal: every bench result appended as one JSON line the moment it arrives.

A killed run loses at most the task it was evaluating. A resumed run reads the journal back
and skips each task whose **key** is there:

    key = sha256(task text sha256 | solution text sha256 or "missing" | options fingerprint)

so a task is re-run when its file, its solution, any option that changes a verdict (device
and, on a GPU, its model: an H100's journal is not resumed on an H200; precision, size,
trials, tolerances, timeout, what is timed, the per-task step) or the code that judged it
(the harness; for an optimize step also the kernel generator) changes, and only then. A
journal can hold many runs; entries of other keys are ignored. A line cut short by a kill is
ignored too.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwright.bench.results import BenchResult
from kernelwright.evaluate.fingerprint import harness_fingerprint
from kernelwright.evaluate.options import EvalOptions

FORMAT = 1


def options_fingerprint(
    options: EvalOptions,
    device: str,
    size: str,
    step: str = "evaluate",
    step_settings: Mapping[str, Any] | None = None,
    gpus: Sequence[str] = (),
) -> dict[str, Any]:
    """The options that change a verdict, with ``auto`` resolved (device and size).

    A random seed (``seed=None``) is not part of it: results under fresh seeds are
    interchangeable. Constraints are named by their type and, when they have one, their
    fingerprint (the clauses that decide what is accepted). ``step_settings`` (an optimize
    budget, say) are included as given, and so are ``gpus``, the models of the GPUs the run
    times on (:func:`kernelwright.evaluate.devices.gpu_models`). Properties checked by the
    harness and the GPUs' models appear only when set, so a fingerprint without them is what it
    always was. The harness's own code is part of it: a verdict judged by an older harness is
    not reused by a newer one.
    """
    rules = options.constraints
    named = None
    if rules is not None:
        named = type(rules).__name__
        digest = getattr(rules, "fingerprint", None)
        if isinstance(digest, str):
            named += f":{digest}"
    checked = {
        key: value for key, value in (
            ("determinism", options.determinism),
            ("shape_ranges", [list(r) for r in options.shape_ranges]),
            ("memory_ceiling_bytes", options.memory_ceiling_bytes),
            ("gpus", sorted(gpus)),
        ) if value
    }
    return {
        "format": FORMAT,
        "step": step,
        "step_settings": dict(step_settings or {}),
        "device": device,
        "size": size,
        "precision": options.precision.value,
        "trials": options.trials,
        "atol": options.atol,
        "rtol": options.rtol,
        "timeout_s": options.timeout_s,
        "baselines": options.baselines,
        "compile_baseline": options.compile_baseline
        if options.compile_baseline is not None
        else device == "cuda",
        "timing": options.timing,
        "guard": options.guard,
        "seed": options.seed,
        "distributions": options.distributions,
        "constraints": named,
        "harness": harness_fingerprint(),
    } | checked


def fingerprint_hash(fingerprint: Mapping[str, Any]) -> str:
    """A short stable digest of a fingerprint."""
    text = json.dumps(fingerprint, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def result_key(task_sha256: str, solution_sha256: str | None, fingerprint: str) -> str:
    """The resume key of one task under one set of options (see the module docstring)."""
    text = f"{task_sha256}|{solution_sha256 or 'missing'}|{fingerprint}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal line: the run that produced a result, and the result."""

    run_id: str
    fingerprint: str
    result: BenchResult


class Journal:
    """An append-only JSONL file of :class:`BenchResult` lines."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def entries(self) -> list[Entry]:
        """Every readable entry, oldest first (a truncated or foreign line is skipped)."""
        if not self.path.exists():
            return []
        entries = []
        with self.path.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    data = json.loads(line)
                    entries.append(
                        Entry(
                            run_id=str(data["run_id"]),
                            fingerprint=str(data["fingerprint"]),
                            result=BenchResult.from_dict(data["result"]),
                        )
                    )
                except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                    continue
        return entries

    def done(self) -> dict[str, Entry]:
        """The latest entry per result key."""
        return {e.result.key: e for e in self.entries() if e.result.key}

    def append(self, result: BenchResult, run_id: str, fingerprint: str) -> None:
        """Write one result and flush it to disk before returning.

        The line goes out in one ``write`` to a file opened for appending, so shards running
        at once can share a journal without interleaving their lines.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(
            {"run_id": run_id, "fingerprint": fingerprint, "result": result.to_dict()}
        )
        data = (line + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, data)
            if written < len(data):  # a regular file takes it whole; finish it all the same
                os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)


def default_journal_path(json_out: str | Path | None) -> Path:
    """Next to ``--json OUT`` (``OUT`` with a ``.jsonl`` suffix), else under the home.

    ``-`` (stdout) counts as no file: the journal then lives at ``$KERNELWRIGHT_HOME/bench/
    journal.jsonl``.
    """
    if json_out is not None and str(json_out) != "-":
        out = Path(json_out)
        return out.with_name(out.name.removesuffix(".json") + ".jsonl")
    from kernelwright.paths import home

    return home() / "bench" / "journal.jsonl"
