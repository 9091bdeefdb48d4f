"""The guard's static rules against reaching the harness by indirection, and the identity
snapshot's watch over every attribute of the harness's classes."""

from __future__ import annotations

import ast

import pytest

from kernelwright.evaluate.guard import static_checks
from kernelwright.evaluate.guard.integrity import IdentitySnapshot
from kernelwright.evaluate.guard.observer import ForwardObserver
from kernelwright.evaluate.guard.registry import GuardContext


def _reasons(source: str) -> list[str]:
    ctx = GuardContext(source=source, tree=ast.parse(source))
    return [r for check in (static_checks.reference_access, static_checks.harness_escape)
            for r in check(ctx)]


@pytest.mark.parametrize("source, found", [
    ("import torch\nm = torch.sys.modules\n", "reaches sys through `torch.sys`"),
    ("import torch\nname = 'kernelwright.evaluate.guard.observer'\n", "names the harness's module"),
    ("def f(k):\n    return k.run.__closure__\n", "`.__closure__`"),
    ("def f(c):\n    return c.cell_contents\n", "`.cell_contents`"),
    ("def f(fn):\n    return getattr(fn, '__globals__')\n", "names `__globals__`"),
    ("def put(t, n, v):\n    setattr(t, n, v)\n", "setattr with a computed name on `t`"),
    ("import torch\nk = torch._C._dispatch_tls_is_dispatch_key_included\n",
     "uses `_dispatch_tls_is_dispatch_key_included`"),
])
def test_indirect_ways_to_the_harness_are_refused(source: str, found: str) -> None:
    reasons = _reasons(source)
    assert any(found in r for r in reasons), reasons


def test_an_honest_module_is_not_refused() -> None:
    source = '''"""A kernel file; its docstring may name kernelwright.evaluate and __closure__."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, layers):
        super().__init__()
        for i in range(layers):
            setattr(self, f"w{i}", nn.Parameter(torch.ones(4)))

    def forward(self, x):
        return x * getattr(self, "w0")
'''
    assert _reasons(source) == []


def test_replacing_any_attribute_of_a_harness_class_is_seen() -> None:
    snapshot = IdentitySnapshot.take()
    assert snapshot.changed() == []
    mode = ForwardObserver.mode_class()
    original = mode.__dict__["__torch_dispatch__"]
    added = "kernelwright.evaluate.guard.observer:ForwardObserver._unseen_by_list"
    try:
        mode.__torch_dispatch__ = lambda self, func, types, args=(), kwargs=None: None
        ForwardObserver._unseen_by_list = True  # type: ignore[attr-defined]
        changed = snapshot.changed()
    finally:
        mode.__torch_dispatch__ = original
        del ForwardObserver._unseen_by_list  # type: ignore[attr-defined]
    assert "kernelwright.evaluate.guard.observer:ForwardObserver.mode_class().__torch_dispatch__" \
        in changed
    assert added in changed
    assert snapshot.changed() == []
