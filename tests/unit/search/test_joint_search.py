"""One search of several proposers (search.joint) and the constant tuner (search.constants)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kernelwright.hardware.energy import Objective
from kernelwright.records import (
    Candidate,
    EnergyStats,
    Status,
    Task,
    Timing,
    TimingStats,
    Verdict,
)
from kernelwright.search.constants import ConstantTuner, moves, tunables, with_constant
from kernelwright.search.joint import JointProposer
from kernelwright.search.proposer import Proposal, Trial

SOURCE = '''import triton

BLOCK = 256  # elements a program
NUM_WARPS = 4
STAGES = 3
SCALE = 0.5
MODE = "fast"


def kernel():
    BLOCK_INNER = 8  # not module level: not a tunable
    return BLOCK_INNER
'''


def test_tunables_are_the_module_level_upper_case_constants() -> None:
    assert tunables(SOURCE) == {"BLOCK": 256, "NUM_WARPS": 4, "STAGES": 3, "SCALE": 0.5,
                                "MODE": "fast"}
    assert tunables("not python (") == {}


def test_moves_double_and_halve_power_of_two_integers_only() -> None:
    assert moves(SOURCE) == [("BLOCK", 512), ("BLOCK", 128), ("NUM_WARPS", 8), ("NUM_WARPS", 2)]
    assert moves("ONE = 1\n") == [("ONE", 2)]  # never below 1


def test_a_constant_is_rewritten_in_place_and_nothing_else_moves() -> None:
    changed = with_constant(SOURCE, "BLOCK", 512)
    assert changed == SOURCE.replace("BLOCK = 256  #", "BLOCK = 512  #")
    assert tunables(changed)["BLOCK"] == 512
    with pytest.raises(KeyError):
        with_constant(SOURCE, "BLOCK_INNER", 16)


def _trial(i: int, origin: str, source: str, ms: float | None, parent: int | None = None) -> Trial:
    ok = ms is not None
    timing = Timing(candidate=TimingStats(ms, ms, ms, 0.0, 5)) if ok else Timing()
    verdict = Verdict(Status.CORRECT if ok else Status.INCORRECT, ok, timing=timing)
    return Trial(i, Candidate(source, origin, parent=parent), verdict)


TASK = Task(name="t", path="t.py", source="", sha256="0")


def test_the_tuner_moves_the_best_free_form_candidate_and_leaves_templates_alone() -> None:
    faster_template = _trial(1, "template", "BLOCK = 64\n", 0.1)
    llm = _trial(2, "llm", SOURCE, 1.0)
    proposals = ConstantTuner().ask(TASK, [faster_template, llm], 3, 0)
    assert [p.candidate.parent for p in proposals] == [2, 2, 2]
    assert [p.candidate.origin for p in proposals] == ["tuner"] * 3
    assert proposals[0].candidate.source == with_constant(SOURCE, "BLOCK", 512)
    assert proposals[0].note == "constant BLOCK 256 -> 512 of #2"
    assert proposals[0].candidate.params["BLOCK"] == 512


def test_the_tuner_builds_on_its_own_best_child_and_skips_what_was_tried() -> None:
    llm = _trial(2, "llm", SOURCE, 1.0)
    child = _trial(3, "tuner", with_constant(SOURCE, "BLOCK", 512), 0.5, parent=2)
    proposals = ConstantTuner().ask(TASK, [llm, child], 10, 0)
    assert proposals and all(p.candidate.parent == 3 for p in proposals)
    # halving the child's BLOCK gives the LLM's source back: tried, so not proposed again
    assert SOURCE not in {p.candidate.source for p in proposals}


def test_the_tuner_has_nothing_without_a_correct_free_form_candidate() -> None:
    assert ConstantTuner().ask(TASK, [_trial(1, "template", SOURCE, 1.0)], 2, 0) == []
    assert ConstantTuner().ask(TASK, [_trial(2, "llm", SOURCE, None)], 2, 0) == []


def test_the_tuner_follows_the_run_s_objective() -> None:
    def metered(i: int, ms: float, mj: float) -> Trial:
        timing = Timing(candidate=TimingStats(ms, ms, ms, 0.0, 5),
                        candidate_energy=EnergyStats(mj, mj / ms * 1e3))
        return Trial(i, Candidate(SOURCE.replace("256", str(64 * i)), "llm"),
                     Verdict(Status.CORRECT, True, timing=timing))

    fast_hungry, slow_frugal = metered(1, 1.0, 3.0), metered(2, 2.0, 1.0)
    history = [fast_hungry, slow_frugal]
    assert ConstantTuner().ask(TASK, history, 1, 0)[0].candidate.parent == 1
    assert ConstantTuner(Objective.ENERGY).ask(TASK, history, 1, 0)[0].candidate.parent == 2


class Fixed:
    """A proposer with a fixed list of notes to propose, one per ask slot, then nothing."""

    def __init__(self, name: str, count: int) -> None:
        self.name = name
        self.left = count
        self.asked: list[int] = []

    def ask(self, task: Task, history: Sequence[Trial], n: int, seed: int) -> list[Proposal]:
        self.asked.append(len(history))
        out = []
        while self.left and len(out) < n:
            self.left -= 1
            out.append(Proposal(Candidate(f"{self.name}{self.left}", self.name), self.name))
        return out


def test_parts_take_turns_by_the_length_of_the_history() -> None:
    a, b, c = Fixed("a", 5), Fixed("b", 5), Fixed("c", 5)
    joint = JointProposer([a, b, c])
    assert joint.name == "a+b+c"
    firsts = [joint.ask(TASK, [None] * h, 1, 0)[0].note for h in range(4)]  # type: ignore[list-item]
    assert firsts == ["a", "b", "c", "a"]


def test_a_part_with_nothing_passes_and_an_ask_is_filled_by_the_next() -> None:
    done, b = Fixed("done", 0), Fixed("b", 5)
    joint = JointProposer([done, b])
    assert [p.note for p in joint.ask(TASK, [], 3, 0)] == ["b", "b", "b"]
    assert JointProposer([Fixed("x", 0), Fixed("y", 0)]).ask(TASK, [], 2, 0) == []
    with pytest.raises(ValueError):
        JointProposer([])
