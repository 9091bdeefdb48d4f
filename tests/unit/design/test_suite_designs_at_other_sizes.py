"""Every suite and held-out task's first two designs, emitted at the task's small size, called at
other sizes (each size constant moved in turn): each matches the task's model there or refuses
the size with the ValueError that names what it was generated for, never computes something
else. The harness judges at a task's own sizes and variants only; a user calls ModelNew at
theirs.

Slow (about two minutes with two workers): the cheaper checks of the same property are
``test_design_contract.py`` (what a file refuses) and the pointwise family's
``test_a_buffer_sliced_to_the_calls_size_at_other_sizes`` (a view indexed at another size).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.bench.suite import discover_tasks

ROOT = Path(__file__).resolve().parents[3]
TASKS = discover_tasks([ROOT / "benchmarks"]) + discover_tasks([ROOT / "heldout"])

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "path", TASKS, ids=[f"{p.parent.parent.name}/{p.parent.name}/{p.stem}" for p in TASKS]
)
def test_first_designs_at_other_sizes(design_worker, path: Path) -> None:
    if "small" not in path.read_text():
        pytest.skip("the task has no small size")
    reply = design_worker.ask({"op": "resized", "path": str(path), "top": 2})
    assert "error" not in reply, reply.get("error", "") + reply.get("traceback", "")
    assert reply["failures"] == []
