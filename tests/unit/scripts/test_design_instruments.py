"""scripts/sweep_design.py and scripts/profile_design.py under Triton's interpreter at a task's
small size: each variant checked against the task's model under the policy asked for, each
contender's kernels listed, every row written to its CSV."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "benchmarks" / "level1" / "37_sdpa.py"

pytest.importorskip("triton")

# Runs each script as ``TRITON_INTERPRET=1 python scripts/X.py ARGS`` would, in a process forked
# for it from one that has imported what every instrument imports (torch, Triton in interpreter
# mode, torch.export, kernelwright's planner and harness: about 5 s of CPU a process) and done
# nothing else. The child takes the request's environment, arguments and ``sys.path[0]``, runs
# the script as ``__main__``, and writes its output to files; the reply is its exit code.
RUNNER = """
import json, os, runpy, signal, sys, time, traceback
import torch, triton, triton.language, torch._dynamo, torch.export
import kernelwright.design.capture, kernelwright.design.emit, kernelwright.design.plan
import kernelwright.evaluate.harness
for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setsid()
            os.dup2(os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
            os.dup2(os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
            os.environ.clear(); os.environ.update(request["env"])
            sys.argv = list(request["argv"])
            sys.path[0] = os.path.dirname(sys.argv[0])
            runpy.run_path(sys.argv[0], run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(code)
    deadline = time.monotonic() + request["timeout"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL); os.waitpid(pid, 0)
            code = "timed out"
            break
        time.sleep(0.05)
    print(json.dumps({"code": code}), flush=True)
"""


@pytest.fixture(scope="module")
def run_script(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., None]]:
    """``run_script(script, *args)``: scripts/``script`` run under Triton's interpreter (see
    RUNNER); fails the test with the script's stderr unless it exits with 0."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT / "src")}
    runner = subprocess.Popen([sys.executable, "-c", RUNNER], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    count = iter(range(1 << 30))

    def run(script: str, *args: str) -> None:
        assert runner.stdin is not None and runner.stdout is not None
        logs = tmp_path_factory.mktemp(f"script{next(count)}")
        out, err = logs / "stdout", logs / "stderr"
        request = {"argv": [str(ROOT / "scripts" / script), *args], "timeout": 300,
                   "env": {**os.environ, "TRITON_INTERPRET": "1",
                           "PYTHONPATH": str(ROOT / "src")},
                   "stdout": str(out), "stderr": str(err)}
        runner.stdin.write(json.dumps(request) + "\n")
        runner.stdin.flush()
        reply = json.loads(runner.stdout.readline() or '{"code": "the runner died"}')
        stderr = err.read_text() if err.exists() else ""
        assert reply["code"] == 0, f"exit code {reply['code']}: {stderr[-2000:]}"

    yield run
    assert runner.stdin is not None and runner.stdout is not None
    runner.stdin.close()
    runner.wait(timeout=60)
    runner.stdout.close()


def test_a_sweep_can_lift_a_skills_conditions_and_checks_each_variant_under_the_policy(
        tmp_path: Path, run_script: Callable[..., None]) -> None:
    """--lift-conditions plans a skill where its condition says it does not apply (the tap tile
    at a W stride of 2), each variant still checked against the model under the policy asked
    for (bf16) and noted as such; the same sweep without it finds no design holding the
    skill."""
    task = ROOT / "benchmarks" / "level1" / "24_max_pool2d.py"
    run_script("sweep_design.py", str(task), "--small", "--no-compile", "--skill",
               "pool-tap-tile", "--out", str(tmp_path / "kept"))
    with (tmp_path / "kept" / "sweep.csv").open() as fh:
        kept = list(csv.DictReader(fh))
    assert [r["variant"] for r in kept] == ["plan"] and "no design holds" in kept[0]["note"]
    run_script("sweep_design.py", str(task), "--small", "--no-compile", "--skill",
               "pool-tap-tile", "--lift-conditions", "--precision", "bf16", "--grid",
               "BLOCK_W=16,32", "--out", str(tmp_path / "lifted"))
    with (tmp_path / "lifted" / "sweep.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["variant"] for r in rows] == ["eager", "default", "BLOCK_W=16", "BLOCK_W=32"]
    assert all(r["skills"] == "pool-tap-tile" and r["ok"] == "True" and r["precision"] == "bf16"
               and r["note"] == "conditions lifted" for r in rows[1:]), rows
    assert "BLOCK_W=16" in rows[2]["params"] and float(rows[2]["ms"]) > 0
    assert rows[0]["note"] == ""


def test_lifting_conditions_needs_a_skill_to_lift(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "sweep_design.py"),
                           str(ROOT / "benchmarks" / "level1" / "24_max_pool2d.py"),
                           "--lift-conditions", "--out", str(tmp_path / "none")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--lift-conditions needs the --skill" in proc.stderr
    assert not (tmp_path / "none").exists()


def test_a_small_sweep_of_a_task_without_a_small_size_past_the_interpreter_is_one_row(
        tmp_path: Path, run_script: Callable[..., None]) -> None:
    """KernelBench's files as published set no small size: --small would run one at its own
    size; the sweep writes why it does not (the judge's rule) and allocates nothing."""
    task = tmp_path / "big_relu.py"
    task.write_text("import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                    "    def forward(self, x):\n        return torch.relu(x)\n\n"
                    "def get_inputs():\n    return [torch.rand(4096, 393216)]\n")
    run_script("sweep_design.py", str(task), "--small", "--no-compile", "--out",
               str(tmp_path / "o"))
    with (tmp_path / "o" / "sweep.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["variant"] for r in rows] == ["plan"]
    assert "sets no small size" in rows[0]["note"] and "6.4 GB of inputs a call" in rows[0]["note"]


def test_a_profile_lists_each_contenders_operations(
        tmp_path: Path, run_script: Callable[..., None]) -> None:
    run_script("profile_design.py", str(TASK), "--small", "--no-compile", "--precision", "bf16",
               "--top", "3", "--out", str(tmp_path))
    with (tmp_path / "profile.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    by = {}
    for r in rows:
        by.setdefault(r["contender"], []).append(r)
    assert set(by) == {"eager", "design 0: attention-flash"}, set(by)
    for contender, listed in by.items():
        assert 1 <= len(listed) <= 3, contender
        assert all(float(r["max_err"]) < 3e-2 and r["kernel"].startswith("aten::")
                   for r in listed), listed
    assert (tmp_path / "candidates" / "37_sdpa__0.py").exists()


def test_the_confinement_probe_times_each_step_in_the_candidate_process_order(
    tmp_path: Path, run_script: Callable[..., None]
) -> None:
    # the instrument's steps, not the task, are under test: the cheapest design serves
    task = ROOT / "benchmarks" / "level1" / "02_silu.py"
    run_script("probe_confinement.py", str(task), "--small", "--precision", "bf16",
               "--out", str(tmp_path))
    with (tmp_path / "confinement.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    steps = ["plain", "launch monitor", "audit hook", "containment.enter", "containment.seal",
             "checked calls"]
    assert [r["step"] for r in rows] == [s for s in steps for _ in range(2)]
    assert [r["contender"].split(":")[0] for r in rows[:2]] == ["eager", "design 0"]
    assert all(float(r["call_ms"]) > 0 for r in rows)
    if Path("/proc/self/status").exists():  # the process's seccomp state beside each step
        assert all("Seccomp:" in r["speculation"] for r in rows)


def test_the_read_probe_says_in_one_line_that_it_needs_a_gpu(tmp_path: Path) -> None:
    """scripts/probe_read.py maps another process's memory through CUDA IPC: on a machine
    without CUDA it stops with one line and exit code 2, before writing anything."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("the probe runs here: a GPU machine times it")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "probe_read.py"), "--bytes",
                           "4096", "--out", str(tmp_path / "read")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "needs a CUDA device" in proc.stderr and not (tmp_path / "read").exists()


def test_the_prelude_probe_says_in_one_line_that_it_needs_a_gpu(tmp_path: Path) -> None:
    """scripts/probe_prelude.py times CUDA copies, views and events: on a machine without CUDA
    it stops with one line and exit code 2, before writing anything."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("the probe runs here: a GPU machine times it")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "probe_prelude.py"),
                           "--elements", "4096", "--out", str(tmp_path / "prelude")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "needs a CUDA device" in proc.stderr and not (tmp_path / "prelude").exists()


def test_the_attention_probe_checks_the_design_and_its_warp_specialised_loop(
        tmp_path: Path, run_script: Callable[..., None]) -> None:
    """scripts/probe_attention.py: the default design and the same design with its unmasked
    key loop warp-specialised (a source edit) both run and match the task's model; eager is
    timed first (PyTorch's backends one by one only on a GPU)."""
    run_script("probe_attention.py", str(TASK), "--small", "--variants", "2", "--out",
               str(tmp_path))
    with (tmp_path / "attention.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["variant"] for r in rows] == [
        "eager", "TMA=0 BLOCK_N=64 WARPS=8 STAGES=3 WS=0", "TMA=0 BLOCK_N=64 WARPS=8 STAGES=3 WS=1"]
    assert all(not r["note"] and float(r["max_abs_err"]) < 0.05 for r in rows[1:]), rows
    edited = (tmp_path / "candidates" / "37_sdpa__1.py").read_text()
    assert edited.count("warp_specialize=True") == 1
