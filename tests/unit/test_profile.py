"""``kernelwright profile``: the command Nsight Compute is run with, and its export diagnosed.
A stand-in ``ncu`` (KERNELWRIGHT_NCU) replays the profile captured on an H200 and records what
it was asked: no GPU needed."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.hardware.diagnose import METRICS

FIXTURES = Path(__file__).parents[1] / "fixtures"
TASK = Path(__file__).parents[2] / "examples" / "softmax" / "task.py"
SOLUTION = TASK.with_name("solution.py")


@pytest.fixture
def fake_ncu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ``ncu`` that prints the captured export and saves its arguments and driver."""
    record = tmp_path / "asked.json"
    script = tmp_path / "ncu"
    script.write_text(f"""#!{sys.executable}
import json, pathlib, sys
args = sys.argv[1:]
driver = pathlib.Path(args[-1])
json.dump({{"args": args, "driver": driver.read_text(),
            "solution": (driver.parent / "solution.py").read_text()}},
          open({str(record)!r}, "w"))
sys.stdout.write(open({str(FIXTURES / "profiles" / "ncu_raw_softmax_h200.csv")!r}).read())
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("KERNELWRIGHT_NCU", str(script))
    return record


def test_the_solution_runs_under_ncu_with_the_counters_the_rules_read(fake_ncu, tmp_path):
    out = tmp_path / "p.csv"
    res = CliRunner().invoke(app, ["profile", str(TASK), str(SOLUTION), "--out", str(out),
                                   "--kernels", "3", "--json"])
    assert res.exit_code == 0, res.output
    found = json.loads(res.stdout)
    assert found["kernels"] == 3 and found["missing_counters"] == []
    assert {d["kind"] for d in found["diagnoses"]} == {"memory-bound"}
    asked = json.loads(fake_ncu.read_text())
    args = asked["args"]
    assert args[args.index("--metrics") + 1] == ",".join(METRICS)
    assert args[args.index("--launch-count") + 1] == "3"
    assert args[args.index("--nvtx-include") + 1] == "kernelwright/"
    assert args[-2] == sys.executable
    # the profiled calls are in the NVTX range, the warm-up outside it
    driver = asked["driver"]
    assert driver.index("model(*inputs)") < driver.index('range_push("kernelwright")')
    assert asked["solution"] == SOLUTION.read_text()
    assert out.read_text().count("softmax_kernel") == 3  # the export is kept


def test_bad_input_and_a_missing_ncu_are_one_line_errors(tmp_path, monkeypatch):
    runner = CliRunner()
    monkeypatch.setenv("KERNELWRIGHT_NCU", str(tmp_path / "no-ncu"))
    res = runner.invoke(app, ["profile", str(TASK), str(SOLUTION), "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "cannot run" in res.output and "Traceback" not in res.output
    monkeypatch.delenv("KERNELWRIGHT_NCU")
    monkeypatch.setenv("PATH", str(tmp_path))  # no ncu on PATH
    if not any(Path("/usr/local/cuda/bin").glob("ncu")):
        res = runner.invoke(app, ["profile", str(TASK), str(SOLUTION)])
        assert res.exit_code == 2 and "Nsight Compute (ncu) not found" in res.output
    res = runner.invoke(app, ["profile", str(TASK), str(tmp_path / "none.py")])
    assert res.exit_code == 2 and "cannot read" in res.output
    res = runner.invoke(app, ["profile", str(TASK), str(SOLUTION), "--kernels", "0"])
    assert res.exit_code == 2 and "at least 1" in res.output
    assert os.environ.get("KERNELWRIGHT_NCU") is None


def test_optimize_profiles_its_best_template_candidate_only(fake_ncu, tmp_path):
    from kernelwright.optimize import OptimizeResult, _profile_best
    from kernelwright.records import Candidate, Precision, Status, Verdict
    from kernelwright.search.controller import SearchResult
    from kernelwright.search.proposer import Trial
    from kernelwright.task import load_task

    task = load_task(TASK, "small")

    def result(origin: str) -> OptimizeResult:
        best = Trial(1, Candidate(SOLUTION.read_text(), origin),
                     Verdict(Status.CORRECT, True, precision=Precision.FP32))
        search = SearchResult("run", trials=[best], best=best)
        return OptimizeResult(task, "run", "cuda", "small", Precision.FP32, search, None)

    lines = _profile_best(result("template"), tmp_path)
    assert lines and all("memory-bound at 8" in line for line in lines)
    assert (tmp_path / "profile.csv").exists()
    (llm,) = _profile_best(result("llm"), tmp_path / "other")
    assert llm.startswith("not profiled: the best candidate came from llm")
    assert not (tmp_path / "other").exists()


def test_profile_best_needs_a_gpu_and_an_out_folder(tmp_path):
    res = CliRunner().invoke(app, ["optimize", str(TASK), "--device", "cpu", "--profile-best",
                                   "--out", str(tmp_path / "o"), "--archive",
                                   str(tmp_path / "a.sqlite")])
    assert res.exit_code == 2 and "--profile-best profiles kernels on a GPU" in res.output


def test_the_driver_runs_the_files_as_named_modules(tmp_path):
    """Triton's compiler reads the module name of each global a kernel calls (a @triton.jit
    helper such as ``_tanh``): the driver must not leave it None, or every kernel that calls a
    helper fails to compile under ncu. Checked without a GPU: the driver's loading lines run on
    the CPU and every @triton.jit function it defined names its module."""
    import textwrap

    from kernelwright.hardware.profile import DRIVER

    solution = tmp_path / "solution.py"
    solution.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def _twice(x):
            return x * 2.0

        @triton.jit
        def scale_kernel(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, _twice(tl.load(x_ptr + offs)))
        '''))
    driver = textwrap.dedent(DRIVER.format(task_dir=str(TASK.parent), task_file=str(TASK),
                                           solution_file=str(solution), calls=1))
    loading = driver[: driver.index("torch.manual_seed(0)")]
    probe = tmp_path / "probe.py"
    probe.write_text(loading + textwrap.dedent('''
        from triton.runtime.jit import JITFunction
        jitted = {k: v for k, v in solution.items() if isinstance(v, JITFunction)}
        print(sorted(jitted), sorted({type(v.__module__).__name__ for v in jitted.values()}))
        '''))
    import subprocess

    done = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "['_twice', 'scale_kernel'] ['str']"
