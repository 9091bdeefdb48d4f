"""Test doubles shipped with kernelwright (httpx's rule: the seam comes with its mock)."""

from kernelwright.testing.fakes import FakeExecutor

__all__ = ["FakeExecutor"]
