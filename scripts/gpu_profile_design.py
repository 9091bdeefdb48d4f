#!/usr/bin/env python
"""Run one task's ranked design in-process a few times, for a profiler to watch.

Usage (on the GPU machine, from the repository root)::

    ncu --clock-control none --section SpeedOfLight -k regex:kernel -s 2 -c 1 \\
        python scripts/gpu_profile_design.py benchmarks/level1/21_cumsum_masked_time.py

Plans the task at full size, renders design ``--design`` (0: the first ranked) with the skills'
default parameters, or ``--params NAME=V,...`` overriding the first group's, and runs it
``--runs`` times on the task's inputs after one check against the reference. A development
instrument like ``gpu_schedule_sweep.py``: the harness still verifies and times results.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

from gpu_schedule_sweep import Reference, load_solution  # noqa: E402


def main() -> int:
    import torch

    from kernelwright.design.choices import Design
    from kernelwright.design.plan import plan_task
    from kernelwright.task import load_task

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("task", type=Path)
    p.add_argument("--design", type=int, default=0)
    p.add_argument("--params", default="", help="NAME=V,... for the first group's choice")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()

    plan = plan_task(load_task(args.task, "full"), "cuda", "full", isolate=False)
    design = plan.designs[args.design]
    if args.params:
        first, *rest = design.choices
        extra = {k: int(v) for k, v in (kv.split("=") for kv in args.params.split(","))}
        design = Design((first.with_params({**first.params, **extra}), *rest), stage="tuning")
    print("design:", [(c.skill, c.params) for c in design.choices], flush=True)
    path = Path(tempfile.mkdtemp()) / "solution.py"
    path.write_text(plan.render(design))
    ref = Reference(args.task, "cuda", "full")
    model = ref.build(load_solution(path))
    with torch.no_grad():
        ok, err, why = ref.check(model(*ref.inputs))
        print(f"correct: {ok} (max error {err:.3g}) {why}", flush=True)
        for _ in range(args.runs):
            model(*ref.inputs)
        torch.cuda.synchronize()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
