"""The search loop with scripted proposers and a fake judge: budgets, de-duplication, resume."""

from kernelwright.archive import Archive
from kernelwright.evaluate import EvalOptions
from kernelwright.records import Candidate, Status, Timing, TimingStats, Verdict
from kernelwright.search import Budget, Proposal, run_search
from kernelwright.search.dedup import canonical_key
from kernelwright.task import load_task

SOURCE = "class ModelNew:\n    speed = {i}\n"


class Counter:
    """Proposes SOURCE with speed 0, 1, 2, ... (a duplicate of 0 after a comment change first)."""

    name = "counter"

    def __init__(self, limit=100):
        self.limit = limit
        self.told = 0

    def ask(self, task, history, n):
        i = len(history)
        if i >= self.limit:
            return []
        dup = Proposal(Candidate("# same kernel, new comment\n" + SOURCE.format(i=0)))
        fresh = Proposal(Candidate(SOURCE.format(i=i)), note=f"speed {i}")
        return [dup, fresh] if i > 0 else [fresh]

    def tell(self, trials):
        self.told += len(trials)


def fake_judge(calls):
    def judge(task, candidate, options, executor=None):
        calls.append(candidate.source)
        speed = int(candidate.source.split("speed = ")[1])
        ms = 10.0 / (1 + speed)
        return Verdict(
            status=Status.CORRECT,
            correct=True,
            timing=Timing(candidate=TimingStats(ms, ms, ms, 0.0, 10)),
        )

    return judge


def test_budget_dedup_best_and_resume(fixtures, tmp_path):
    task = load_task(fixtures / "tasks" / "softmax_rows.py")
    archive = Archive(tmp_path / "a.sqlite")
    calls = []
    proposer = Counter()
    result = run_search(
        task,
        proposer,
        EvalOptions(device="cpu"),
        archive,
        Budget(candidates=3),
        "run-1",
        evaluate_fn=fake_judge(calls),
    )
    assert len(calls) == 3 and result.stopped == "budget"
    assert result.pruned >= 2  # the comment-only duplicates never cost an evaluation
    assert result.best is not None and "speed = 2" in result.best.candidate.source
    assert proposer.told == 3
    # Resume the same run with a bigger budget: the 3 done evaluations count.
    calls.clear()
    again = run_search(
        task,
        Counter(),
        EvalOptions(device="cpu"),
        archive,
        Budget(candidates=5),
        "run-1",
        evaluate_fn=fake_judge(calls),
    )
    assert len(calls) == 2 and len(again.trials) == 5
    assert "speed = 4" in again.best.candidate.source
    assert len(archive.history(task.sha256, "run-1")) == 5


def test_exhausted_proposer_stops(fixtures, tmp_path):
    task = load_task(fixtures / "tasks" / "softmax_rows.py")
    proposer = Counter(limit=1)
    proposer.stop_reason = "the model answered HTTP 503 after 4 attempts"
    result = run_search(
        task,
        proposer,
        EvalOptions(device="cpu"),
        Archive(":memory:"),
        Budget(candidates=10),
        "r",
        evaluate_fn=fake_judge([]),
    )
    assert result.stopped == "the model answered HTTP 503 after 4 attempts"


def test_canonical_key_ignores_comments_and_docstrings_only():
    a = '"""doc"""\nimport torch\n\ndef f(x):\n    """d"""\n    return x + 1  # c\n'
    b = "import torch\ndef f(x):\n    return x + 1\n"
    c = "import torch\ndef f(x):\n    return x + 2\n"
    assert canonical_key(a) == canonical_key(b) != canonical_key(c)
