"""The baseline tool: records -> table, geomeans, markdown, resume rules; and a real run."""

from pathlib import Path

import pytest

from kernelwright.bench.baselines import measurer, table


def rec(task, precision, eager, compiled, status="ok", group="level1", nbytes=4.3e9, **kw):
    return {
        "kind": "measure",
        "task": task,
        "precision": precision,
        "group": group,
        "family": "f",
        "status": status,
        "eager_ms": eager,
        "compile_ms": compiled,
        "bytes": nbytes,
        "flops": 0,
        "size": "full",
        "device_kind": "cuda",
        "compiled": True,
        **kw,
    }


RECORDS = [
    {"kind": "probe", "name": "H200"},
    rec("a", "fp32", 4.0, 2.0),
    rec("a", "bf16", 2.0, 1.0),
    rec("b", "fp32", 1.0, 2.0, group="level2"),
    rec("b", "bf16", None, None, status="error", error="boom", group="level2"),
    rec("c", "fp32", None, None, status="not_run"),
]


def test_rows_take_the_latest_measurement():
    rows = table.rows(
        RECORDS + [rec("a", "fp32", 8.0, 2.0), rec("a", "bf16", 0, 0, status="not_run")]
    )
    assert [r.task for r in rows] == ["a", "b", "c"]
    a = rows[0]
    assert a.speedup("fp32") == 4.0  # the later fp32 record wins
    assert a.speedup("bf16") == 2.0  # a later not_run does not hide a measurement
    assert a.floor_ms("fp32") == pytest.approx(1.0)  # 4.3 GB at 4.3 TB/s
    assert table.rows(RECORDS, ["c", "a"])[0].task == "c"


def test_geomeans_overall_and_per_group():
    got = table.geomeans(table.rows(RECORDS), ["fp32", "bf16"])
    assert ("all", "fp32", 2, pytest.approx(1.0)) in [
        (s, p, n, pytest.approx(g)) for s, p, n, g in got
    ]
    by = {(s, p): (n, g) for s, p, n, g in got}
    assert by[("all", "fp32")] == (2, pytest.approx(1.0))  # sqrt(2.0 * 0.5)
    assert by[("all", "bf16")] == (1, pytest.approx(2.0))
    assert by[("level2", "fp32")] == (1, pytest.approx(0.5))
    assert ("level2", "bf16") not in by


def test_text_and_markdown():
    rows = table.rows(RECORDS)
    text = table.text_table(rows)
    assert "error" in text and "not_run" in text and "2.00x" in text
    md = table.markdown(rows, {"GPU": "H200", "commit": "abc"})
    assert "- **GPU**: H200" in md
    assert "| `a` | f | 4.000 | 2.000 | 2.00x | 2.000 | 1.000 | 2.00x | 1.000 | - |" in md
    assert "| all | fp32 | 2 | 1.00x |" in md


def test_finished_items_are_skipped_on_the_next_call():
    config = measurer.Config(items=(), device="cuda", size="full", compile=True)
    done = measurer.finished_before(RECORDS, config)
    assert done == {("a", "fp32"), ("a", "bf16"), ("b", "fp32"), ("b", "bf16")}  # c: not_run
    other = measurer.Config(items=(), device="cuda", size="small", compile=True)
    assert measurer.finished_before(RECORDS, other) == set()


def test_previous_records_skip_a_cut_line(tmp_path: Path):
    (tmp_path / "results.jsonl").write_text('{"kind": "probe"}\n{"kind": "mea')
    assert measurer.previous_records(tmp_path) == [{"kind": "probe"}]
    assert measurer.previous_records(tmp_path / "none") == []


@pytest.mark.interpreter
def test_baselines_are_measured_through_the_harness_and_resume(fixtures, tmp_path):
    """One real item on the CPU: timed by the judge's clock in a process of its own, written
    as it is measured, skipped by the next call; past the deadline an item is not run."""
    task = fixtures / "tasks" / "scale_bias.py"
    item = measurer.Item("scale_bias", str(task), "fixtures", "elementwise", "fp32")
    config = measurer.Config(items=(item,), device="cpu", size="small", compile=False,
                             state_dir=tmp_path / "state", out_dir=tmp_path / "out")
    (record,) = measurer.run(config, echo=lambda _line: None)
    assert record["status"] == "ok" and record["eager_ms"] > 0 and record["compile_ms"] is None
    assert (tmp_path / "out" / "baselines.jsonl").read_text().count("scale_bias") == 1
    assert measurer.run(config, echo=lambda _line: None) == []  # resumed: nothing left
    late = measurer.Config(items=(item,), device="cpu", size="small", compile=False,
                           state_dir=tmp_path / "other", deadline_s=-1.0)
    (skipped,) = measurer.run(late, echo=lambda _line: None)
    assert skipped["status"] == "not_run"


def test_the_commit_named_in_the_output(tmp_path):
    import re

    from kernelwright.provenance import git_commit, source_commit

    assert git_commit(tmp_path).startswith("unknown (not a git checkout")
    root = Path(__file__).resolve().parents[3]
    if (root / ".git").exists():
        named = r"[0-9a-f]{7,}( \(with uncommitted changes\))?"
        assert re.fullmatch(named, git_commit(root))
        assert re.fullmatch(named, source_commit())  # the checkout the tests run from


def test_an_archived_copy_of_the_source_names_its_commit(tmp_path):
    """`git archive` writes the commit into source_commit.toml (export-subst): a copy of the
    source without git names the commit it was archived from, a checkout's placeholder none."""
    import subprocess

    from kernelwright.provenance import ARCHIVED_COMMIT_FILE, archived_commit, package_commit

    package = Path(__file__).resolve().parents[3] / "src" / "kernelwright"
    placeholder = (package / ARCHIVED_COMMIT_FILE).read_text()
    assert archived_commit(placeholder) is None
    assert archived_commit("commit = [") is None
    copy = tmp_path / "kernelwright"
    copy.mkdir()
    assert package_commit(copy) == "unknown (kernelwright does not run from a git checkout)"
    full = "0123456789abcdef0123456789abcdef01234567"
    (copy / ARCHIVED_COMMIT_FILE).write_text(placeholder.replace("$Format:%H$", full))
    assert archived_commit((copy / ARCHIVED_COMMIT_FILE).read_text()) == full
    assert package_commit(copy) == "0123456 (from a source archive)"
    root = package.parents[1]
    if (root / ".git").exists():  # git itself fills the placeholder in an archive of HEAD
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        archive = subprocess.run(
            ["git", "archive", "--format=tar", "HEAD", f"src/kernelwright/{ARCHIVED_COMMIT_FILE}"],
            cwd=root, capture_output=True, check=True).stdout
        assert f'commit = "{head}"'.encode() in archive
