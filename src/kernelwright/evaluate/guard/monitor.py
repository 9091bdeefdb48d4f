"""Seeing (and switching off) a candidate's own kernels, from inside its process.

Installed before the candidate is imported, at class level, so every ``@triton.jit`` function
and every ``load_inline`` / ``load`` extension the candidate builds goes through it:

    count    launches pass through and are counted by kernel name, with the programs each
             Triton launch asks for (its grid, resolved and normalised to plain integers, so
             that what is counted is what runs)
    skip     launches are dropped (Triton) or their tensor results replaced by NaN (extensions):
             if the outputs are still right, the kernels' results were not used
    raise    launches raise :class:`AblatedLaunch`: if the forward still returns the right
             answer, it swallowed the failure and fell back to the framework

The guard reads the counts and ablation results; the monitor itself decides nothing.
Known limits: kernels launched without Triton's launcher or an extension built by
``torch.utils.cpp_extension`` (raw ctypes, CuPy, Numba) are not seen; the ablation makes such a
candidate fail the "must launch a custom kernel" check, which is the safe direction.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any


class AblatedLaunch(RuntimeError):
    """Raised in place of a kernel launch during the ``raise`` ablation."""


class LaunchMonitor:
    """Counts and ablates custom-kernel launches (Triton and C++/CUDA extensions)."""

    MODES = ("count", "skip", "raise")

    def __init__(self) -> None:
        self.mode = "count"
        self.counts: Counter[str] = Counter()
        # Programs launched per kernel name (Triton grids; extensions' grids are not seen).
        self.programs: Counter[str] = Counter()
        # Told of each launch's arguments before and after it runs (the observer of a checked
        # call uses it to learn which tensors the candidate's kernels wrote).
        self.watcher: Any = None
        self._originals: list[tuple[Any, str, Any]] = []
        self.patched: dict[str, Any] = {}

    def install(self) -> None:
        """Patch Triton's launchers and torch's extension loaders (idempotent per instance)."""
        try:
            from triton.runtime.jit import JITFunction

            self._patch_run(JITFunction, "triton")
        except ImportError:
            pass
        try:
            from triton.runtime.interpreter import InterpretedFunction

            self._patch_run(InterpretedFunction, "triton-interpreter")
        except ImportError:
            pass
        try:
            from triton.compiler.compiler import CompiledKernel

            self._patch_compiled(CompiledKernel)
        except ImportError:
            pass
        import torch.utils.cpp_extension as cpp_extension

        for name in ("load_inline", "load"):
            original = getattr(cpp_extension, name)
            wrapped = self._wrap_loader(original)
            self._originals.append((cpp_extension, name, original))
            setattr(cpp_extension, name, wrapped)
            self.patched[f"torch.utils.cpp_extension:{name}"] = wrapped

    def uninstall(self) -> None:
        """Restore what :meth:`install` replaced."""
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)
        self._originals.clear()

    def set_mode(self, mode: str) -> None:
        """Switch between ``count``, ``skip`` and ``raise``."""
        if mode not in self.MODES:
            raise ValueError(f"unknown launch-monitor mode {mode!r}")
        self.mode = mode

    def _patch_run(self, cls: type, label: str) -> None:
        original = cls.run  # type: ignore[attr-defined]
        monitor = self

        @functools.wraps(original)
        def run(fn_self: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("warmup"):  # compiles, launches nothing (a launch of what it returns
                return original(fn_self, *args, **kwargs)  # goes through _patch_compiled)
            name = getattr(getattr(fn_self, "fn", None), "__name__", None) or repr(fn_self)
            key = f"{label}:{name}"
            if monitor.mode == "count" and "grid" in kwargs:
                kwargs = kwargs | {"grid": monitor._counted_grid(key, kwargs["grid"])}
            return monitor._launch(key, name, lambda: original(fn_self, *args, **kwargs),
                                   args, kwargs)

        self._originals.append((cls, "run", original))
        cls.run = run  # type: ignore[attr-defined]
        self.patched[f"{cls.__module__}:{cls.__name__}.run"] = run

    def _patch_compiled(self, cls: type) -> None:
        """A compiled kernel (what ``warmup`` or ``kernel.compile`` returns) launched directly,
        ``compiled[grid](*args)``, bypassing the JIT function's ``run``: the same count,
        ablation and watch."""
        original = cls.__dict__.get("__getitem__")
        if original is None:  # a Triton whose compiled kernels launch otherwise
            return
        monitor = self

        @functools.wraps(original)
        def getitem(ck_self: Any, grid: Any) -> Any:
            name = str(getattr(ck_self, "name", None) or repr(ck_self))
            # the JIT path's key: a kernel counts as one whichever way it was launched (a
            # wrapper that launches its compiled kernel once it has one would otherwise show
            # checked and timed calls running different kernels)
            key = f"triton:{name}"
            programs = grid_programs(grid)
            runner = original(ck_self, programs[0])

            def launch(*args: Any, **kwargs: Any) -> Any:
                if monitor.mode == "count":
                    monitor.programs[key] += programs[1]
                return monitor._launch(key, name, lambda: runner(*args, **kwargs), args, kwargs)

            return launch

        self._originals.append((cls, "__getitem__", original))
        cls.__getitem__ = getitem  # type: ignore[index,attr-defined]
        self.patched[f"{cls.__module__}:{cls.__name__}.__getitem__"] = getitem

    def _counted_grid(self, key: str, grid: Any) -> Any:
        """``grid`` (a tuple, or a function of the launch's arguments that Triton calls once
        per launch) in a form that adds the programs it resolves to under ``key``."""
        if not callable(grid):
            normal, programs = grid_programs(grid)
            self.programs[key] += programs
            return normal

        def resolved(meta: Any) -> tuple[int, ...]:
            normal, programs = grid_programs(grid(meta))
            self.programs[key] += programs
            return normal

        return resolved

    def _launch(self, key: str, name: str, call: Callable[[], Any], args: Any,
                kwargs: Any) -> Any:
        """One launch of a custom kernel: ablated, or counted and watched."""
        if self.mode == "raise":
            raise AblatedLaunch(f"kernel {name} disabled by the harness's ablation run")
        if self.mode == "skip":
            return None
        self.counts[key] += 1
        watcher = self.watcher
        if watcher is None:
            return call()
        watcher.before_launch(args, kwargs)
        result = call()
        watcher.after_launch(args, kwargs)
        return result

    def _wrap_loader(self, loader: Callable[..., Any]) -> Callable[..., Any]:
        monitor = self

        @functools.wraps(loader)
        def load(*args: Any, **kwargs: Any) -> Any:
            module = loader(*args, **kwargs)
            return _MonitoredExtension(module, monitor)

        return load

    def call_extension(self, name: str, fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        """Run (or ablate) a single call into a compiled extension."""
        if self.mode == "raise":
            raise AblatedLaunch(f"extension function {name} disabled by the ablation run")
        if self.mode == "skip":
            result = fn(*args, **kwargs)
            return _poison_like(result)
        self.counts[f"extension:{name}"] += 1
        watcher = self.watcher
        if watcher is None:
            return fn(*args, **kwargs)
        watcher.before_launch(args, kwargs)
        result = fn(*args, **kwargs)
        watcher.after_launch(args, kwargs)
        watcher.produced(result)
        return result


def grid_programs(grid: Any) -> tuple[tuple[int, ...], int]:
    """A launch grid as a tuple of plain integers, and how many programs it launches. The
    launch then gets the normalised tuple: a grid object that answers differently each time it
    is read cannot launch other than what was counted."""
    dims = (grid,) if isinstance(grid, int) else tuple(grid)
    normal = tuple(int(d) for d in dims)
    programs = 1
    for d in normal:
        programs *= max(d, 0)
    return normal, programs


class _MonitoredExtension:
    """A compiled extension module whose functions go through a :class:`LaunchMonitor`."""

    def __init__(self, module: Any, monitor: LaunchMonitor) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_monitor", monitor)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._module, name)
        if not callable(attr) or name.startswith("__"):
            return attr
        monitor = self._monitor

        @functools.wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            return monitor.call_extension(name, attr, args, kwargs)

        return call


def _poison_like(result: Any) -> Any:
    import torch

    if isinstance(result, torch.Tensor):
        if result.is_floating_point():
            return torch.full_like(result, float("nan"))
        return torch.full_like(result, _int_sentinel(result.dtype))
    if isinstance(result, list | tuple):
        return type(result)(_poison_like(r) for r in result)
    return result


def _int_sentinel(dtype: Any) -> Any:
    import torch

    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).max
