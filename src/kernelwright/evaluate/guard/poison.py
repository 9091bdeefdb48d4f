"""Poisoned allocations and an operator log for the candidate's correctness runs.

While active, every uninitialised allocation (``empty``, ``empty_like``, ``empty_strided``,
``new_empty``...) the forward makes, from Python or from C++, is filled with NaN (floating) or
the dtype's largest value (integers) before the candidate sees it. Memory a kernel never writes
therefore shows up as NaN in the judge, whichever allocator or stale buffer it came from. The
same mode counts the framework operators the forward dispatches (see ``oplog``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kernelwright.evaluate.oplog import op_name

_ALLOCATORS = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})


def poison_fill_(t: Any) -> None:
    """Fill ``t`` in place with the poison value of its dtype."""
    import torch

    if t.numel() == 0:
        return
    if t.is_floating_point() or t.is_complex():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).max)


def poisoning_mode(counts: Counter[str], poison: bool = True) -> Any:
    """A ``TorchDispatchMode`` that counts operators and poisons fresh allocations."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class _PoisonAndCount(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            name = op_name(func)
            counts[name] += 1
            out = func(*args, **(kwargs or {}))
            if poison and name in _ALLOCATORS and isinstance(out, torch.Tensor):
                poison_fill_(out)
            return out

    return _PoisonAndCount()
