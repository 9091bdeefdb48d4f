"""Compiled kernels kept from one candidate's process for the next (evaluate.kernel_cache):
entries written by Triton's own cache manager are found by it again in the folder they are
seeded into; anything that is not a complete entry of its own folder is left behind. (That a
session shares kernels only for candidates kernelwright's templates wrote is checked with the
scripted executor, test_fake_executor.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelwright.evaluate.kernel_cache import KernelCache

KEY = "0123456789abcdef" * 4  # Triton names an entry by its hash (base32 of it)
FILES = {"k.json": '{"name": "k"}', "k.ttir": "module {}", "k.cubin": b"\x7fELF cubin"}


def _compile_into(cache: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """What Triton leaves in ``cache`` for one compiled kernel: its files, then the group
    file listing them (written by Triton's own FileCacheManager); returns the entry's name."""
    from triton import knobs
    from triton.runtime.cache import get_cache_manager

    monkeypatch.setattr(knobs.cache, "dir", str(cache))
    manager = get_cache_manager(KEY)
    group = {name: manager.put(data, name) for name, data in FILES.items()}
    manager.put_group("k.json", group)
    return Path(manager.cache_dir).name


def _found(cache: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str] | None:
    """The group Triton's cache manager finds in ``cache`` for the kernel (None: a miss)."""
    from triton import knobs
    from triton.runtime.cache import get_cache_manager

    monkeypatch.setattr(knobs.cache, "dir", str(cache))
    return get_cache_manager(KEY).get_group("k.json")


def test_a_harvested_kernel_is_found_where_it_is_seeded(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    name = _compile_into(first, monkeypatch)
    kernels = KernelCache(tmp_path / "store")
    assert _found(second, monkeypatch) is None
    assert kernels.harvest(first) == 1
    assert kernels.seed(second) == 1
    group = _found(second, monkeypatch)
    assert group is not None and set(group) == set(FILES)
    for file, path in group.items():
        assert Path(path).parent == second / name  # the seeded folder's own files
        data = FILES[file]
        assert Path(path).read_bytes() == (data if isinstance(data, bytes) else data.encode())
    # kept once, placed once
    assert kernels.harvest(first) == 0 and kernels.harvest(second) == 0
    assert kernels.seed(second) == 0


def test_the_store_outlives_the_process_folder_it_was_harvested_from(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    first = tmp_path / "first"
    _compile_into(first, monkeypatch)
    kernels = KernelCache(tmp_path / "store")
    kernels.harvest(first)
    shutil.rmtree(first)  # the process's folder goes with the process
    assert kernels.seed(tmp_path / "second") == 1
    assert _found(tmp_path / "second", monkeypatch) is not None


def test_an_entry_whose_group_names_a_file_elsewhere_is_not_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = tmp_path / "first"
    name = _compile_into(first, monkeypatch)
    elsewhere = tmp_path / "elsewhere.cubin"
    elsewhere.write_bytes(b"not this kernel's")
    group_file = first / name / "__grp__k.json"
    group = json.loads(group_file.read_text())
    group["child_paths"]["k.cubin"] = str(elsewhere)
    group_file.write_text(json.dumps(group))
    kernels = KernelCache(tmp_path / "store")
    assert kernels.harvest(first) == 0
    assert kernels.seed(tmp_path / "second") == 0


def test_folders_without_a_group_and_partial_entries_are_not_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "LAUNCHERMODULE").mkdir(parents=True)  # a launcher's module: a file, no group
    (cache / "LAUNCHERMODULE" / "__triton_launcher.so").write_bytes(b"so")
    half = cache / "HALF.partial"
    half.mkdir()
    (half / "k.json").write_text("{}")
    listed = {"child_paths": {"k.json": str(half / "k.json")}}
    (half / "__grp__k.json").write_text(json.dumps(listed))
    assert KernelCache(tmp_path / "store").harvest(cache) == 0


@pytest.mark.interpreter
def test_an_executor_seeds_a_process_before_it_runs_and_keeps_what_it_compiled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``share_kernels`` the process's own Triton cache folder holds the kept kernels when
    ``drive`` starts, and what the process added there is kept after it; without it, neither."""
    from kernelwright.evaluate.executor import Launch, SubprocessExecutor, triton_cache

    earlier = tmp_path / "earlier"
    name = _compile_into(earlier, monkeypatch)
    seen: dict[str, bool] = {}

    def drive(process):  # a process that "compiles" one more kernel into its cache folder
        cache = triton_cache(process.scratch)
        seen["seeded"] = (cache / name / "k.cubin").is_file()
        new = cache / "NEWKERNEL"
        new.mkdir(parents=True)
        (new / "n.cubin").write_bytes(b"new")
        (new / "__grp__n.json").write_text(
            json.dumps({"child_paths": {"n.cubin": str(new / "n.cubin")}}))
        return {}

    launch = Launch(device="cpu", extra_env={"TRITON_INTERPRET": "1"})
    with SubprocessExecutor(prestart=0) as executor:
        executor.kernels.harvest(earlier)
        executor.run(launch, {}, drive)
        assert seen == {"seeded": False}
        assert not (executor.kernels.store / "NEWKERNEL").exists()
        executor.run(launch, {}, drive, share_kernels=True)
        assert seen == {"seeded": True}
        assert (executor.kernels.store / "NEWKERNEL" / "n.cubin").read_bytes() == b"new"
