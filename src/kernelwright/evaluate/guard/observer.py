"""Watching one forward pass from inside the candidate's process (refusals only, never vouching).

A ``TorchDispatchMode`` active around a checked call:

    poison     every uninitialised allocation (``empty``, ``empty_like``...) is filled with NaN
               (floating) or the dtype's largest value before the candidate sees it, so memory a
               kernel never wrote shows up as NaN in the judge
    count      the framework (ATen) operators dispatched, by name, and the elements each compute
               operator produced (vendor GEMM/convolution/attention counted apart)
    answers    a fingerprint of every framework compute result with as many elements as an
               expected output; if one matches a returned output, the framework computed the
               answer and the candidate's kernels only moved it (a copy kernel after
               ``erf``-spelled GELU, say). Results computed from what the candidate's kernels
               wrote (a sum over a kernel's partial sums) are the kernels' work and don't count
    NumPy      conversions of tensors to NumPy arrays during the call are counted
    below      the profiler (which records every ATen call, from C++ and from other threads
               too) is compared with what the mode saw: compute operators the mode missed ran
               below it (a C++ extension calling ATen, a thread, a mode switched off)

All of it lives in the candidate's process and can be defeated there (leaving the mode, threads);
the guard uses it only to refuse. What the harness guarantees is decided by the judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kernelwright.evaluate.oplog import NON_COMPUTE, VENDOR_OPS, op_name

_ALLOCATORS = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})
_SAMPLES = 16
_PRINT_CHUNK = 1 << 24  # elements a fingerprint converts to float64 at a time
_MAX_PRINTS = 64


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


# Operators that turn host data into a tensor inside a call (torch.tensor, torch.as_tensor).
_FROM_HOST = frozenset({"lift_fresh", "lift_fresh_copy"})


def fingerprint(t: Any) -> tuple[float, ...]:
    """Sum, sum of squares and a few fixed samples of ``t``, in float64."""
    return fingerprints([t])[0]


def fingerprints(tensors: Sequence[Any]) -> list[tuple[float, ...]]:
    """:func:`fingerprint` of each tensor, read back to the host in one copy: the observer
    prints every tensor argument of every launch twice, so each print's operators (each one
    recorded by the profiler) and waits for the device are what an observed call costs."""
    import torch

    parts, sizes = [], []
    for t in tensors:
        flat = t.detach().reshape(-1)
        n = flat.numel()
        if n == 0:
            sizes.append(0)
            continue
        k = min(_SAMPLES, n)
        # In chunks: a float64 copy of the whole tensor would double a 16 GB input's memory
        # inside the candidate's process and fail a call that eager PyTorch runs.
        sums, squares = [], []
        for start in range(0, n, _PRINT_CHUNK):
            x = flat[start:start + _PRINT_CHUNK].double()
            sums.append(x.sum())
            squares.append(x.square().sum())
        if len(sums) > 1:
            sums, squares = [torch.stack(sums).sum()], [torch.stack(squares).sum()]
        # Evenly spaced positions from the first element on (a view: no operator to compute).
        samples = flat[::max((n - 1) // max(k - 1, 1), 1)][:k].double()
        parts += [torch.stack((sums[0], squares[0])), samples]
        sizes.append(2 + k)
    if not parts:
        return [() for _ in sizes]
    values = torch.cat(parts).tolist()
    out, at = [], 0
    for size in sizes:
        out.append(tuple(values[at:at + size]))
        at += size
    return out


def same_print(a: Sequence[float], b: Sequence[float]) -> bool:
    """Two fingerprints of (nearly) the same values."""
    import math

    if len(a) != len(b) or not a:
        return False
    return all(math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-9) for x, y in zip(a, b, strict=True))


_HARNESS_LABEL = "kernelwright.harness"


def _harness() -> Any:
    """A profiler label around the harness's own operators inside an observed call."""
    import torch

    return torch.profiler.record_function(_HARNESS_LABEL)


def _outermost_calls(prof: Any) -> list[list[str]]:
    """The ATen calls a profile recorded with no ATen caller, outside the harness's label, in
    the order they started: each as its own name then the ATen names below it.

    Read from Kineto's raw events (a name, a thread, a start and an end each) and nested by
    their intervals, thread by thread, as the profiler's own event tree is; building that tree
    (``function_events``) costs tens of microseconds an event in Python, and the observer's
    fingerprints record tens of thousands of events in a call of a model."""
    results = getattr(prof, "kineto_results", None)
    if results is None:  # a profiler without Kineto's results: its own event tree
        return _calls_from_tree(prof.function_events)
    from torch._C._autograd import DeviceType

    by_thread: dict[int, list[tuple[int, int, str]]] = {}
    for ev in results.events():
        if ev.device_type() != DeviceType.CPU or ev.is_async():
            continue
        by_thread.setdefault(ev.start_thread_id(), []).append(
            (ev.start_ns(), -ev.end_ns(), ev.name()))
    calls: list[tuple[int, list[str]]] = []
    for events in by_thread.values():
        events.sort()
        # open intervals: (end, is harness or below it, the outermost ATen call it is in)
        stack: list[tuple[int, bool, list[str] | None]] = []
        for start, neg_end, name in events:
            end = -neg_end
            while stack and (start >= stack[-1][0] or end > stack[-1][0]):
                stack.pop()
            harness, outer = stack[-1][1:] if stack else (False, None)
            harness = harness or name == _HARNESS_LABEL
            if name.startswith("aten::") and not harness:
                if outer is None:
                    outer = [name]
                    calls.append((start, outer))
                else:
                    outer.append(name)
            stack.append((end, harness, outer))
    calls.sort(key=lambda call: call[0])
    return [names for _, names in calls]


def _calls_from_tree(events: Any) -> list[list[str]]:
    """:func:`_outermost_calls` from the profiler's event tree (``cpu_parent``,
    ``cpu_children``)."""
    calls = []
    for ev in events:
        name = str(getattr(ev, "name", ""))
        if not name.startswith("aten::") or _below(ev, lambda n: n == _HARNESS_LABEL) or _below(
                ev, lambda n: n.startswith("aten::")):
            continue
        names, stack = [], [ev]
        while stack:
            node = stack.pop()
            if str(getattr(node, "name", "")).startswith("aten::"):
                names.append(str(node.name))
            stack.extend(getattr(node, "cpu_children", []))
        calls.append(names)
    return calls


def _below(ev: Any, named: Any) -> bool:
    parent = getattr(ev, "cpu_parent", None)
    while parent is not None:
        if named(str(getattr(parent, "name", ""))):
            return True
        parent = getattr(parent, "cpu_parent", None)
    return False


def _tensors(value: Any) -> list[Any]:
    """The tensors in an operator's or a launch's arguments, lists of tensors included (the
    inputs of ``cat`` and ``stack`` come as one list)."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for item in value for t in _tensors(item)]
    return []


def _views(value: Any) -> dict[tuple[Any, ...], Any]:
    """The non-empty tensors in a launch's arguments, by storage and view (pointer, offset,
    shape, strides, dtype): one entry for a tensor passed twice."""
    found = {}
    for t in _tensors(value):
        if t.numel():
            found[(_ptr(t), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype)] = t
    return found


def _ptr(t: Any) -> int:
    try:
        return int(t.untyped_storage().data_ptr())
    except Exception:  # a tensor without storage (meta, a subclass): it was written by nobody
        return -1


def _numel(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _make_mode_class() -> type:
    from kernelwright.evaluate.dispatch_mode import mode_base

    class _Observer(mode_base()):  # type: ignore[misc]
        """See :class:`ForwardObserver`."""

        def __init__(self, owner: ForwardObserver) -> None:
            super().__init__()
            self.owner = owner

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            return self.owner.dispatch(func, args, kwargs or {})

    return _Observer


class ForwardObserver:
    """Poisons, counts and fingerprints one forward call; use as a context manager."""

    _mode_cls: type | None = None

    @staticmethod
    def mode_class() -> type:
        """The dispatch mode's class, made once (torch is imported only when it is needed)."""
        if ForwardObserver._mode_cls is None:
            ForwardObserver._mode_cls = _make_mode_class()
        return ForwardObserver._mode_cls

    def __init__(
        self, counts: Counter[str], *, poison: bool = True, watch: Sequence[tuple[int, ...]] = ()
    ) -> None:
        mode_cls = ForwardObserver.mode_class()
        self.counts = counts
        self.poison = poison
        self.watch = {_numel(shape) for shape in watch}
        self.written: set[int] = set()  # storages the candidate's kernels wrote
        self._before: dict[tuple[Any, ...], tuple[float, ...]] = {}
        self.framework_work = 0
        self.vendor_work = 0
        self.prints: list[tuple[str, tuple[float, ...]]] = []
        self.numpy_conversions = 0
        self.intact = True
        self.below: list[str] = []
        self._mode = mode_cls(self)

    def __enter__(self) -> ForwardObserver:
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

        self.intact = self._mode in _get_current_dispatch_mode_stack()
        if self.intact:
            self._mode.__exit__(*exc)

    def dispatch(self, func: Any, args: Any, kwargs: Any) -> Any:
        """Run one ATen operator and record it."""

        name = op_name(func)
        self.counts[name] += 1
        out = func(*args, **kwargs)
        tensors = _tensors(out)
        derived = any(_ptr(a) in self.written for a in _tensors(list(args) + list(kwargs.values())))
        if derived:  # computed from what the candidate's kernels wrote: theirs
            self.written.update(_ptr(t) for t in tensors)
        if self.poison and name in _ALLOCATORS:
            with _harness():
                for t in tensors:
                    poison_fill_(t)
        elif name in _FROM_HOST:
            # Values built from Python data (torch.tensor of a list): no kernel of the
            # candidate's computed them, so an output-sized one is fingerprinted like a
            # framework result (the answer computed in Python, then copied by a kernel)
            for t in tensors:
                if (t.numel() in self.watch and t.is_floating_point()
                        and len(self.prints) < _MAX_PRINTS):
                    with _harness():
                        self.prints.append((name, fingerprint(t)))
        elif name not in NON_COMPUTE:
            for t in tensors:
                if name in VENDOR_OPS:
                    self.vendor_work += t.numel()
                    continue
                self.framework_work += t.numel()
                if (not derived and t.numel() in self.watch and t.is_floating_point()
                        and len(self.prints) < _MAX_PRINTS):
                    with _harness():
                        self.prints.append((name, fingerprint(t)))
        return out

    @contextmanager
    def profiled(self) -> Iterator[None]:
        """Record every ATen call while active (see ``below`` in the module docstring)."""
        from torch.autograd import profiler

        # The autograd profiler with Kineto is what torch.profiler.profile drives, minus its
        # probe for TorchInductor (an import of Inductor and Dynamo: seconds per process).
        with profiler.profile(use_kineto=True, use_cpu=True) as prof:
            yield
        self.below = self._unseen(_outermost_calls(prof))

    def _unseen(self, calls: list[list[str]]) -> list[str]:
        """Compute operators the profiler recorded that the dispatch mode never saw.

        Each outermost ATen call (no ATen caller: called from Python or from C++ code of the
        candidate's) must match an operator the mode saw, itself or one it decomposes into;
        calls made inside an ATen operator are that operator's business. The harness's own
        operators (labelled) are left out.
        """
        seen = Counter(self.counts)
        unseen: set[str] = set()
        for call in calls:
            names = [n.removeprefix("aten::") for n in call]
            if all(n in NON_COMPUTE for n in names):
                continue
            match = next((n for n in names if seen[n] > 0), None)
            if match is None:
                unseen.add(call[0].removeprefix("aten::"))
            else:
                seen[match] -= 1
        return sorted(unseen)

    def before_launch(self, args: Any, kwargs: Any) -> None:
        """Fingerprint a launch's tensor arguments before it runs (unobserved: the harness's own
        operators are not the candidate's)."""
        from torch.utils._python_dispatch import _disable_current_modes

        with _disable_current_modes(), _harness():
            views = _views(list(args) + list(kwargs.values()))
            self._before = dict(zip(views, fingerprints(list(views.values())), strict=True))

    def after_launch(self, args: Any, kwargs: Any) -> None:
        """The arguments whose values the launch changed were written by the candidate, unless
        it only moved values: an argument left with the sum and sum of squares of another
        argument's values before the launch holds a copy or a permutation of them, which makes
        nothing computed from it the candidate's work. Each view is compared with itself (two
        views of one storage are two arguments: comparing one with the other would call an
        untouched storage written)."""
        from torch.utils._python_dispatch import _disable_current_modes

        with _disable_current_modes(), _harness():
            views = {key: t for key, t in _views(list(args) + list(kwargs.values())).items()
                     if key in self._before}
            for key, after in zip(views, fingerprints(list(views.values())), strict=True):
                if after == self._before[key]:
                    continue
                moved = any(other != key and same_print(after[:2], before[:2])
                            for other, before in self._before.items())
                if not moved:
                    self.written.add(key[0])

    def produced(self, result: Any) -> None:
        """A compiled extension's results are the candidate's."""
        self.written.update(_ptr(t) for t in _tensors(result))

    @contextmanager
    def numpy_guard(self) -> Iterator[None]:
        """Count tensor -> NumPy conversions while active."""
        import torch

        originals = (torch.Tensor.numpy, torch.Tensor.__array__)
        observer = self

        def numpy(t: Any, *a: Any, **k: Any) -> Any:
            observer.numpy_conversions += 1
            return originals[0](t, *a, **k)

        def array(t: Any, *a: Any, **k: Any) -> Any:
            observer.numpy_conversions += 1
            return originals[1](t, *a, **k)

        torch.Tensor.numpy, torch.Tensor.__array__ = numpy, array  # type: ignore[method-assign,assignment]
        try:
            yield
        finally:
            torch.Tensor.numpy, torch.Tensor.__array__ = originals  # type: ignore[method-assign]

    def summary(self, outputs: Sequence[Any]) -> dict[str, Any]:
        """Plain values for the judge: counts, work, which framework ops produced an answer."""
        answered: list[str] = []
        for out in outputs:
            if not (out.is_floating_point() and out.numel()):
                continue
            mine = fingerprint(out)
            answered += [op for op, fp in self.prints if same_print(fp, mine)]
        return {
            "op_counts": dict(self.counts),
            "framework_work": self.framework_work,
            "vendor_work": self.vendor_work,
            "answer_from_framework": sorted(set(answered)),
            "numpy_conversions": self.numpy_conversions,
            "mode_intact": self.intact,
            "below_mode": list(self.below),
        }
