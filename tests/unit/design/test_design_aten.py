"""ATen classification and Triton printing are separate tables: each pointwise operator the
classifier accepts has exactly one printer."""

from __future__ import annotations

from kernelwright.design.aten import POINTWISE_OPS, classify
from kernelwright.design.graph import Node
from kernelwright.design.kernel.expr import POINTWISE


def test_every_pointwise_operator_has_a_printer_and_no_printer_is_orphaned() -> None:
    assert set(POINTWISE) == set(POINTWISE_OPS)


def test_classification_needs_no_printer() -> None:
    assert classify(Node("a", "call", "aten.exp.default")) == "pointwise"
    assert classify(Node("m", "call", "aten.sort.default")) == "framework"
