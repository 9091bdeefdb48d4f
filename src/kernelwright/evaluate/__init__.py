"""The evaluation harness: ``evaluate(task, solution, options) -> Verdict``.

See :mod:`kernelwright.evaluate.harness` for the process layout and docs/harness.md for the
contract. Submodules are imported lazily so the CLI starts without torch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EvalOptions", "evaluate"]


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from kernelwright.evaluate.harness import evaluate

        return evaluate
    if name == "EvalOptions":
        from kernelwright.evaluate.options import EvalOptions

        return EvalOptions
    raise AttributeError(f"module 'kernelwright.evaluate' has no attribute {name!r}")
