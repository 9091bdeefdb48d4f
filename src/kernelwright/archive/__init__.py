"""The archive: every candidate and verdict in SQLite (see ``store``)."""

from kernelwright.archive.store import Archive, Record, RunRow

__all__ = ["Archive", "Record", "RunRow"]
