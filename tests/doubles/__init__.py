"""Test doubles for kernelwright's seams (importable as ``doubles`` from any test)."""
