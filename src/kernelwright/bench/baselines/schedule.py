"""Parent side of the baseline measurement: two phases under one global deadline.

    phase 0  probe        one child: the device and versions (fails fast without a GPU)
    phase 1  warm         up to ``workers`` children at once, one per (task, precision), each
                          compiling the model once with Inductor's caches in one shared folder
    phase 2  measure      one child per (task, precision); up to ``ahead`` of them prepare at
                          once (CPU inputs, model, compile from the warm caches) while exactly
                          one holds the GPU and times eager and torch.compile; the parent hands
                          the GPU to ready children in suite order

Every child is its own process group, killed with it on a timeout; a crash, a timeout or an
exception is a record, never the end of the run. Past the deadline nothing new starts; what is
left is recorded ``not_run``. Each record is appended (and flushed) to ``OUT/baselines.jsonl``
and to the state folder's ``results.jsonl`` as it is produced; a later call with the same state
folder skips what is already measured (``--fresh`` to redo).

Children are forked from a forkserver that has imported torch (never CUDA), so each starts in
well under a second; the parent itself never imports torch.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, TextIO

from kernelwright.bench.baselines import worker

PHASE_TWO_MIN_S = 8.0  # don't start a measurement with less time than this left
WARM_GRACE_S = 30.0  # compiles running when phase 1's budget ends get this long to finish


class ProbeError(RuntimeError):
    """The device cannot be used at all (no GPU, a broken driver): nothing was measured."""


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
    """Everything the run needs; see ``kernelwright bench baselines --help`` for each knob."""

    items: tuple[Item, ...]
    device: str = "cuda"
    size: str = "full"
    compile: bool = True
    seed: int = 0
    workers: int = 12
    ahead: int = 6
    compile_threads: int = 1
    deadline_s: float = 3600.0
    warm_budget_s: float | None = None  # default: 55% of the deadline
    warm_timeout_s: float = 240.0
    item_timeout_s: float = 180.0
    timing_timeout_s: float = 90.0
    state_dir: Path = Path("baselines-state")
    out_dir: Path | None = None
    fill_cache: bool = False
    fresh: bool = False


@dataclass
class Child:
    """One running child: its process, pipe, phase and what it said."""

    item: Item | None
    proc: Any
    conn: Any
    started: float
    phase: str = "start-up"
    ready: dict[str, Any] | None = None
    go_at: float | None = None
    result: dict[str, Any] | None = None

    def poll(self) -> None:
        """Read every message waiting on the pipe."""
        try:
            while self.conn.poll():
                kind, payload = self.conn.recv()
                if kind == "phase":
                    self.phase = payload
                elif kind == "ready":
                    self.ready = payload
                elif kind == "result":
                    self.result = payload
        except (EOFError, OSError):
            pass

    def kill(self) -> None:
        """Kill the child's whole process group (it and its compile workers)."""
        _kill_group(self.proc)
        self.conn.close()


def _kill_group(proc: Any) -> None:
    """Kill a child's process group (it and its compile workers) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        proc.kill()
    proc.join(10)


class Reaper:
    """Children that sent their result: given a few seconds to exit cleanly (their compile
    workers and CUDA context shut down), then their process group is killed. The scheduler
    moves on at once instead of waiting for them."""

    def __init__(self, grace_s: float = 10.0) -> None:
        self.grace_s = grace_s
        self.children: list[tuple[float, Child]] = []

    def add(self, child: Child) -> None:
        """Let ``child`` finish on its own for up to ``grace_s``."""
        self.children.append((time.monotonic(), child))

    def reap(self, now: float | None = None, force: bool = False) -> None:
        """Kill the children that exited or whose grace is over (all, with ``force``)."""
        now = time.monotonic() if now is None else now
        keep = []
        for since, child in self.children:
            if force or not child.proc.is_alive() or now - since > self.grace_s:
                child.kill()
            else:
                keep.append((since, child))
        self.children = keep


@dataclass
class Recorder:
    """Appends records to the output files as they are produced, and keeps them."""

    files: Sequence[TextIO] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    echo: Callable[[str], None] = print

    def write(self, record: dict[str, Any]) -> None:
        """Record one line everywhere, flushed."""
        self.records.append(record)
        line = json.dumps(record)
        for fh in self.files:
            fh.write(line + "\n")
            fh.flush()


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


def finished_before(
    records: Sequence[dict[str, Any]], config: Config, kind: str = "measure"
) -> set[tuple[str, str]]:
    """(task, precision) pairs an earlier call finished (measured, or failed for good: an error
    or a crash; timeouts and ``not_run`` are tried again) with the same device, size and
    compile setting. ``kind="warm"``: the pairs whose compile is in the caches already."""
    final = ("ok",) if kind == "warm" else ("ok", "eager_only", "error", "crashed")
    done = set()
    for r in records:
        if (
            r.get("kind") == kind
            and r.get("status") in final
            and r.get("size") == config.size
            and r.get("device_kind") == config.device
            and bool(r.get("compiled")) == config.compile
        ):
            done.add((r["task"], r["precision"]))
    return done


def run(config: Config, echo: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Measure every item of ``config`` (see the module docstring); return this call's records."""
    t0 = time.monotonic()
    deadline = t0 + config.deadline_s
    state = config.state_dir.resolve()
    state.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(state / "inductor")
    os.environ["TRITON_CACHE_DIR"] = str(state / "triton")
    os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")
    os.environ.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "1")

    files = [(state / "results.jsonl").open("a")]
    if config.out_dir is not None:
        config.out_dir.mkdir(parents=True, exist_ok=True)
        files.append((config.out_dir / "baselines.jsonl").open("a"))
    recorder = Recorder(files=files, echo=echo)
    try:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["torch", "kernelwright.bench.baselines.worker"])
        info = _probe(ctx, config)
        if info.get("status") != "ok":
            raise ProbeError(
                f"no usable {config.device} device: {info.get('error')}; on a machine without a "
                "GPU use --device cpu --size small"
            )
        echo(
            f"device {info['name']} ({config.device}), torch {info['torch']}, triton "
            f"{info['triton']}, {info['cpus']} CPUs; state {state}"
        )
        recorder.write(
            info | {"kind": "probe", "device_kind": info["kind"], "state_dir": str(state)}
        )
        earlier = [] if config.fresh else previous_records(state)
        done = finished_before(earlier, config)
        todo = [i for i in config.items if (i.task_id, i.precision) not in done]
        if done:
            echo(f"{len(config.items) - len(todo)} item(s) measured by an earlier call: skipped")
        warmed = finished_before(earlier, config, "warm")
        cold = [i for i in todo if (i.task_id, i.precision) not in warmed]
        if config.compile and cold:
            warm_end = t0 + (config.warm_budget_s or 0.55 * config.deadline_s)
            _warm(ctx, config, cold, min(warm_end, deadline), deadline, recorder)
        _measure(ctx, config, todo, deadline, recorder)
    except BaseException:  # Ctrl-C or a bug: children run in their own groups, end them too
        for proc in multiprocessing.active_children():
            _kill_group(proc)
        raise
    finally:
        for fh in files:
            fh.close()
    echo(f"done in {time.monotonic() - t0:.0f} s")
    return recorder.records


def _probe(ctx: Any, config: Config) -> dict[str, Any]:
    child = _start(ctx, worker.probe, {"device": config.device}, None)
    end = time.monotonic() + 120
    while child.result is None and child.proc.is_alive() and time.monotonic() < end:
        wait([child.conn, child.proc.sentinel], timeout=1.0)
        child.poll()
    child.poll()
    result = child.result or {"status": "error", "error": f"exit code {child.proc.exitcode}"}
    child.kill()
    return result


def _spec(config: Config, item: Item, compile_threads: int) -> dict[str, Any]:
    return {
        "task_path": item.task_path,
        "task_id": item.task_id,
        "precision": item.precision,
        "size": config.size,
        "device": config.device,
        "seed": config.seed,
        "compile": config.compile,
        "compile_threads": compile_threads,
        "fill_cache": config.fill_cache,
    }


def _start(ctx: Any, target: Callable[..., None], spec: dict[str, Any], item: Item | None) -> Child:
    parent_end, child_end = ctx.Pipe()
    proc = ctx.Process(target=target, args=(spec, child_end), daemon=False)
    proc.start()
    child_end.close()
    return Child(item=item, proc=proc, conn=parent_end, started=time.monotonic())


def _base(config: Config, item: Item, kind: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "task": item.task_id,
        "group": item.group,
        "family": item.family,
        "precision": item.precision,
        "size": config.size,
        "device_kind": config.device,
        "compiled": config.compile,
    }


def _warm(
    ctx: Any, config: Config, items: list[Item], end: float, deadline: float, recorder: Recorder
) -> None:
    """Phase 1: compile every item once, ``workers`` at a time.

    No compile starts after ``end``; those running then get ``WARM_GRACE_S`` more to finish
    (never past the deadline) before they are killed.
    """
    hard_end = min(end + WARM_GRACE_S, deadline)
    queue = list(items)
    running: list[Child] = []
    threads = config.compile_threads
    recorder.echo(
        f"phase 1: warming Inductor's caches, {len(queue)} compiles, {config.workers} at a time"
    )
    ok = 0
    reaper = Reaper()
    while queue or running:
        reaper.reap()
        now = time.monotonic()
        while queue and len(running) < config.workers and now < end:
            item = queue.pop(0)
            running.append(_start(ctx, worker.warm, _spec(config, item, threads), item))
        if not running:
            break
        wait([c.conn for c in running] + [c.proc.sentinel for c in running], timeout=1.0)
        now = time.monotonic()
        for child in list(running):
            child.poll()
            assert child.item is not None
            item = child.item
            record = None
            if child.result is not None:
                record = _base(config, item, "warm") | child.result
            elif not child.proc.is_alive():
                child.poll()
                record = child.result or {
                    "status": "crashed",
                    "phase": child.phase,
                    "error": f"exit code {child.proc.exitcode}",
                }
                record = _base(config, item, "warm") | record
            elif now - child.started > config.warm_timeout_s or now > hard_end:
                record = _base(config, item, "warm") | {
                    "status": "timeout",
                    "phase": child.phase,
                    "seconds": now - child.started,
                }
            if record is not None:
                if child.result is not None:
                    reaper.add(child)
                else:
                    child.kill()
                running.remove(child)
                recorder.write(record)
                ok += record["status"] == "ok"
                if record["status"] != "ok":
                    recorder.echo(
                        f"  warm {item.label}: {record['status']} "
                        f"{record.get('error', record.get('phase', ''))}"[:200]
                    )
    reaper.reap(force=True)
    failed = len(items) - len(queue) - ok
    recorder.echo(
        f"phase 1: {ok} compiled, {failed} failed, {len(queue)} not started (out of time)"
    )


def _measure(
    ctx: Any, config: Config, items: list[Item], deadline: float, recorder: Recorder
) -> None:
    """Phase 2: prepare ``ahead`` items at once, time them one at a time on the GPU."""
    queue = list(items)
    inflight: list[Child] = []
    gpu: Child | None = None
    threads = config.compile_threads
    order = {item: n for n, item in enumerate(items)}
    recorder.echo(
        f"phase 2: timing {len(queue)} items, one at a time ({config.ahead} prepared ahead)"
    )
    reaper = Reaper()
    cut = 0
    while queue or inflight:
        reaper.reap()
        now = time.monotonic()
        if now >= deadline:
            cut = len(inflight)
            for child in inflight:
                child.kill()
                assert child.item is not None
                recorder.write(
                    _base(config, child.item, "measure")
                    | {"status": "not_run", "error": "deadline", "phase": child.phase}
                )
            break
        while queue and len(inflight) < config.ahead and deadline - now > PHASE_TWO_MIN_S:
            item = queue.pop(0)
            inflight.append(_start(ctx, worker.measure, _spec(config, item, threads), item))
        if not inflight:
            break
        if gpu is None:
            ready = [c for c in inflight if c.ready is not None]
            if ready:
                gpu = min(ready, key=lambda c: order[c.item])  # type: ignore[index]
                gpu.go_at = time.monotonic()
                try:
                    gpu.conn.send(("go",))
                except (BrokenPipeError, OSError):
                    pass
        wait([c.conn for c in inflight] + [c.proc.sentinel for c in inflight], timeout=0.5)
        now = time.monotonic()
        for child in list(inflight):
            child.poll()
            record = _finished(config, child, now)
            if record is None:
                continue
            if child.result is not None:
                reaper.add(child)
            else:
                child.kill()
            inflight.remove(child)
            if child is gpu:
                gpu = None
            recorder.write(record)
            recorder.echo(_line(record))
    reaper.reap(force=True)
    for item in queue:
        recorder.write(_base(config, item, "measure") | {"status": "not_run", "error": "deadline"})
    if queue or cut:
        recorder.echo(
            f"phase 2: {len(queue) + cut} item(s) not run (deadline); run the same command "
            "again to finish them"
        )


def _finished(config: Config, child: Child, now: float) -> dict[str, Any] | None:
    """The child's record once it has one (result, crash or timeout), else None."""
    assert child.item is not None
    base = _base(config, child.item, "measure")
    if child.result is not None:
        return base | child.result
    if not child.proc.is_alive():
        child.poll()
        if child.result is not None:
            return base | child.result
        return base | {
            "status": "crashed",
            "phase": child.phase,
            "error": f"exit code {child.proc.exitcode}",
        }
    if child.go_at is not None and now - child.go_at > config.timing_timeout_s:
        return base | {"status": "timeout", "phase": child.phase, "seconds": now - child.started}
    if child.go_at is None and child.ready is None and now - child.started > config.item_timeout_s:
        return base | {"status": "timeout", "phase": child.phase, "seconds": now - child.started}
    return None


def _line(record: dict[str, Any]) -> str:
    def ms(key: str) -> str:
        value = record.get(key)
        return f"{value:.4g}" if isinstance(value, float) else "-"

    text = (
        f"  {record['task']:<34} {record['precision']:<5} {record['status']:<10} "
        f"eager {ms('eager_ms'):>8} ms  compile {ms('compile_ms'):>8} ms"
    )
    if record.get("error") or record.get("compile_error"):
        text += f"  {record.get('error') or record.get('compile_error')}"[:160]
    return text
