"""Snapshots taken inside the candidate's process before its code is imported.

    identities   the exact objects behind the timers, synchronisation, comparison and harness
                 functions; a candidate that rebinds one (``time.perf_counter = ...``,
                 ``torch.cuda.Event.elapsed_time = ...``) is caught when the snapshot is compared
    threads      the Python threads alive; a thread the candidate leaves running can do work the
                 timer never sees
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
    "kernelwright.evaluate.timing:time_forward",
    "kernelwright.evaluate.timing:_time_cuda",
    "kernelwright.evaluate.timing:_time_cpu",
    "kernelwright.evaluate.timing:_perf_counter",
    "kernelwright.evaluate.runs:build_model",
    "kernelwright.evaluate.runs:as_output_list",
    "kernelwright.evaluate.runs:clone_inputs",
    "kernelwright.evaluate.transport:save_for_peer",
    "kernelwright.evaluate.precision:apply_policy",
)


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

    @classmethod
    def take(cls, extra: dict[str, Any] | None = None) -> IdentitySnapshot:
        """Resolve every watched name now."""
        objects = {spec: _resolve(spec) for spec in WATCHED}
        objects.update(extra or {})  # "module:Class.attr" names, like WATCHED
        return cls(objects)

    def changed(self) -> list[str]:
        """Names whose object is no longer the one in the snapshot."""
        return sorted(name for name, obj in self.objects.items() if _resolve(name) is not obj)


def live_threads() -> dict[int, str]:
    """Python threads alive now, ident -> name."""
    return {t.ident or 0: t.name for t in threading.enumerate() if t.is_alive()}
