"""What the guard adds to an evaluation's time, measured per candidate in one judge session.

    PYTHONPATH=src python scripts/gpu_guard_overhead.py [--task T --solution S --repeats 3]

Alternates guard-on and guard-off evaluations of the same candidate against one judge (so the
reference's cost, identical in both, is left out) and prints the median time of each and the
difference as a fraction. Run it on the GPU for the number BENCHMARKS.md quotes; on the CPU it
measures the interpreter, not the guard.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from dataclasses import replace
from pathlib import Path

from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.harness import EvalSession
from kernelwright.records import Candidate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="examples/softmax/task.py")
    parser.add_argument("--solution", default="examples/softmax/solution.py")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    candidate = Candidate(Path(args.solution).read_text())
    base = EvalOptions(device=args.device, baselines=False)
    times: dict[bool, list[float]] = {True: [], False: []}
    with EvalSession(args.task, base) as session:
        session.evaluate(candidate)  # start the judge, warm the Triton cache
        for _ in range(args.repeats):
            for guard in (True, False):
                session.options = replace(base, guard=guard)
                start = time.monotonic()
                verdict = session.evaluate(candidate)
                times[guard].append(time.monotonic() - start)
                assert verdict.correct, verdict.message
    on, off = statistics.median(times[True]), statistics.median(times[False])
    result = {
        "task": args.task,
        "on_s": times[True],
        "off_s": times[False],
        "median_on_s": on,
        "median_off_s": off,
        "overhead": (on - off) / off,
    }
    print(json.dumps(result))
    if os.environ.get("OUT"):
        (Path(os.environ["OUT"]) / "guard_overhead.json").write_text(json.dumps(result))
    print(f"guard on {on:.2f} s, off {off:.2f} s per candidate: +{(on - off) / off:.1%}")


if __name__ == "__main__":
    main()
