"""Hardware counters to diagnoses: Nsight Compute's raw-page CSV is read as the profiler writes
it, each rule fires on the counters that show its limit and stays silent otherwise, and missing
counters are named, never guessed.

The export `ncu_raw_three_kernels.csv` has the layout of `ncu --csv --page raw --print-units
base` (the profiler's own lines and the program's output before the table, a units row,
thousands separators); its three launches' values are chosen to show one limit each.
`ncu_raw_softmax_h200.csv` is a capture: `ncu --clock-control none --csv --page raw
--print-units base --metrics "$(kernelwright diagnose --metrics)" -c 6` around three calls of
examples/softmax/solution.py on an H200 (Nsight Compute of CUDA 13, driver 580).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.hardware import diagnose as dg

EXPORT = "profiles/ncu_raw_three_kernels.csv"


@pytest.fixture
def export_text(fixtures) -> str:
    return (fixtures / EXPORT).read_text()


def kinds(findings: dg.Findings, kernel: str) -> set[str]:
    return {d.kind for d in findings.diagnoses if d.kernel == kernel}


def test_the_export_is_read_launch_by_launch_in_base_units(export_text) -> None:
    profiles = dg.parse_raw_csv(export_text)
    assert [p.kernel for p in profiles] == ["softmax_kernel", "row_sum_kernel", "gemm_kernel"]
    softmax = profiles[0].counters
    assert softmax[dg.DURATION] == 1_434_912  # "1,434,912": the separators are dropped
    assert softmax[dg.LOAD_BYTES] == 4_294_967_296
    assert set(dg.METRICS) <= set(softmax)  # every counter kernelwright asks for, and no column
    assert "Block Size" not in softmax  # that is not a counter


def test_each_kernel_gets_the_limits_its_counters_show(export_text) -> None:
    findings = dg.diagnose(dg.parse_raw_csv(export_text))
    # near DRAM's peak with full sectors, 16-byte loads, no spills, full waves: one diagnosis
    assert kinds(findings, "softmax_kernel") == {"memory-bound"}
    assert kinds(findings, "row_sum_kernel") == {
        "latency-bound", "unvectorised", "uncoalesced", "occupancy", "tail"}
    assert kinds(findings, "gemm_kernel") == {"compute-bound", "spills", "occupancy", "tail"}
    assert not findings.missing
    text = {(d.kernel, d.kind): d.text for d in findings.diagnoses}
    assert "91% of DRAM peak" in text["softmax_kernel", "memory-bound"]
    assert "128 bytes per warp load (4 bytes a thread)" in text["row_sum_kernel", "unvectorised"]
    assert "4x fewer instructions" in text["row_sum_kernel", "unvectorised"]
    assert "25% of each 32-byte sector" in text["row_sum_kernel", "uncoalesced"]
    assert "(59 programs) fills 45% of one wave" in text["row_sum_kernel", "tail"]
    assert "limited by registers to 12% of the warps" in text["gemm_kernel", "occupancy"]
    assert "4096 bytes stored to local memory at 255 registers" in text["gemm_kernel", "spills"]
    assert "1.20 waves" in text["gemm_kernel", "tail"] and "40% of the time" in text[
        "gemm_kernel", "tail"]
    assert findings.for_prompt().count("\n") == len(findings.diagnoses) - 1


def test_a_captured_export_has_every_counter_the_rules_read(fixtures) -> None:
    profiles = dg.parse_raw_csv((fixtures / "profiles/ncu_raw_softmax_h200.csv").read_text())
    assert [p.kernel for p in profiles] == ["softmax_kernel"] * 3
    findings = dg.diagnose(profiles)
    assert not findings.missing  # every metric name kernelwright asks for exists in this ncu
    # a row softmax streaming at ~82% of DRAM peak, full sectors, no spills: memory-bound only
    assert kinds(findings, "softmax_kernel") == {"memory-bound"}
    assert all("% of DRAM peak" in d.text for d in findings.diagnoses)


@pytest.mark.parametrize(
    ("dram", "sm", "kind"),
    [(86.0, 10.0, "memory-bound"), (65.0, 50.0, "memory-bound"), (30.0, 70.0, "compute-bound"),
     (39.0, 39.0, "latency-bound"), (50.0, 45.0, None)],
)
def test_throughput_rule_boundaries(dram: float, sm: float, kind: str | None) -> None:
    findings = dg.diagnose([dg.KernelProfile("k", {dg.DRAM_PCT: dram, dg.SM_PCT: sm})])
    assert {d.kind for d in findings.diagnoses} == ({kind} if kind else set())


def test_a_rule_whose_counters_are_missing_says_nothing_and_names_them() -> None:
    findings = dg.diagnose([dg.KernelProfile("k", {dg.DRAM_PCT: 20.0})])
    assert findings.diagnoses == []
    assert {dg.SM_PCT, dg.SECTOR_USE_PCT, dg.LOCAL_STORE_BYTES, dg.WAVES} <= findings.missing


def test_text_that_is_not_an_export_is_refused() -> None:
    with pytest.raises(dg.ExportError, match="Kernel Name"):
        dg.parse_raw_csv("==PROF== No kernels were profiled.\n")


def test_the_command_prints_diagnoses_and_json(fixtures) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["diagnose", str(fixtures / EXPORT), "--json"])
    assert result.exit_code == 0, result.output
    reply = json.loads(result.output)
    assert reply["kernels"] == 3 and reply["missing_counters"] == []
    assert {d["kind"] for d in reply["diagnoses"] if d["kernel"] == "gemm_kernel"} == {
        "compute-bound", "spills", "occupancy", "tail"}
    listing = runner.invoke(app, ["diagnose", "--metrics"])
    assert listing.exit_code == 0 and listing.output.strip().split(",") == list(dg.METRICS)


def test_the_command_refuses_a_missing_or_foreign_file_in_one_line(fixtures, tmp_path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["diagnose", str(tmp_path / "none.csv")])
    assert missing.exit_code == 2 and "cannot read" in missing.output
    foreign = tmp_path / "other.csv"
    foreign.write_text('"a","b"\n"1","2"\n')
    refused = runner.invoke(app, ["diagnose", str(foreign)])
    assert refused.exit_code == 2 and "Kernel Name" in refused.output
    assert "Traceback" not in missing.output + refused.output


def test_a_profile_joins_the_llm_planners_notes(fixtures, tmp_path) -> None:
    from kernelwright.cli.optimize_cmd import notes_with_diagnoses, profile_diagnoses

    diagnoses, kinds = profile_diagnoses(fixtures / EXPORT)
    assert {"memory-bound", "unvectorised", "spills", "tail"} <= set(kinds)
    assert "- row_sum_kernel: unvectorised loads: 128 bytes per warp load" in "\n".join(diagnoses)
    alone = notes_with_diagnoses(None, diagnoses)
    assert alone is not None and alone.startswith("Hardware diagnoses of the profiled kernel")
    assert "- row_sum_kernel: unvectorised loads: 128 bytes per warp load" in alone
    notes = tmp_path / "notes.md"
    notes.write_text("Prefer one kernel.\n")
    both = notes_with_diagnoses(notes, diagnoses)
    assert both is not None and both.startswith("Prefer one kernel.\n\nHardware diagnoses")
    # without a profile the notes stay a path, read by the proposer as before
    assert notes_with_diagnoses(notes, ()) == str(notes)
    assert notes_with_diagnoses(None, ()) is None

