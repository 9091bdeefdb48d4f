"""A run's tree (MCTS) or lineage (evolution) as a list of nodes, ready to export or draw.

    lineage(trials) -> [{"id", "parent", "note", "status", "correct", "ms", "speedup_vs_eager",
                         "evaluated", "reused"}, ...]

``parent`` is the archive id of the candidate a proposal was derived from (None: a root, e.g. a
ranked structure or a hand-written file); a parent outside the list (another run's candidate)
is kept as it is, so nothing is lost when runs build on each other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from kernelwright.search.proposer import Trial, candidate_ms


def lineage(trials: Sequence[Trial]) -> list[dict[str, Any]]:
    """One node per candidate of the run, in the order they were proposed."""
    nodes: list[dict[str, Any]] = []
    seen: set[int] = set()
    for t in trials:
        if t.candidate_id in seen:
            continue
        seen.add(t.candidate_id)
        ms = candidate_ms(t.verdict)
        nodes.append(
            {
                "id": t.candidate_id,
                "parent": t.candidate.parent,
                "note": t.note,
                "status": t.verdict.status.value,
                "correct": t.verdict.correct,
                "ms": ms if math.isfinite(ms) else None,
                "speedup_vs_eager": t.verdict.timing.speedup_vs_eager,
                "evaluated": t.evaluated,
                "reused": t.reused,
            }
        )
    return nodes
