"""The spill screen: a template's tuning move whose kernels spill registers where its
structure's best candidate's do not is archived unjudged and costs no evaluation; everything
else is judged, and a best with room to spare is not compiled against at all. Compiles are
stood in for by a table of registers and spilled bytes per source."""

from kernelwright.archive import Archive
from kernelwright.evaluate import EvalOptions
from kernelwright.records import Candidate, Precision, Status, Timing, TimingStats, Verdict
from kernelwright.search import Budget, Proposal, run_search
from kernelwright.search.proposer import SPILLS, Trial
from kernelwright.search.run_stats import run_stats
from kernelwright.search.spill_screen import SpillScreen
from kernelwright.task import load_task


def template(block_m: int, stage: str = "tuning", skill: str = "conv-direct") -> Candidate:
    """A template candidate of one conv group with ``BLOCK_M`` set (its source names it)."""
    design = {"stage": stage, "groups": {"g0": {"kind": "conv", "skill": skill,
                                                "variant": "direct", "options": []}}}
    return Candidate(f"class ModelNew:\n    block_m = {block_m}\n    skill = {skill!r}\n",
                     origin="template", design=design, params={"g0.BLOCK_M": block_m})


def correct(ms: float) -> Verdict:
    return Verdict(Status.CORRECT, True, timing=Timing(candidate=TimingStats(ms, ms, ms, 0.0, 5)))


class Spills:
    """Spilled bytes by the candidate's BLOCK_M (a missing entry: the compile failed), of a
    kernel taking ``registers`` a thread beside one of 40 that never spills."""

    def __init__(self, table: dict[int, int | None], registers: int = 200) -> None:
        self.table, self.registers = table, registers
        self.compiled: list[int] = []

    def __call__(self, source: str) -> list[tuple[int | None, int | None]]:
        block_m = int(source.split("block_m = ")[1].split("\n")[0])
        self.compiled.append(block_m)
        spilled = self.table.get(block_m)
        return [(40, 0), (None if spilled is None else self.registers, spilled)]


def screen_of(fixtures, table, registers=200):
    task = load_task(fixtures / "tasks" / "softmax_rows.py")
    counter = Spills(table, registers)
    return SpillScreen(task, Precision.FP32, counter), counter


def test_a_move_that_spills_where_the_best_does_not_is_screened(fixtures):
    screen, counter = screen_of(fixtures, {128: 0, 64: 280, 256: 0})
    history = [Trial(1, template(128, "structure"), correct(2.6))]
    verdict = screen(template(64), history)
    assert verdict is not None and SPILLS in verdict.flags and not verdict.correct
    assert "280 bytes" in verdict.message and "candidate 1" in verdict.message
    assert screen(template(256), history) is None  # a clean move is judged
    # each source is compiled once, however often it is asked about
    screen(template(64), history)
    assert sorted(counter.compiled) == [64, 128, 256]


def test_what_the_screen_leaves_to_the_harness(fixtures):
    screen, _ = screen_of(fixtures, {128: 96, 64: 280, 32: None})
    spilling_best = [Trial(1, template(128, "structure"), correct(2.6))]
    assert screen(template(64), spilling_best) is None  # the best spills too: nothing known
    assert screen(template(64), []) is None  # no best of this structure yet
    other = [Trial(1, template(16, "structure", skill="conv-vendor"), correct(2.0))]
    assert screen(template(64), other) is None  # the best is another structure
    assert screen(template(64, "structure"), spilling_best) is None  # structures are judged
    free_form = Candidate("class ModelNew:\n    block_m = 64\n", origin="llm")
    assert screen(free_form, spilling_best) is None
    screen2, _ = screen_of(fixtures, {128: 0})
    clean_best = [Trial(1, template(128, "structure"), correct(2.6))]
    assert screen2(template(32), clean_best) is None  # its compile failed: the harness says


def test_a_best_with_room_to_spare_is_not_compiled_against(fixtures):
    screen, counter = screen_of(fixtures, {128: 0, 64: 280}, registers=96)
    history = [Trial(1, template(128, "structure"), correct(2.6))]
    assert screen(template(64), history) is None
    assert counter.compiled == [128]  # the best once; its moves never


class Moves:
    """The structure (BLOCK_M 128), then tuning moves 64, 32, 256, 512."""

    name = "moves"

    def ask(self, task, history, n, seed):
        order = [template(128, "structure"), *(template(m) for m in (64, 32, 256, 512))]
        tried = {t.candidate.sha256 for t in history}
        return [Proposal(c, f"BLOCK_M={c.params['g0.BLOCK_M']}")
                for c in order if c.sha256 not in tried][:n]


def test_screened_moves_cost_no_evaluation_and_are_archived(fixtures, tmp_path):
    task = load_task(fixtures / "tasks" / "softmax_rows.py")
    archive = Archive(tmp_path / "a.sqlite")
    screen = SpillScreen(task, Precision.FP32, Spills({128: 0, 64: 280, 32: 12, 256: 0, 512: 0}))
    judged: list[int] = []

    def judge(task, candidate, options, executor=None, **_):
        judged.append(candidate.params["g0.BLOCK_M"])
        return correct(1000.0 / candidate.params["g0.BLOCK_M"])

    result = run_search(task, Moves(), EvalOptions(device="cpu"), archive, Budget(candidates=3),
                        "run-1", evaluate_fn=judge, screen=screen)
    assert judged == [128, 256, 512]  # 64 and 32 compiled, never run
    assert result.evaluated == 3 and result.screened_spilling == 2 and result.stopped == "budget"
    flagged = [r for r in archive.history(task.sha256, "run-1") if SPILLS in r.verdict.flags]
    assert sorted(r.candidate.params["g0.BLOCK_M"] for r in flagged) == [32, 64]
    (stats,) = run_stats(archive)
    assert stats.evaluated == 3 and stats.screened == 2
