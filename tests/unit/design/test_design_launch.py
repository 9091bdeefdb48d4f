"""The wrappers' ``_launch``: Triton's launch path once per specialisation, then the compiled
kernel it returned, with the arguments in the kernel's parameter order; and ``_descriptor``:
Triton's layout checks once per layout."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from kernelwright.design.kernel.common import WRAPPER_HELPERS


class CompiledKernel:
    """Stands in for Triton's compiled kernel (the helper checks the type's name): indexing
    by a grid gives a launcher, which records what it launched."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def __getitem__(self, grid: Any) -> Any:
        return lambda *args: self.log.append(("compiled", grid, args))


class JitKernel:
    """Stands in for a ``@triton.jit`` function of parameters (x_ptr, n, BLOCK, FAST): its
    launch path logs the call and returns the compiled kernel (None: the interpreter's)."""

    arg_names = ["x_ptr", "n", "BLOCK", "FAST"]
    pre_run_hooks: list[Any] = []

    def __init__(self, compiles: bool = True) -> None:
        self.log: list[Any] = []
        self.compiles = compiles

    def __getitem__(self, grid: Any) -> Any:
        def run(*args: Any, **meta: Any) -> Any:
            self.log.append(("jit", grid, args, meta))
            return CompiledKernel(self.log) if self.compiles else None

        return run


@pytest.fixture
def launch(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    scope: dict[str, Any] = {"torch": torch}
    exec(WRAPPER_HELPERS["_launch"], scope)
    return scope["_launch"]


def test_later_launches_go_to_the_compiled_kernel_in_parameter_order(launch: Any) -> None:
    kernel = JitKernel()
    x = torch.zeros(64)
    launch(kernel, (4,), x, 64, BLOCK=16, FAST=True, num_warps=4)
    launch(kernel, (8, 2), x, 64, BLOCK=16, FAST=True, num_warps=4)
    assert [entry[0] for entry in kernel.log] == ["jit", "compiled"]
    assert kernel.log[0] == ("jit", (4,), (x, 64), {"BLOCK": 16, "FAST": True, "num_warps": 4})
    # the grid padded to three dimensions; constexprs after the positional arguments
    assert kernel.log[1] == ("compiled", (8, 2, 1), (x, 64, 16, True))


@pytest.mark.parametrize(
    "changed",
    [
        {"x": torch.zeros(64, dtype=torch.float64)},  # another dtype
        {"x": torch.zeros(65)[1:]},  # 4 bytes past a 16-byte boundary
        {"n": 48},  # a scalar's value (Triton specialises on multiples of 16 and on 1)
        {"BLOCK": 32},  # a constexpr
        {"num_warps": 8},  # a launch option
    ],
)
def test_a_new_specialisation_takes_tritons_path(launch: Any, changed: dict[str, Any]) -> None:
    kernel = JitKernel()
    base: dict[str, Any] = {"x": torch.zeros(64), "n": 64, "BLOCK": 16, "num_warps": 4}
    for values in (base, {**base, **changed}):
        launch(kernel, (4,), values["x"], values["n"], BLOCK=values["BLOCK"], FAST=True,
               num_warps=values["num_warps"])
    assert [entry[0] for entry in kernel.log] == ["jit", "jit"]


def test_a_bool_is_not_taken_for_the_int_it_equals(launch: Any) -> None:
    kernel = JitKernel()
    x = torch.zeros(64)
    launch(kernel, (4,), x, 1, BLOCK=16, FAST=True)
    launch(kernel, (4,), x, True, BLOCK=16, FAST=True)  # i1 in Triton, not the constant 1
    assert [entry[0] for entry in kernel.log] == ["jit", "jit"]


def test_nothing_is_kept_from_a_launch_that_returned_no_compiled_kernel(launch: Any) -> None:
    kernel = JitKernel(compiles=False)  # the interpreter, or a launch a caller intercepted
    x = torch.zeros(64)
    for _ in range(3):
        launch(kernel, (4,), x, 64, BLOCK=16, FAST=True)
    assert [entry[0] for entry in kernel.log] == ["jit"] * 3


@pytest.mark.parametrize("odd", [[64], (torch.zeros(2), 64)], ids=["list", "tuple-of-tensors"])
def test_other_arguments_take_tritons_path_every_time(launch: Any, odd: Any) -> None:
    # a tuple holding tensors would hash by their identity: a key per call, each keeping its
    # tensors alive; like anything unhashable, it is never kept
    kernel = JitKernel()
    x = torch.zeros(64)
    for _ in range(2):
        launch(kernel, (4,), x, odd, BLOCK=16, FAST=True)
    assert [entry[0] for entry in kernel.log] == ["jit", "jit"]


def test_another_device_takes_tritons_path(launch: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = JitKernel()
    x = torch.zeros(64)
    launch(kernel, (4,), x, 64, BLOCK=16, FAST=True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    launch(kernel, (4,), x, 64, BLOCK=16, FAST=True)
    launch(kernel, (4,), x, 64, BLOCK=16, FAST=True)  # now kept for device 1
    assert [entry[0] for entry in kernel.log] == ["jit", "jit", "compiled"]


def test_a_kernel_with_pre_run_hooks_takes_tritons_path(launch: Any) -> None:
    kernel = JitKernel()
    kernel.pre_run_hooks = [lambda *a, **k: None]
    x = torch.zeros(64)
    for _ in range(2):
        launch(kernel, (4,), x, 64, BLOCK=16, FAST=True)
    assert [entry[0] for entry in kernel.log] == ["jit", "jit"]


def test_a_descriptor_layout_is_validated_once_and_built_alike_after() -> None:
    from triton.tools.tensor_descriptor import TensorDescriptor

    scope: dict[str, Any] = {"torch": torch}
    exec(WRAPPER_HELPERS["_descriptor"], scope)
    descriptor = scope["_descriptor"]
    first, second = torch.zeros(4, 64), torch.ones(4, 64)
    a = descriptor(first, [4, 64], [64, 1], [2, 32])
    b = descriptor(second, [4, 64], [64, 1], [2, 32])
    want = TensorDescriptor(second, [4, 64], [64, 1], [2, 32])
    assert type(b) is TensorDescriptor and b == want and b.base is second
    assert a.base is first  # the first one's base is not shared with the second
    # the base's alignment is checked on every call: an unaligned one meets Triton's check
    with pytest.raises(AssertionError, match="16-byte aligned"):
        descriptor(torch.zeros(4 * 64 + 1)[1:].view(4, 64), [4, 64], [64, 1], [2, 32])
    # a layout Triton refuses is refused every time, never recorded
    for _ in range(2):
        with pytest.raises(AssertionError):
            descriptor(first, [4, 64], [63, 1], [2, 32])
    assert len(scope["_DESCRIPTOR_FIELDS"]) == 1
