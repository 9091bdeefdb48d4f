"""The JSON document and the Markdown/HTML report, from synthetic results."""

import json

import pytest

from kernelwright.bench import BenchRun, bench_document, read_document, write_json
from kernelwright.bench.journal import options_fingerprint
from kernelwright.evaluate import EvalOptions
from kernelwright.provenance import source_commit
from kernelwright.records import Precision
from kernelwright.report import plots, write_report


@pytest.fixture
def document(make_result):
    results = (
        make_result("01_softmax", eager=3.0, compile=1.5, sol=0.6, family="softmax"),
        make_result("02_gemm", eager=0.8, compile=0.5, sol=0.3, family="gemm"),
        make_result("03_norm", "incorrect", family="norm"),
        make_result("04_scan", "missing", family="scan"),
    )
    options = EvalOptions(device="cuda", size="full", precision=Precision.BF16)
    run = BenchRun(
        run_id="bench-test",
        options=options,
        fingerprint=options_fingerprint(options, "cuda", "full"),
        results=results,
        started_at="2026-01-01T00:00:00",
        finished_at="2026-01-01T00:10:00",
    )
    return bench_document(run)


def test_document_layout(document):
    assert document["format"] == "kernelwright-bench/1"
    assert set(document) == {"format", "run", "summary", "families", "tasks"}
    run = document["run"]
    assert run["precision"] == "bf16" and run["representative"] is True
    assert run["baselines"] == ["eager", "compile"]
    assert run["counts"] == {"correct": 2, "incorrect": 1, "missing": 1}
    assert run["n_correct"] == 2
    assert run["commit"] == source_commit()  # the checkout that ran, or why none is named
    assert document["summary"]["fast_1"] == 0.25
    assert document["summary"]["fast_1_vs_compile"] == 0.25
    assert list(document["families"]) == ["softmax", "gemm", "norm", "scan"]
    task = document["tasks"][0]
    assert task["speedup_vs_eager"] == 3.0 and task["status"] == "correct"
    assert task["verdict"]["status"] == "correct"
    assert document["tasks"][3]["verdict"] is None


def test_json_round_trip(document, tmp_path):
    write_json(document, tmp_path / "out" / "bench.json")
    data, results = read_document(tmp_path / "out" / "bench.json")
    assert data == json.loads(json.dumps(document))
    assert [r.status for r in results] == ["correct", "correct", "incorrect", "missing"]
    assert results[0].speedup("compile") == 1.5


def test_report_files_and_plots(document, tmp_path):
    files = write_report(document, tmp_path / "rep")
    assert files.markdown.name == "report.md" and files.html.name == "report.html"
    assert sorted(p.name for p in files.images) == ["fast_p.png", "sol.png", "speedup.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in files.images)
    md = files.markdown.read_text()
    assert "![Speedup per task](plots/speedup.png)" in md
    assert "x eager (bf16)" in md and "fast_1 vs torch.compile (bf16)" in md
    assert "| 01_softmax | softmax | correct |" in md
    assert "not representative" not in md
    assert f"- **kernelwright commit**: {source_commit()}" in md


def test_html_is_self_contained(document, tmp_path):
    page = write_report(document, tmp_path / "rep").html.read_text()
    assert page.count('src="data:image/png;base64,') == 3
    assert "<link" not in page and "http://" not in page and "https://" not in page
    assert "geomean speedup vs eager (bf16; failures count 1.0)" in page
    assert 'class="status-bad">missing<' in page


def test_without_matplotlib_the_report_keeps_its_tables(document, tmp_path, monkeypatch):
    monkeypatch.setattr(plots, "available", lambda: False)
    files = write_report(document, tmp_path / "rep")
    assert files.images == ()
    assert "pip install 'kernelwright[report]'" in files.markdown.read_text()
    assert "data:image" not in files.html.read_text()


def test_cpu_runs_are_labelled(document, tmp_path):
    document["run"]["representative"] = False
    md = write_report(document, tmp_path / "rep").markdown.read_text()
    assert "say nothing about a GPU" in md


def test_plots_name_the_policy(document, make_result):
    # The titles carry the policy; check the drawing code does not fail on edge cases either.
    results = [make_result("a", eager=1e-3, compile=250.0, sol=1.7), make_result("b", "error")]
    for png in (
        plots.speedup_chart(results, ["eager", "compile"], "tf32"),
        plots.fast_p_chart(results, ["eager"], "tf32", representative=False),
        plots.sol_chart(results, "tf32"),
        plots.speedup_chart([], ["eager"], "fp32"),
    ):
        assert png.startswith(b"\x89PNG")


def test_energy_columns_appear_only_when_the_gpu_measured_energy(make_result) -> None:
    import dataclasses

    from kernelwright.records import EnergyStats
    from kernelwright.report.tables import task_table

    plain = make_result("a", eager=2.0, compile=1.5)
    table = task_table([plain], "fp32", ["eager", "compile"])
    assert "candidate mJ" not in table.headers and len(table.rows[0]) == len(table.headers)
    assert plain.to_dict()["candidate_mj"] is None
    timing = dataclasses.replace(plain.verdict.timing, candidate_energy=EnergyStats(1.25, 300.0),
                                 eager_energy=EnergyStats(2.5, 320.0))
    metered = dataclasses.replace(plain, verdict=dataclasses.replace(plain.verdict, timing=timing))
    table = task_table([metered, plain], "fp32", ["eager", "compile"])
    assert table.headers[-3:] == ("candidate mJ", "eager mJ", "note")
    assert table.rows[0][-3:-1] == ("1.250", "2.500") and table.rows[1][-3:-1] == ("-", "-")
    assert len(table.align) == len(table.headers)
    assert metered.to_dict()["candidate_mj"] == 1.25 and metered.to_dict()["eager_mj"] == 2.5


def test_a_file_that_is_not_a_bench_document_is_one_line(tmp_path):
    from kernelwright.errors import ConfigError

    for name, content in (("text.json", b"not json at all\n"), ("bytes.json", bytes(range(256))),
                          ("other.json", b'{"format": "something-else"}')):
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ConfigError, match="not a kernelwright bench JSON document"):
            read_document(tmp_path / name)
