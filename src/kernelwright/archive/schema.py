"""The archive's tables, versioned with forward-only migrations.

tasks          one row per distinct task text (sha256), with its path and source
candidates     one row per distinct (task, source): origin, parent candidate, design, params
evaluations    one row per verdict, with the columns reports sort and filter on, and the
               candidate the evaluated one was derived from in that run (version 2)
runs           one row per optimize/bench run, so an interrupted run can resume
messages       prompts and replies of LLM proposers, linked to the candidate they produced
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 2

_V1 = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
    sha256      TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    path        TEXT NOT NULL,
    source      TEXT NOT NULL,
    first_seen  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS candidates (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    task_sha256  TEXT NOT NULL REFERENCES tasks(sha256),
    sha256       TEXT NOT NULL,
    source       TEXT NOT NULL,
    origin       TEXT NOT NULL,
    parent_id    INTEGER REFERENCES candidates(id),
    design       TEXT NOT NULL DEFAULT '{}',
    params       TEXT NOT NULL DEFAULT '{}',
    created_at   TEXT NOT NULL,
    UNIQUE (task_sha256, sha256)
);
CREATE TABLE IF NOT EXISTS evaluations (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    candidate_id     INTEGER NOT NULL REFERENCES candidates(id),
    task_sha256      TEXT NOT NULL,
    run_id           TEXT,
    status           TEXT NOT NULL,
    correct          INTEGER NOT NULL,
    precision        TEXT NOT NULL,
    device           TEXT,
    candidate_ms     REAL,
    speedup_eager    REAL,
    speedup_compile  REAL,
    sol_fraction     REAL,
    verdict          TEXT NOT NULL,
    created_at       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS evaluations_task ON evaluations(task_sha256, correct);
CREATE INDEX IF NOT EXISTS evaluations_run ON evaluations(run_id);
CREATE TABLE IF NOT EXISTS runs (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    task_sha256  TEXT,
    config       TEXT NOT NULL DEFAULT '{}',
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    status       TEXT NOT NULL DEFAULT 'running'
);
CREATE TABLE IF NOT EXISTS messages (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id        TEXT,
    candidate_id  INTEGER REFERENCES candidates(id),
    role          TEXT NOT NULL,
    content       TEXT NOT NULL,
    meta          TEXT NOT NULL DEFAULT '{}',
    created_at    TEXT NOT NULL
);
"""

# MIGRATIONS[v] upgrades a database at version v to v + 1.
MIGRATIONS: dict[int, str] = {
    # A candidate's parent depends on the run that proposed it (one source may be a structure in
    # one run and a tuning step of another), so each evaluation keeps its own; NULL in rows
    # written before, where the candidate's first parent stands.
    1: "ALTER TABLE evaluations ADD COLUMN parent_id INTEGER REFERENCES candidates(id);",
}


def migrate(conn: sqlite3.Connection) -> None:
    """Create the tables or bring an older archive up to :data:`SCHEMA_VERSION`."""
    conn.executescript(_V1)
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    version = row[0] if row else None
    if version is None:  # a new archive: the version-1 tables, then every migration
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (1,))
        version = 1
    if version > SCHEMA_VERSION:
        from kernelwright.errors import ArchiveError

        raise ArchiveError(
            f"the archive has schema version {version}, newer than this kernelwright "
            f"({SCHEMA_VERSION}); upgrade kernelwright to read it"
        )
    while version < SCHEMA_VERSION:
        conn.executescript(MIGRATIONS[version])
        version += 1
        conn.execute("UPDATE schema_version SET version = ?", (version,))
    conn.commit()
