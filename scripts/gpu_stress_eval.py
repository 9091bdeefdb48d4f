#!/usr/bin/env python
"""Evaluate one candidate through the real harness many times, to catch an intermittent verdict.

Usage (on the GPU machine, from the repository root)::

    KERNELWRIGHT_PRESTART=2 PYTHONPATH=src python scripts/gpu_stress_eval.py \\
        benchmarks/serving/02_rotary_embedding.py best.py --rounds 20 --per-round 2

Each round opens a fresh :class:`EvalSession` (a new judge, a fresh base seed, pre-started
candidate processes as ``kernelwright optimize`` runs them) and evaluates the candidate
``--per-round`` times with timing and baselines on, as a search does. Every verdict is printed
as one line and appended to ``$OUT/stress.jsonl``; a table of counts comes last. Stops at
``--deadline`` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("task", type=Path)
    p.add_argument("solution", type=Path)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--per-round", type=int, default=2)
    p.add_argument("--trials", type=int, default=2)
    p.add_argument("--deadline", type=float, default=500.0)
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--size", default="full", choices=("full", "small"))
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    a = p.parse_args()

    from kernelwright.evaluate import EvalOptions
    from kernelwright.evaluate.harness import EvalSession
    from kernelwright.records import Candidate

    a.out.mkdir(parents=True, exist_ok=True)
    log = a.out / "stress.jsonl"
    source = a.solution.read_text()
    started = time.monotonic()
    counts: Counter[str] = Counter()
    for r in range(a.rounds):
        if time.monotonic() - started > a.deadline:
            print(f"deadline: stopped after {r} rounds")
            break
        opts = EvalOptions(device=a.device, trials=a.trials, size=a.size)
        with EvalSession(a.task, opts) as session:
            for k in range(a.per_round):
                v = session.evaluate(Candidate(source, origin="stress"))
                counts[v.status.value] += 1
                line = {
                    "round": r,
                    "eval": k,
                    "seed": v.seed,
                    "status": v.status.value,
                    "message": v.message,
                    "max_abs_err": v.max_abs_err,
                    "ms": v.timing.candidate.median_ms if v.timing.candidate else None,
                }
                with log.open("a") as fh:
                    fh.write(json.dumps(line) + "\n")
                print(
                    f"round {r} eval {k} seed {v.seed}: {v.status.value} "
                    f"{line['ms'] and round(line['ms'], 4)} ms {v.message[:160]}",
                    flush=True,
                )
    print("\n| status | verdicts |\n|---|---:|")
    for status, n in sorted(counts.items()):
        print(f"| {status} | {n} |")


if __name__ == "__main__":
    main()
