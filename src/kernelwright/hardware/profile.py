"""Profiling a solution's kernels with Nsight Compute, bounded in time and kernels.

    profile_solution(task, source, out_csv) -> (launches profiled, Findings)

A driver script builds the task's inputs and the solution's ``ModelNew``, runs a warm-up call
(compilation, autotuning) and then a few calls inside an NVTX range, and Nsight Compute records
the counters :mod:`kernelwright.hardware.diagnose` reads for at most ``kernels`` launches inside
that range, within ``timeout_s``:

    ncu --csv --page raw --print-units base --clock-control none --metrics METRICS
        --nvtx --nvtx-include kernelwright/ --launch-count N python driver.py

The solution runs in an ordinary process, not in the harness's confinement (Nsight Compute
injects itself into the process it profiles): profile only code you trust, your own or
kernelwright's templates; ``optimize --profile-best`` profiles template candidates only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from kernelwright.errors import ConfigError
from kernelwright.hardware.diagnose import METRICS, ExportError, Findings, diagnose, parse_raw_csv
from kernelwright.records import Task

NCU_ENV = "KERNELWRIGHT_NCU"  # the ncu to run (default: ncu on PATH, then CUDA's own)
CALLS = 3

# The files run as named modules: Triton's compiler reads the module name of every global a
# kernel calls (a @triton.jit helper such as _tanh), and a function run without one has None.
DRIVER = '''\
import runpy
import sys

import torch

sys.path[:0] = [{task_dir!r}]
task = runpy.run_path({task_file!r}, run_name="kernelwright_task")
solution = runpy.run_path({solution_file!r}, run_name="kernelwright_solution")
torch.manual_seed(0)
model = solution["ModelNew"](*task["get_init_inputs"]()).cuda().eval()
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task["get_inputs"]()]
with torch.no_grad():
    model(*inputs)  # warm-up: compiles and autotunes, outside the profiled range
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("kernelwright")
    for _ in range({calls}):
        model(*inputs)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
'''


def find_ncu() -> str:
    """The Nsight Compute command line to run.

    Raises:
        ConfigError: none found.
    """
    named = os.environ.get(NCU_ENV)
    if named:
        return named
    found = shutil.which("ncu") or next(
        (str(p) for p in sorted(Path("/usr/local/cuda/bin").glob("ncu"))), None)
    if found is None:
        raise ConfigError(f"Nsight Compute (ncu) not found: install it, put it on PATH or set "
                          f"{NCU_ENV}")
    return found


def profile_solution(
    task: Task, source: str, out_csv: Path, *, kernels: int = 8, timeout_s: float = 300.0,
) -> tuple[int, Findings]:
    """Profile ``source`` (a ModelNew file) on ``task`` at the task's size; the raw export is
    written to ``out_csv``, and the launches profiled and their diagnoses returned.

    Raises:
        ConfigError: no ncu, the run failed or timed out, or its output holds no profile.
    """
    ncu = find_ncu()
    with tempfile.TemporaryDirectory(prefix="kernelwright-profile-") as tmp:
        folder = Path(tmp)
        (folder / "solution.py").write_text(source)
        from kernelwright.task.module import task_source

        (folder / "task.py").write_text(task_source(task.path, task.size))
        (folder / "driver.py").write_text(textwrap.dedent(DRIVER.format(
            task_dir=str(Path(task.path).resolve().parent), task_file=str(folder / "task.py"),
            solution_file=str(folder / "solution.py"), calls=CALLS)))
        command = [ncu, "--csv", "--page", "raw", "--print-units", "base", "--clock-control",
                   "none", "--metrics", ",".join(METRICS), "--nvtx", "--nvtx-include",
                   "kernelwright/", "--launch-count", str(kernels), sys.executable,
                   str(folder / "driver.py")]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                                  cwd=folder, check=False)
        except subprocess.TimeoutExpired:
            raise ConfigError(f"profiling took more than {timeout_s:g} s") from None
        except OSError as exc:
            raise ConfigError(f"cannot run {ncu}: {exc.strerror or exc}") from None
    text = done.stdout
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    out_csv.write_text(text)
    try:
        profiles = parse_raw_csv(text)
    except ExportError:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ConfigError(f"ncu gave no profile (exit {done.returncode}): "
                          + " | ".join(tail)[:400]) from None
    return len(profiles), diagnose(profiles)
