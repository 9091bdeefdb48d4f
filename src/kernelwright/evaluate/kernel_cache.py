"""Compiled kernels shared between the processes of kernelwright's own candidates.

Each candidate's process compiles its Triton kernels into a cache folder of its own (under its
scratch folder), which goes with the process. Candidates of one search share most of their
kernels: a tuning move changes one group of a model and leaves the other groups' kernels as
they were, two structures often differ in one group, and the best candidate is evaluated a
second time. So once a candidate that kernelwright's templates wrote has been judged, the
kernels its process compiled are kept (:meth:`KernelCache.harvest`), and the process of the
next such candidate finds them in its own cache folder before it imports the candidate
(:meth:`KernelCache.seed`): Triton loads them instead of compiling them again.

Only candidates whose source kernelwright's templates wrote take part, both ways: a compiled
kernel is machine code the next process runs, so none is taken from, or handed to, a candidate
that kernelwright did not write (an LLM's, a user's). The entries are Triton's own: a folder
per compiled kernel, named by its cache key, holding its IRs, its binary, its metadata and a
group file that lists them by absolute path (rewritten for each folder an entry lands in). A
folder whose group file names anything outside it, or that is still being written, is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

GROUP_PREFIX = "__grp__"  # Triton's group files: {"child_paths": {file name: absolute path}}
PARTIAL = ".partial"  # an entry being placed (renamed into place once complete)
MAX_ENTRIES = 4096  # kernels a store keeps: a search compiles tens, a whole model's some hundreds


@dataclass
class KernelCache:
    """A store of compiled kernels (``store``: a folder of Triton cache entries)."""

    store: Path
    kept: int = 0  # entries this store has taken in

    def harvest(self, cache: Path) -> int:
        """Keep the kernels compiled into ``cache`` (a process's Triton cache folder) that the
        store lacks; returns how many were added."""
        added = 0
        for entry in _entries(cache):
            if _complete(self.store / entry.name):
                continue
            if self.kept >= MAX_ENTRIES:
                break
            if _place(entry, self.store, link=False):
                self.kept += 1
                added += 1
        return added

    def seed(self, cache: Path) -> int:
        """Place every kept kernel that ``cache`` lacks in it; returns how many were placed."""
        placed = 0
        for entry in _entries(self.store):
            if not _complete(cache / entry.name) and _place(entry, cache, link=True):
                placed += 1
        return placed


def _entries(folder: Path) -> list[Path]:
    """The complete kernel entries of a Triton cache folder: folders holding a group file."""
    if not folder.is_dir():
        return []
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.is_dir() and not entry.name.endswith(PARTIAL) and _group(entry) is not None:
            found.append(entry)
    return found


def _complete(entry: Path) -> bool:
    """A kernel's entry is there, with every file its group lists (an empty folder Triton made
    for a lookup is not: an entry is placed over it)."""
    return entry.is_dir() and _group(entry) is not None


def _group(entry: Path) -> tuple[Path, dict[str, str]] | None:
    """The entry's group file and the files it lists (name -> path), or None when there is no
    group file, it does not parse, or it lists anything but files of this very folder."""
    groups = [p for p in entry.iterdir() if p.name.startswith(GROUP_PREFIX)]
    if len(groups) != 1:
        return None
    try:
        children = json.loads(groups[0].read_text()).get("child_paths")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(children, dict) or not children:
        return None
    for name, path in children.items():
        if not isinstance(name, str) or not isinstance(path, str):
            return None
        file = Path(path)
        inside = os.path.realpath(file.parent) == os.path.realpath(entry)
        if file.name != name or not inside or not file.is_file() or file.is_symlink():
            return None
    return groups[0], children


def _place(entry: Path, into: Path, *, link: bool) -> bool:
    """Copy (or hard-link, where ``link`` and the file system allows) an entry's files into
    ``into``/<entry name>, its group file rewritten to the new paths; False if it is not a
    complete entry any more or the copy failed (nothing is left half placed)."""
    group = _group(entry)
    if group is None:
        return False
    group_file, children = group
    target = into / entry.name
    partial = into / f"{entry.name}{PARTIAL}"
    try:
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        for name in children:
            _copy(entry / name, partial / name, link)
        moved = {name: str(target / name) for name in children}
        (partial / group_file.name).write_text(json.dumps({"child_paths": moved}))
        os.rename(partial, target)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
        return False
    return True


def _copy(source: Path, dest: Path, link: bool) -> None:
    if link:
        try:
            os.link(source, dest)
            return
        except OSError:  # another file system, or links refused: a copy
            pass
    shutil.copyfile(source, dest)
