"""The journal: results appended as they arrive, read back by key; keys follow what matters."""

import dataclasses
import json

from kernelwright.bench import Journal, default_journal_path
from kernelwright.bench.journal import fingerprint_hash, options_fingerprint, result_key
from kernelwright.evaluate import EvalOptions
from kernelwright.records import Precision


def test_append_and_read_back(tmp_path, make_result):
    journal = Journal(tmp_path / "j.jsonl")
    assert journal.entries() == []
    r = dataclasses.replace(make_result("a", eager=2.0, compile=1.5, sol=0.3), key="k1")
    journal.append(r, "run-1", "fp")
    (entry,) = journal.entries()
    assert entry.run_id == "run-1" and entry.fingerprint == "fp"
    assert entry.result == r
    assert journal.done()["k1"].result.speedup("eager") == 2.0


def test_a_line_cut_short_is_ignored(tmp_path, make_result):
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    good = make_result("a", "missing")
    journal.append(good, "run", "fp")
    with path.open("a") as fh:
        fh.write(json.dumps({"run_id": "run", "fingerprint": "fp"})[:20])  # killed mid-write
    assert [e.result.task_id for e in journal.entries()] == ["a"]


def test_keys_change_with_task_solution_and_options():
    fp = fingerprint_hash(options_fingerprint(EvalOptions(), "cpu", "small"))
    key = result_key("t", "s", fp)
    assert result_key("t", "s", fp) == key
    assert result_key("t2", "s", fp) != key
    assert result_key("t", "s2", fp) != key
    assert result_key("t", None, fp) != key
    for other in (
        EvalOptions(precision=Precision.BF16),
        EvalOptions(trials=2),
        EvalOptions(timing=False),
        EvalOptions(atol=1e-3),
    ):
        assert fingerprint_hash(options_fingerprint(other, "cpu", "small")) != fp
    assert fingerprint_hash(options_fingerprint(EvalOptions(), "cuda", "full")) != fp
    assert fingerprint_hash(options_fingerprint(EvalOptions(), "cpu", "small", "optimize")) != fp


def test_a_journal_of_one_gpu_model_is_not_resumed_on_another():
    def key(gpus):
        return fingerprint_hash(options_fingerprint(EvalOptions(), "cuda", "full", gpus=gpus))

    h100, h200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
    assert key([h100]) != key([h200])
    assert key([h100, h200]) == key([h200, h100])
    # A fingerprint with no models named is the one older journals were written under.
    assert "gpus" not in options_fingerprint(EvalOptions(), "cuda", "full")


def test_gpu_models_are_named_by_a_child_process(monkeypatch):
    import subprocess

    from kernelwright.evaluate import devices

    seen = []

    def fake_run(argv, **kwargs):
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, stdout="NVIDIA H200\nNVIDIA H200\n\n")

    monkeypatch.setattr(devices.subprocess, "run", fake_run)
    assert devices.gpu_models() == ("NVIDIA H200",)
    assert "get_device_name" in seen[0][-1]
    monkeypatch.setattr(
        devices.subprocess, "run",
        lambda argv, **kwargs: subprocess.CompletedProcess(argv, 1, stdout="", stderr="no"),
    )
    assert devices.gpu_models() == ()


def test_auto_device_resolves_before_fingerprinting():
    auto = options_fingerprint(EvalOptions(device="auto"), "cpu", "small")
    cpu = options_fingerprint(EvalOptions(device="cpu"), "cpu", "small")
    assert auto == cpu
    assert auto["compile_baseline"] is False
    assert options_fingerprint(EvalOptions(), "cuda", "full")["compile_baseline"] is True


def test_default_journal_path(tmp_path, monkeypatch):
    assert default_journal_path(tmp_path / "out.json") == tmp_path / "out.jsonl"
    assert default_journal_path(tmp_path / "out") == tmp_path / "out.jsonl"
    monkeypatch.setenv("KERNELWRIGHT_HOME", str(tmp_path / "home"))
    assert default_journal_path(None) == tmp_path / "home" / "bench" / "journal.jsonl"
    assert default_journal_path("-") == tmp_path / "home" / "bench" / "journal.jsonl"


def test_constraints_and_checked_properties_change_the_key():
    from kernelwright.constraints import Constraints
    from kernelwright.constraints.properties import Properties, ShapeRange

    plain = options_fingerprint(EvalOptions(), "cpu", "small")
    assert "determinism" not in plain and "shape_ranges" not in plain  # old keys still match
    seen = {fingerprint_hash(plain)}
    for props in (Properties(deterministic=True), Properties(memory_ceiling_bytes=1 << 20),
                  Properties(shape_ranges=(ShapeRange("batch", 1, 64),)),
                  Properties(shape_ranges=(ShapeRange("batch", 1, 128),))):
        options = Constraints(properties=props).apply(EvalOptions())
        seen.add(fingerprint_hash(options_fingerprint(options, "cpu", "small")))
    assert len(seen) == 5
    twice = Constraints(properties=Properties(shape_ranges=(ShapeRange("batch", 1, 64),)))
    assert twice.apply(twice.apply(EvalOptions())).shape_ranges == (("batch", 1, 64),)


def test_the_code_that_judged_is_part_of_the_key(monkeypatch):
    """A result judged by other harness or generator code is not reused by a resumed run."""
    from kernelwright.bench import journal, steps

    plain = fingerprint_hash(options_fingerprint(EvalOptions(), "cpu", "small"))
    monkeypatch.setattr(journal, "harness_fingerprint", lambda: "another harness")
    assert fingerprint_hash(options_fingerprint(EvalOptions(), "cpu", "small")) != plain

    first = steps.OptimizeStep(":memory:", optimize_fn=lambda *a, **k: None).settings
    monkeypatch.setattr("kernelwright.design.fingerprint.generator_fingerprint",
                        lambda: "another generator")
    assert steps.OptimizeStep(":memory:", optimize_fn=lambda *a, **k: None).settings != first
