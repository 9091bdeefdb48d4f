import io
import json

import pytest

from kernelwright.archive import Archive
from kernelwright.errors import ArchiveError
from kernelwright.records import Candidate, Status, Task, Timing, TimingStats, Verdict


@pytest.fixture(params=["memory", "file"])
def archive(request, tmp_path):
    path = ":memory:" if request.param == "memory" else tmp_path / "nested" / "a.sqlite"
    with Archive(path) as store:
        yield store


TASK = Task(path="/t/softmax.py", name="softmax", source="src", sha256="t" * 64)


def verdict(ms=None, correct=True):
    timing = Timing(candidate=TimingStats(ms, ms, ms, 0, 5)) if ms else Timing()
    return Verdict(
        status=Status.CORRECT if correct else Status.INCORRECT, correct=correct, timing=timing
    )


def test_add_history_best_and_parents(archive):
    a = Candidate("a = 1", origin="template")
    b = Candidate("b = 1", origin="llm", parent=None)
    archive.add(TASK, a, verdict(2.0), run_id="r1")
    a_id = archive.add_candidate(TASK, a)
    archive.add(TASK, Candidate("b = 1", origin="llm", parent=a_id), verdict(1.0), run_id="r1")
    archive.add(TASK, Candidate("c = 1"), verdict(0.5, correct=False), run_id="r2")
    assert [r.candidate.source for r in archive.history(TASK.sha256)] == ["a = 1", "b = 1", "c = 1"]
    assert len(archive.history(TASK.sha256, "r1")) == 2
    best = archive.best(TASK.sha256)
    assert best.candidate.source == "b = 1" and best.candidate.parent == a_id
    assert archive.add_candidate(TASK, b) == archive.add_candidate(TASK, b)  # one row per source
    assert archive.get(best.evaluation_id).verdict == best.verdict


def test_ids_do_not_jump(archive):
    ids = [archive.add_candidate(TASK, Candidate("x")) for _ in range(3)]
    assert ids == [1, 1, 1] and archive.add_candidate(TASK, Candidate("y")) == 2


def test_runs_register_and_resume(archive):
    assert archive.start_run("r", "search", TASK.sha256, {"budget": 3}) is True
    assert archive.start_run("r", "search", TASK.sha256, {}) is False


def test_export_jsonl_with_trajectories(archive):
    cid = archive.add_candidate(TASK, Candidate("a", origin="llm"))
    archive.log_message("user", "write a kernel", run_id="r", candidate_id=cid, meta={"tokens": 3})
    archive.add(TASK, Candidate("a", origin="llm"), verdict(1.0), run_id="r")
    out = io.StringIO()
    assert archive.export_jsonl(out, trajectories=True) == 1
    row = json.loads(out.getvalue())
    assert row["task"] == "softmax" and row["verdict"]["status"] == "correct"
    assert row["messages"][0]["content"] == "write a kernel"
    assert row["messages"][0]["meta"] == {"tokens": 3}


def test_missing_evaluation_and_newer_schema(tmp_path):
    path = tmp_path / "a.sqlite"
    with Archive(path) as store:
        with pytest.raises(ArchiveError, match="no evaluation with id 7"):
            store.get(7)
        store.conn.execute("UPDATE schema_version SET version = 99")
        store.conn.commit()
    with pytest.raises(ArchiveError, match="newer than this kernelwright"):
        Archive(path)


def test_not_a_database(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_text("this is not sqlite" * 100)
    with pytest.raises(ArchiveError, match="cannot open the archive"):
        Archive(bad)
