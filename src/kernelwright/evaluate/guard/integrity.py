"""Snapshots taken inside the candidate's process before its code is imported.

    identities   the exact objects behind the timers, synchronisation, serialisation and harness
                 functions; a candidate that rebinds one (``time.perf_counter = ...``,
                 ``json.dumps = ...``) is caught when the snapshot is compared
    threads      the Python threads and the operating-system threads alive; a thread the
                 candidate leaves running can do work outside the observed call
    policy       the precision flags (TF32) the policy set

The objects are held, not just their ids, so an id can't be reused by a new object.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from typing import Any

# "module:attribute.path" of everything whose identity the harness relies on.
WATCHED = (
    "time:perf_counter",
    "time:perf_counter_ns",
    "time:monotonic",
    "time:time",
    "torch:equal",
    "torch:allclose",
    "torch:isnan",
    "torch:isfinite",
    "torch:empty",
    "torch:save",
    "torch.cuda:synchronize",
    "torch.cuda:Event",
    "torch.cuda:Event.record",
    "torch.cuda:Event.elapsed_time",
    "torch.cuda:Event.synchronize",
    "torch.cuda:current_stream",
    "torch:Tensor.clone",
    "torch:Tensor.copy_",
    "torch:Tensor.fill_",
    "torch:Tensor.to",
    "torch:Tensor.cpu",
    "torch:Tensor.detach",
    "torch.nn:Module.__call__",
    "torch.nn:Module._call_impl",
    "torch.nn:Module.to",
    "triton.testing:do_bench",
    "kernelwright.evaluate.candidate_worker:Runner.do_call",
    "kernelwright.evaluate.candidate_worker:Runner.do_batch",
    "kernelwright.evaluate.candidate_worker:Runner.do_share",
    "kernelwright.evaluate.candidate_worker:Runner.do_observe",
    "kernelwright.evaluate.candidate_worker:_checked_outputs",
    "kernelwright.evaluate.candidate_worker:_fresh_views",
    "kernelwright.evaluate.guard.observer:ForwardObserver.dispatch",
    "kernelwright.evaluate.guard.observer:ForwardObserver.summary",
    "kernelwright.evaluate.guard.observer:ForwardObserver.__exit__",
    "kernelwright.evaluate.guard.observer:fingerprint",
    "kernelwright.evaluate.guard.observer:fingerprints",
    "kernelwright.evaluate.guard.observer:_views",
    "kernelwright.evaluate.guard.observer:_outermost_calls",
    "kernelwright.evaluate.channel:Channel.send",
    "kernelwright.evaluate.transport:describe_cuda",
    "kernelwright.evaluate.transport:pack",
    "kernelwright.evaluate.runs:build_model",
    "kernelwright.evaluate.runs:as_output_list",
    "kernelwright.evaluate.precision:apply_policy",
    "kernelwright.evaluate.precision:policy_flags",
    "kernelwright.evaluate.guard.integrity:IdentitySnapshot.changed",
    "kernelwright.evaluate.guard.integrity:live_threads",
    "kernelwright.evaluate.guard.integrity:os_threads",
    "json:dumps",
    "gc:collect",
)


# Classes of the harness whose every attribute is watched (methods, class attributes, the
# dispatch mode's __torch_dispatch__): replacing one that no list names is as good as
# replacing one that a list names.
WATCHED_CLASSES = (
    "kernelwright.evaluate.guard.observer:ForwardObserver",
    "kernelwright.evaluate.guard.monitor:LaunchMonitor",
    "kernelwright.evaluate.guard.integrity:IdentitySnapshot",
    "kernelwright.evaluate.candidate_worker:Runner",
    "kernelwright.evaluate.channel:Channel",
)


def _watched_classes() -> dict[str, dict[str, Any]]:
    """``spec -> {attribute: object}`` of every class in :data:`WATCHED_CLASSES` and of the
    observer's dispatch mode (made now if it was not yet)."""
    from kernelwright.evaluate.guard.observer import ForwardObserver

    found = {spec: _resolve(spec) for spec in WATCHED_CLASSES}
    found["kernelwright.evaluate.guard.observer:ForwardObserver.mode_class()"] = (
        ForwardObserver.mode_class())
    return {spec: dict(vars(c)) for spec, c in found.items() if isinstance(c, type)}


def _resolve(spec: str) -> Any:
    module_name, _, path = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError:
        return None
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


@dataclass(slots=True)
class IdentitySnapshot:
    """The objects behind :data:`WATCHED` (plus any extra named objects) at one moment."""

    objects: dict[str, Any] = field(default_factory=dict)
    classes: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def take(cls, extra: dict[str, Any] | None = None) -> IdentitySnapshot:
        """Resolve every watched name, and every attribute of the watched classes, now."""
        objects = {spec: _resolve(spec) for spec in WATCHED}
        objects.update(extra or {})  # "module:Class.attr" names, like WATCHED
        return cls(objects, _watched_classes())

    def changed(self) -> list[str]:
        """Names whose object is no longer the one in the snapshot, and attributes of the
        watched classes added, removed or replaced since."""
        found = [name for name, obj in self.objects.items() if _resolve(name) is not obj]
        now = _watched_classes()
        for spec, before in self.classes.items():
            after = now.get(spec, {})
            found += [f"{spec}.{attr}" for attr in sorted(before.keys() | after.keys())
                      if before.get(attr) is not after.get(attr)]
        return sorted(found)


def os_threads() -> list[int]:
    """Operating-system threads of this process (/proc/self/task): native and ``_thread``
    threads included, which ``threading`` does not list."""
    import os

    try:
        return sorted(int(t) for t in os.listdir("/proc/self/task"))
    except OSError:
        return []


def os_thread_names(tids: list[int]) -> list[str]:
    """``name (tid)`` of each of this process's threads in ``tids`` that is still alive. The
    names come from the process itself (any thread can rename itself): they explain a verdict,
    never decide one."""
    names = []
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                names.append(f"{f.read().strip()} ({tid})")
        except OSError:
            continue
    return names


def live_threads() -> dict[int, str]:
    """Python threads alive now, ident -> name."""
    return {t.ident or 0: t.name for t in threading.enumerate() if t.is_alive()}
