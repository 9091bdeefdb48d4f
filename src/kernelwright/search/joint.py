"""Several proposers in one search: one budget, one archive, one history, one pruning.

The controller sees a single proposer. Each ask is offered to the parts in turn, starting with
the one whose turn it is (``len(history) mod parts``, so a resumed run takes the same turns); a
part with nothing to propose (the templates' ranked designs all tried, the LLM stopped, no
free-form candidate to tune yet) passes, and the next one fills the ask. Every part reads the
same history, so each can build on another's candidates: the LLM's tuner takes the best correct
candidate whoever wrote it (a template's design included), and the constant tuner tunes the
best candidate the templates did not write (an LLM's). Parents are archived with every
candidate, so the run's lineage shows who built on whom.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kernelwright.records import Task
from kernelwright.search.proposer import Proposal, Proposer, Trial


@dataclass
class JointProposer:
    """A :class:`~kernelwright.search.Proposer` made of ``parts`` (see the module docstring)."""

    parts: Sequence[Proposer]

    def __post_init__(self) -> None:
        if not self.parts:
            raise ValueError("a joint search needs at least one proposer")

    @property
    def name(self) -> str:
        return "+".join(p.name for p in self.parts)

    @property
    def evaluate_fn(self) -> Callable[..., Any] | None:
        """A part's own judge (the LLM's review gate), which then judges every candidate."""
        for part in self.parts:
            judge = getattr(part, "evaluate_fn", None)
            if judge is not None:
                return judge  # type: ignore[no-any-return]
        return None

    @property
    def skipped(self) -> list[tuple[str, str]]:
        """Designs the template parts could not render, with the reason."""
        return [s for p in self.parts for s in getattr(p, "skipped", [])]

    def ask(self, task: Task, history: Sequence[Trial], n: int, seed: int) -> list[Proposal]:
        """Up to ``n`` proposals, the parts taking turns; empty once every part is done."""
        first = len(history) % len(self.parts)
        order = [*self.parts[first:], *self.parts[:first]]
        out: list[Proposal] = []
        for part in order:
            if len(out) >= n:
                break
            out += part.ask(task, history, n - len(out), seed)
        return out
