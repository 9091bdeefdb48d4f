"""The archive: every candidate and verdict, with its parent, in SQLite.

Written as each verdict arrives (one transaction per ``add``), so a killed run loses nothing
that was judged. Proposers rebuild their state from :meth:`Archive.history`, so a search
resumes where it stopped.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from kernelwright.archive.schema import migrate
from kernelwright.errors import ArchiveError
from kernelwright.records import Candidate, Task, Verdict, to_jsonable


@dataclass(frozen=True, slots=True)
class Record:
    """One archived evaluation: its ids, the candidate and the verdict."""

    evaluation_id: int
    candidate_id: int
    task_sha256: str
    task_name: str
    candidate: Candidate
    verdict: Verdict
    run_id: str | None
    created_at: str


@dataclass(frozen=True, slots=True)
class RunRow:
    """One registered run: what it was and when it started and finished."""

    run_id: str
    kind: str
    task_sha256: str | None
    config: dict[str, Any]
    started_at: str
    finished_at: str | None
    status: str


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class Archive:
    """A SQLite archive at ``path`` (``":memory:"`` for a throwaway one)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(self.path, timeout=30)
            self.conn.row_factory = sqlite3.Row
            if self.path != ":memory:":
                self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            migrate(self.conn)
        except sqlite3.DatabaseError as exc:
            raise ArchiveError(
                f"{self.path}: cannot open the archive ({exc}); pass another --archive path"
            ) from exc

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------------

    def add_task(self, task: Task) -> None:
        """Record a task (once per distinct text)."""
        self.conn.execute(
            "INSERT OR IGNORE INTO tasks (sha256, name, path, source, first_seen) "
            "VALUES (?, ?, ?, ?, ?)",
            (task.sha256, task.name, task.path, task.source, _now()),
        )

    def add_candidate(self, task: Task, candidate: Candidate) -> int:
        """The id of ``candidate`` for ``task``, inserting it if new."""
        self.add_task(task)
        known = self.conn.execute(  # look first: INSERT OR IGNORE would burn an id each time
            "SELECT id FROM candidates WHERE task_sha256 = ? AND sha256 = ?",
            (task.sha256, candidate.sha256),
        ).fetchone()
        if known is not None:
            self.conn.commit()
            return int(known["id"])
        self.conn.execute(
            "INSERT OR IGNORE INTO candidates (task_sha256, sha256, source, origin, parent_id, "
            "design, params, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                task.sha256,
                candidate.sha256,
                candidate.source,
                candidate.origin,
                candidate.parent,
                json.dumps(to_jsonable(candidate.design)),
                json.dumps(to_jsonable(candidate.params)),
                _now(),
            ),
        )
        row = self.conn.execute(
            "SELECT id FROM candidates WHERE task_sha256 = ? AND sha256 = ?",
            (task.sha256, candidate.sha256),
        ).fetchone()
        self.conn.commit()
        return int(row["id"])

    def add(
        self, task: Task, candidate: Candidate, verdict: Verdict, run_id: str | None = None
    ) -> int:
        """Record one verdict; returns the evaluation id. Committed before returning.

        ``candidate.parent`` is kept with the evaluation: the same source may descend from
        different candidates in different runs, and each run's history shows its own parent.
        """
        candidate_id = self.add_candidate(task, candidate)
        timing = verdict.timing
        cur = self.conn.execute(
            "INSERT INTO evaluations (candidate_id, task_sha256, run_id, parent_id, status, "
            "correct, precision, device, candidate_ms, speedup_eager, speedup_compile, "
            "sol_fraction, verdict, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                candidate_id,
                task.sha256,
                run_id,
                candidate.parent,
                verdict.status.value,
                int(verdict.correct),
                verdict.precision.value,
                verdict.device.name if verdict.device else None,
                timing.candidate.median_ms if timing.candidate else None,
                timing.speedup_vs_eager,
                timing.speedup_vs_compile,
                verdict.sol.fraction if verdict.sol else None,
                json.dumps(verdict.to_dict()),
                _now(),
            ),
        )
        self.conn.commit()
        return int(cur.lastrowid or 0)

    def log_message(
        self,
        role: str,
        content: str,
        *,
        run_id: str | None = None,
        candidate_id: int | None = None,
        meta: dict[str, Any] | None = None,
    ) -> int:
        """Record a prompt or reply (agents' trajectories)."""
        cur = self.conn.execute(
            "INSERT INTO messages (run_id, candidate_id, role, content, meta, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, candidate_id, role, content, json.dumps(meta or {}), _now()),
        )
        self.conn.commit()
        return int(cur.lastrowid or 0)

    def start_run(
        self, run_id: str, kind: str, task_sha256: str | None, config: dict[str, Any]
    ) -> bool:
        """Register a run; False when it already exists (a resumed run)."""
        existing = self.conn.execute("SELECT id FROM runs WHERE id = ?", (run_id,)).fetchone()
        if existing:
            self.conn.execute("UPDATE runs SET status = 'running' WHERE id = ?", (run_id,))
            self.conn.commit()
            return False
        self.conn.execute(
            "INSERT INTO runs (id, kind, task_sha256, config, started_at) VALUES (?, ?, ?, ?, ?)",
            (run_id, kind, task_sha256, json.dumps(config), _now()),
        )
        self.conn.commit()
        return True

    def finish_run(self, run_id: str, status: str = "finished") -> None:
        """Mark a run finished (or failed/interrupted)."""
        self.conn.execute(
            "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, _now(), run_id)
        )
        self.conn.commit()

    # -- reading -------------------------------------------------------------------------------

    _SELECT = (
        "SELECT e.id AS evaluation_id, e.candidate_id, e.task_sha256, e.run_id, e.verdict, "
        "e.created_at, c.source, c.origin, COALESCE(e.parent_id, c.parent_id) AS parent_id, "
        "c.design, c.params, t.name AS task_name "
        "FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
        "JOIN tasks t ON t.sha256 = e.task_sha256"
    )

    def history(self, task_sha256: str | None = None, run_id: str | None = None) -> list[Record]:
        """Evaluations in the order they were made, filtered by task and/or run."""
        clauses, args = [], []
        if task_sha256:
            clauses.append("e.task_sha256 = ?")
            args.append(task_sha256)
        if run_id:
            clauses.append("e.run_id = ?")
            args.append(run_id)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.conn.execute(f"{self._SELECT}{where} ORDER BY e.id", args).fetchall()
        return [_record(r) for r in rows]

    def recent(self, limit: int = 20, task_name: str | None = None) -> list[Record]:
        """The newest evaluations first."""
        where, args = "", []
        if task_name:
            where, args = " WHERE t.name = ?", [task_name]
        rows = self.conn.execute(
            f"{self._SELECT}{where} ORDER BY e.id DESC LIMIT ?", [*args, limit]
        ).fetchall()
        return [_record(r) for r in rows]

    def get(self, evaluation_id: int) -> Record:
        """One evaluation by id."""
        row = self.conn.execute(f"{self._SELECT} WHERE e.id = ?", (evaluation_id,)).fetchone()
        if row is None:
            raise ArchiveError(f"no evaluation with id {evaluation_id} in {self.path}")
        return _record(row)

    def best(self, task_sha256: str, run_id: str | None = None) -> Record | None:
        """The fastest correct evaluation of a task (lowest candidate time)."""
        records = [r for r in self.history(task_sha256, run_id) if r.verdict.correct]
        timed = [r for r in records if r.verdict.timing.candidate is not None]
        if not timed:
            return records[0] if records else None
        return min(timed, key=lambda r: r.verdict.timing.candidate.median_ms)  # type: ignore[union-attr]

    def runs(self, kind: str | None = None) -> list[RunRow]:
        """Registered runs in the order they started, optionally of one kind (``search``: a
        task's optimize run; ``bench``: a suite's)."""
        where, args = ("WHERE kind = ?", [kind]) if kind else ("", [])
        rows = self.conn.execute(
            f"SELECT * FROM runs {where} ORDER BY started_at, id", args).fetchall()
        return [RunRow(r["id"], r["kind"], r["task_sha256"], json.loads(r["config"] or "{}"),
                       r["started_at"], r["finished_at"], r["status"]) for r in rows]

    def messages(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Logged prompts and replies."""
        where, args = ("WHERE run_id = ?", [run_id]) if run_id else ("", [])
        rows = self.conn.execute(f"SELECT * FROM messages {where} ORDER BY id", args).fetchall()
        return [dict(r) | {"meta": json.loads(r["meta"])} for r in rows]

    def export_jsonl(self, out: TextIO, trajectories: bool = False) -> int:
        """Write one JSON object per evaluation (with messages when ``trajectories``)."""
        n = 0
        for rec in self._iter_all():
            item: dict[str, Any] = {
                "evaluation_id": rec.evaluation_id,
                "candidate_id": rec.candidate_id,
                "parent_id": rec.candidate.parent,
                "task": rec.task_name,
                "task_sha256": rec.task_sha256,
                "origin": rec.candidate.origin,
                "run_id": rec.run_id,
                "source": rec.candidate.source,
                "verdict": rec.verdict.to_dict(),
                "created_at": rec.created_at,
            }
            if trajectories:
                rows = self.conn.execute(
                    "SELECT role, content, meta, created_at FROM messages WHERE candidate_id = ? "
                    "ORDER BY id",
                    (rec.candidate_id,),
                ).fetchall()
                item["messages"] = [dict(r) | {"meta": json.loads(r["meta"])} for r in rows]
            out.write(json.dumps(item) + "\n")
            n += 1
        return n

    def _iter_all(self) -> Iterator[Record]:
        for row in self.conn.execute(f"{self._SELECT} ORDER BY e.id"):
            yield _record(row)


def _record(row: sqlite3.Row) -> Record:
    return Record(
        evaluation_id=int(row["evaluation_id"]),
        candidate_id=int(row["candidate_id"]),
        task_sha256=row["task_sha256"],
        task_name=row["task_name"],
        candidate=Candidate(
            source=row["source"],
            origin=row["origin"],
            parent=row["parent_id"],
            design=json.loads(row["design"]),
            params=json.loads(row["params"]),
        ),
        verdict=Verdict.from_dict(json.loads(row["verdict"])),
        run_id=row["run_id"],
        created_at=row["created_at"],
    )
