"""scripts/load_audit.py: which task files it reads, and how it tells vector from scalar."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _audit_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("load_audit", ROOT / "scripts" / "load_audit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tasks_come_from_files_folders_and_lists(tmp_path: Path) -> None:
    audit = _audit_module()
    folder = tmp_path / "tasks"
    folder.mkdir()
    for name in ("b.py", "a.py", "_helper.py"):
        (folder / name).write_text("")
    listing = tmp_path / "list.txt"
    listing.write_text("# a comment\nx/one.py  # trailing comment\n\nx/two.py\n")
    got = audit.task_paths([str(folder), str(listing), "c.py"])
    assert got == [folder / "a.py", folder / "b.py", Path("x/one.py"), Path("x/two.py"),
                   Path("c.py")]


def test_vector_and_scalar_accesses_are_told_apart() -> None:
    from kernelwright.design.compile_check import global_loads, global_stores

    audit = _audit_module()
    ptx = ("ld.global.v4.b32 {a, b, c, d}, [x]; ld.global.nc.L1::evict_last.b32 r, [y];\n"
           "ld.global.v2.b16 {h, i}, [z]; st.global.v2.b32 [z], {a, b}; st.global.b16 [w], h;")
    assert global_loads(ptx) == {"ld.global.v4.b32": 1, "ld.global.b32": 1,
                                 "ld.global.v2.b16": 1}
    assert global_stores(ptx) == {"st.global.v2.b32": 1, "st.global.b16": 1}
    assert audit.split_counts(global_loads(ptx)) == (2, 1)
    assert audit.split_counts(global_stores(ptx)) == (1, 1)
