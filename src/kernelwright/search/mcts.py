"""Monte Carlo tree search over design decisions (PUCT with progressive widening).

    root                          the task
      structure i                 a ranked design with its default parameters; prior P_i from
                                  the ranking (``DecisionSpace.priors``)
        one parameter moved       children of any design node: its neighbours one tuned
          one parameter moved     parameter away, admitted one at a time (progressive widening)

Notation, per node s:

    N(s)   evaluated candidates in the subtree of s (s included)
    W(s)   the sum of their values (``decisions.value``: 0 incorrect, 0.5 at the reference)
    Q(s)   W(s) / N(s); a structure not yet tried takes its parent's Q (first-play urgency)
    P(s)   the policy prior: the ranking's for structures, uniform among a node's children

    select  a = argmax_a  Q(a) + c * P(a) * sqrt(N(s)) / (1 + N(a))
    widen   a design node may hold ceil(k * N(s) ** alpha) children (more once all of them
            are exhausted); below that, its next untried move (in an order fixed by the seed
            and the node) is the proposal; the root plays its best-ranked untried structure
            when that one's score beats every tried structure's
    repair  before any selection, a design the harness found incorrect gets one child: itself
            with its knobs that trade accuracy for speed at their accurate values
            (``DecisionSpace.accurate_move``), so a default that costs accuracy costs one
            evaluation, not the structure (its value 0 would keep PUCT away from it); the
            repair carries the line on: the incorrect design's own parameter moves, which keep
            the knobs that failed, are not widened

Each candidate's value is backed up from its node to the root. The tree is rebuilt from the history
on every ask: a trial's node is its design's canonical key and its parent the candidate it names
(``Candidate.parent``), so a resumed run rebuilds the same tree and the same seed gives the same
proposals. Proposals of one batch are added as failures (a virtual loss) so they spread out.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kernelwright.design.choices import Design
from kernelwright.hardware.energy import Objective
from kernelwright.records import Status, Task
from kernelwright.search.decisions import (
    DecisionSpace,
    Move,
    design_of,
    reference_cost,
    render_proposal,
    value,
)
from kernelwright.search.proposer import Proposal, Trial


@dataclass(eq=False)
class Node:
    """One design in the tree (the root has none)."""

    design: Design | None
    key: str
    parent: Node | None = None
    candidate_id: int | None = None
    prior: float = 1.0
    visits: int = 0
    total: float = 0.0
    children: list[Node] = field(default_factory=list)
    exhausted: bool = False
    incorrect: bool = False  # the harness judged it and its outputs were wrong

    @property
    def mean(self) -> float:
        """Q(s); 0 before any visit."""
        return self.total / self.visits if self.visits else 0.0

    def backup(self, v: float) -> None:
        """Count one evaluation of value ``v`` here and in every ancestor."""
        node: Node | None = self
        while node is not None:
            node.visits += 1
            node.total += v
            node = node.parent


@dataclass
class MCTSProposer:
    """See the module docstring.

    Attributes:
        space: the decisions (ranked structures, each group's options, parameter moves).
        render: turns a design into ModelNew source (raises DesignError when it cannot).
        exploration: c, the weight of the prior-driven exploration term.
        widening: k, children a design node may hold after its first evaluation.
        alpha: how fast that number grows with the node's evaluations.
        skipped: designs the templates could not render, with the reason.
    """

    space: DecisionSpace
    render: Callable[[Design], str]
    exploration: float = 1.0
    widening: float = 1.0
    alpha: float = 0.5
    objective: Objective = Objective.TIME
    name: str = "mcts"
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # keys of designs the templates refused: a pure result, cached so no ask renders them again
    _unrenderable: set[str] = field(default_factory=set, repr=False)

    def ask(self, task: Task, history: Sequence[Trial], n: int, seed: int) -> list[Proposal]:
        """Up to ``n`` new designs, each the expansion the tree selects next."""
        tree = _Tree.rebuild(self.space, history, self.objective)
        proposals: list[Proposal] = []
        while len(proposals) < n:
            picked = self._select(tree, seed)
            if picked is None:
                break
            design, parent, note = picked
            child = tree.add(design, parent)
            child.backup(0.0)  # virtual loss: the rest of the batch looks elsewhere
            child.exhausted = True  # not evaluated yet: nothing can be derived from it
            parent_id = parent.candidate_id if parent is not tree.root else None
            p = render_proposal(design, self.render, f"mcts: {note}", parent_id, self.skipped)
            if p is None:
                self._unrenderable.add(child.key)
            else:
                proposals.append(p)
        return proposals

    def _select(self, tree: _Tree, seed: int) -> tuple[Design, Node, str] | None:
        """Descend by PUCT to the first node that may widen; its next move. None when every
        node is exhausted. A design found incorrect is repaired first (the module docstring)."""
        for node in tree.nodes.values():
            if node.incorrect and node.design is not None:
                move = self.space.accurate_move(node.design)
                if move is not None and self._untried(tree, move[0]):
                    return move[0], node, move[1]
        while not tree.root.exhausted:
            node = tree.root
            while True:
                move = self._widen(tree, node, seed)
                if move is not None:
                    return move[0], node, move[1]
                open_children = [c for c in node.children if not c.exhausted]
                if not open_children:
                    # nothing left below: widen past the limit, or give the node up
                    move = self._widen(tree, node, seed, force=True)
                    if move is not None:
                        return move[0], node, move[1]
                    node.exhausted = True
                    break
                node = max(open_children, key=lambda c: self._score(node, c))
        return None

    def _widen(self, tree: _Tree, node: Node, seed: int, force: bool = False) -> Move | None:
        """The next untried move of ``node`` when it may hold another child (``force``: even
        past the widening limit)."""
        if node is tree.root:
            return self._next_structure(tree, force)
        allowed = math.ceil(self.widening * max(node.visits, 1) ** self.alpha)
        if node.candidate_id is None or (len(node.children) >= allowed and not force):
            return None
        assert node.design is not None
        if node.incorrect and self.space.accurate_move(node.design) is not None:
            return None  # repaired instead (see ``_select``)
        moves = self.space.parameter_moves(node.design)
        random.Random(f"{seed}:{node.key}").shuffle(moves)
        for design, label in moves:
            if self._untried(tree, design):
                return design, label
        return None

    def _next_structure(self, tree: _Tree, force: bool) -> Move | None:
        """The best-ranked untried structure, when its PUCT score (first-play urgency and its
        prior) beats every open child of the root, or when ``force``."""
        count = len(self.space.structures)
        for i, design in enumerate(self.space.structures):
            if not self._untried(tree, design):
                continue
            if not force:
                fresh = Node(design, "", tree.root, prior=tree.prior_of(self.space.key(design)))
                open_scores = [
                    self._score(tree.root, c) for c in tree.root.children if not c.exhausted
                ]
                if open_scores and self._score(tree.root, fresh) < max(open_scores):
                    return None
            return design, f"structure {i + 1}/{count}"
        return None

    def _untried(self, tree: _Tree, design: Design) -> bool:
        key = self.space.key(design)
        return key not in tree.nodes and key not in self._unrenderable

    def _score(self, parent: Node, child: Node) -> float:
        """Q + c * P * sqrt(N(parent)) / (1 + N(child)); P is the ranking's prior under the
        root and uniform among a design's children."""
        prior = child.prior if parent.parent is None else 1.0 / max(len(parent.children), 1)
        q = child.mean if child.visits else parent.mean
        return q + self.exploration * prior * math.sqrt(max(parent.visits, 1)) / (1 + child.visits)


@dataclass
class _Tree:
    """The tree of one ask, rebuilt from the history; nodes by the design's canonical key."""

    root: Node
    key: Callable[[Design], str]
    priors: dict[str, float]
    nodes: dict[str, Node] = field(default_factory=dict)

    @classmethod
    def rebuild(cls, space: DecisionSpace, history: Sequence[Trial],
                objective: Objective = Objective.TIME) -> _Tree:
        keys = [space.key(d) for d in space.structures]
        tree = cls(Node(None, "root"), space.key, dict(zip(keys, space.priors(), strict=True)))
        by_candidate: dict[int, Node] = {}
        reference = reference_cost(history, objective)
        for trial in history:
            design = design_of(trial)
            if design is None or space.key(design) in tree.nodes:
                continue  # not a design, or an equivalent of a node already in the tree
            parent = tree.root
            if trial.candidate.parent is not None:
                parent = by_candidate.get(trial.candidate.parent, tree.root)
            node = tree.add(design, parent)
            node.candidate_id = trial.candidate_id
            node.incorrect = not trial.refused and trial.verdict.status == Status.INCORRECT
            by_candidate[trial.candidate_id] = node
            node.backup(0.0 if trial.refused else value(trial.verdict, reference, objective))
        return tree

    def prior_of(self, key: str) -> float:
        """A root child's prior (structures off the ranking get the smallest one)."""
        return self.priors.get(key, min(self.priors.values(), default=1.0))

    def add(self, design: Design, parent: Node) -> Node:
        """A new child of ``parent`` for ``design``."""
        key = self.key(design)
        node = Node(design, key, parent, prior=self.prior_of(key))
        parent.children.append(node)
        self.nodes[key] = node
        return node
