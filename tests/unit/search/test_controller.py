"""The search loop with scripted proposers and a fake judge: budgets, de-duplication, resume,
refusals by the constraints."""

from kernelwright.archive import Archive
from kernelwright.constraints import Constraints
from kernelwright.evaluate import EvalOptions
from kernelwright.records import Candidate, Status, Timing, TimingStats, Verdict
from kernelwright.search import Budget, Proposal, run_search
from kernelwright.search.controller import MAX_REFUSED_IN_A_ROW
from kernelwright.search.dedup import canonical_key
from kernelwright.task import load_task

SOURCE = "class ModelNew:\n    speed = {i}\n"


class Counter:
    """Proposes SOURCE with speed 0, 1, 2, ... (a duplicate of 0 after a comment change first)."""

    name = "counter"

    def __init__(self, limit=100):
        self.limit = limit
        self.seen = []

    def ask(self, task, history, n, seed):
        self.seen.append(len(history))
        i = len(history)
        if i >= self.limit:
            return []
        dup = Proposal(Candidate("# same kernel, new comment\n" + SOURCE.format(i=0)))
        fresh = Proposal(Candidate(SOURCE.format(i=i)), note=f"speed {i}")
        return [dup, fresh] if i > 0 else [fresh]


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
    assert proposer.seen == [0, 1, 2]  # told through the history it is asked with
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


class Sometimes:
    """Proposes SOURCE i = 0, 1, 2...; even ones call torch.matmul."""

    name = "sometimes"

    def ask(self, task, history, n, seed):
        i = len(history)
        call = "\n    y = torch.matmul(x, x)\n" if i % 2 == 0 else ""
        return [Proposal(Candidate("import torch\n" + SOURCE.format(i=i) + call))]


def test_constraints_refuse_before_evaluation_without_spending_budget(fixtures, tmp_path):
    task = load_task(fixtures / "tasks" / "softmax_rows.py")
    archive = Archive(tmp_path / "a.sqlite")
    options = EvalOptions(device="cpu", constraints=Constraints(forbidden_ops=("torch.matmul",)))
    calls, events = [], []
    result = run_search(
        task,
        Sometimes(),
        options,
        archive,
        Budget(candidates=2),
        "r",
        evaluate_fn=fake_judge(calls),
        on_event=events.append,
    )
    assert result.stopped == "budget" and (result.evaluated, result.refused) == (2, 2)
    assert len(calls) == 2 and all("matmul" not in c for c in calls)  # never judged
    refused = [t for t in result.trials if t.refused]
    assert [t.verdict.status for t in refused] == [Status.REJECTED] * 2
    assert {v.check for t in refused for v in t.verdict.violations} == {"constraint-forbidden-op"}
    assert "torch.matmul" in refused[0].verdict.message
    assert [e.kind for e in events].count("refused") == 2
    # resumed: the refusals are read back from the archive and still cost nothing
    again = run_search(
        task, Sometimes(), options, archive, Budget(candidates=2), "r", evaluate_fn=fake_judge([])
    )
    assert (again.evaluated, again.refused, again.stopped) == (2, 2, "budget")


def test_a_proposer_that_only_breaks_the_constraints_is_stopped(fixtures):
    class Cheater:
        name = "cheater"

        def ask(self, task, history, n, seed):
            return [Proposal(Candidate(f"import torch\ny{len(history)} = torch.matmul(x, x)\n"))]

    task = load_task(fixtures / "tasks" / "softmax_rows.py")
    options = EvalOptions(device="cpu", constraints=Constraints(forbidden_ops=("torch.matmul",)))
    result = run_search(
        task, Cheater(), options, Archive(":memory:"), Budget(5), "r", evaluate_fn=fake_judge([])
    )
    assert result.refused == MAX_REFUSED_IN_A_ROW and result.evaluated == 0
    assert "in a row were refused or screened" in result.stopped
    assert "constraint-forbidden-op" in result.stopped


def test_each_candidate_is_raced_against_the_best_its_run_s_judge_measured(fixtures):
    """A session's judge gets the best time it has measured (never one from another run's
    judge); a clearly slower candidate's timing then stops early there."""
    from kernelwright.search.controller import _Loop

    task = load_task(fixtures / "tasks" / "softmax_rows.py")
    archive = Archive(":memory:")
    archive.add(task, Candidate(SOURCE.format(i=99)), fake_judge([])(task, Candidate(
        SOURCE.format(i=99)), EvalOptions()), "r")  # an earlier run's best: 0.1 ms
    raced_against = []

    def judge(task, candidate, options, executor=None, race_ms=None):
        raced_against.append(race_ms)
        return fake_judge([])(task, candidate, options)

    loop = _Loop(task=task, options=EvalOptions(device="cpu"), archive=archive, run_id="r",
                 executor=None, judge=_representative(judge), emit=lambda _e: None,
                 equivalence=lambda _c: None, race=True)
    loop.run(Counter(limit=4), Budget(candidates=4), 1, 0)  # the archived one counts
    # speeds 0 (10 ms), 1 (5 ms), 3: each raced against the best judged before it, never
    # against the archived 0.1 ms
    assert raced_against == [None, 10.0, 5.0]


def _representative(judge):
    import dataclasses

    def wrapped(task, candidate, options, executor=None, **extra):
        verdict = judge(task, candidate, options, executor, **extra)
        return dataclasses.replace(
            verdict, timing=dataclasses.replace(verdict.timing, representative=True))

    return wrapped
