"""Each evaluation keeps the parent its run gave the candidate; archives written before the
column existed open, migrate, and keep the candidate's own parent."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from kernelwright.archive import Archive
from kernelwright.archive.schema import _V1, SCHEMA_VERSION
from kernelwright.records import Candidate, Status, Task, Verdict

TASK = Task(path="/t/softmax.py", name="softmax", source="src", sha256="t" * 64)
OK = Verdict(Status.CORRECT, True)


def test_one_source_has_each_runs_parent(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.sqlite") as store:
        a = store.add_candidate(TASK, Candidate("a = 1"))
        b = store.add_candidate(TASK, Candidate("b = 1"))
        store.add(TASK, Candidate("c = 1", parent=a), OK, "run-1")
        store.add(TASK, Candidate("c = 1", parent=b), OK, "run-2")
        assert [r.candidate.parent for r in store.history(TASK.sha256, "run-1")] == [a]
        assert [r.candidate.parent for r in store.history(TASK.sha256, "run-2")] == [b]


def test_a_version_1_archive_is_migrated_and_keeps_its_parents(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(_V1)
    conn.execute("INSERT INTO schema_version (version) VALUES (1)")
    conn.execute("INSERT INTO tasks VALUES (?, 'softmax', '/t', 'src', 'then')", (TASK.sha256,))
    for cid, source, parent in ((1, "a = 1", None), (2, "b = 1", 1)):
        conn.execute(
            "INSERT INTO candidates (id, task_sha256, sha256, source, origin, parent_id, "
            "created_at) VALUES (?, ?, ?, ?, 'template', ?, 'then')",
            (cid, TASK.sha256, Candidate(source).sha256, source, parent),
        )
        conn.execute(
            "INSERT INTO evaluations (candidate_id, task_sha256, run_id, status, correct, "
            "precision, verdict, created_at) VALUES (?, ?, 'old', 'correct', 1, 'fp32', ?, 'then')",
            (cid, TASK.sha256, json.dumps(OK.to_dict())),
        )
    conn.commit()
    conn.close()
    with Archive(path) as store:
        version = store.conn.execute("SELECT version FROM schema_version").fetchone()[0]
        assert version == SCHEMA_VERSION == 2
        assert [r.candidate.parent for r in store.history(TASK.sha256, "old")] == [None, 1]
