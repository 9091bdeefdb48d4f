"""The baseline cache under writers racing for one entry (bench workers timing one task)."""

import threading

from kernelwright.evaluate.baseline_cache import load_baselines, store_baselines


def test_racing_writers_leave_one_whole_entry_and_no_temporary_file(tmp_path):
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(100):
                store_baselines(tmp_path, "k", {"eager": {"samples_ms": [n, i] * 200}})
        except BaseException as exc:  # a rename losing its file, a half-written read...
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for _ in range(200):
        seen = load_baselines(tmp_path, "k")
        assert seen is None or len(seen["eager"]["samples_ms"]) == 400
    for t in threads:
        t.join()
    assert errors == []
    assert len(load_baselines(tmp_path, "k")["eager"]["samples_ms"]) == 400
    assert [p.name for p in (tmp_path / "baselines").iterdir()] == ["k.json"]
