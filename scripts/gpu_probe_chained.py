#!/usr/bin/env python
"""Where does the chained scan's time go? Time variants that leave one stage out.

Usage (on the GPU machine, from the repository root)::

    PYTHONPATH=src python scripts/gpu_probe_chained.py [TASK] [--configs 32x256x4,16x256x2]

Renders the task's chained-scan design (the masked cumsum by default) at each configuration
(BLOCK_S x COLS x WARPS), then edits the kernel's text into variants, each timed with
``do_bench`` (L2 cleared, median):

* ``full``: as emitted (checked against the reference);
* ``no-lookback``: publishes its total and prefix but never reads a predecessor's (wrong sums);
* ``no-sync``: neither publishes nor looks back (a tiled load-scan-store: this tile's ceiling);
* ``program-id``: as emitted but ordered by program id, not a ticket (no atomic before the
  loads; the hardware does not promise that order, so never a result);
* ``no-sync+program-id``: both.

Against them: ``x.clone()`` (a copy of the input's bytes) and the eager model. The differences
say what the look-back, the publishing and the ticket cost. A development instrument only.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

from gpu_schedule_sweep import Reference, bench, load_solution  # noqa: E402

TICKET = "ticket = tl.atomic_add(flags_ptr + n_chains * n_chunks, 1)"
PUBLISH_START = "    slot = pid * n_chunks + chunk\n"
PUBLISH_END = '    tl.atomic_xchg(flags_ptr + slot, 2, sem="release")\n'


def variants(source: str) -> dict[str, str]:
    assert TICKET in source and PUBLISH_START in source and PUBLISH_END in source
    head, rest = source.split(PUBLISH_START, 1)
    _, tail = rest.split(PUBLISH_END, 1)
    no_sync = head + "    prefix = tl.full([1, BLOCK_P], 0.0, tl.float32)\n" + tail
    pid = "ticket = tl.program_id(0)"
    return {
        "full": source,
        "no-lookback": source.replace("    while back >= 0:", "    while back >= 1 << 30:"),
        "no-sync": no_sync,
        "program-id": source.replace(TICKET, pid),
        "no-sync+program-id": no_sync.replace(TICKET, pid),
    }


def main() -> int:
    import torch

    from kernelwright.design.choices import Design
    from kernelwright.design.plan import plan_task
    from kernelwright.task import load_task

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "task", type=Path, nargs="?", default=ROOT / "benchmarks/level1/21_cumsum_masked_time.py"
    )
    p.add_argument("--configs", default="32x256x4,16x256x2,32x256x2,64x256x8,16x512x4,64x128x4")
    args = p.parse_args()

    plan = plan_task(load_task(args.task, "full"), "cuda", "full", isolate=False)
    base = next(d for d in plan.designs if "scan-chained" in d.structure_key())
    ref = Reference(args.task, "cuda", "full")
    x = next(t for t in ref.inputs if isinstance(t, torch.Tensor) and t.is_floating_point())
    floor = ref.bytes_moved() / 4238e9 * 1e3
    with torch.no_grad():
        rows = [("x.clone()", "-", bench(lambda: x.clone(), "cuda")[0], "")]
        rows.append(("eager", "-", bench(lambda: ref.model(*ref.inputs), "cuda")[0], ""))
    tmp = Path(tempfile.mkdtemp())
    for spec in args.configs.split(","):
        s, c, w = (int(v) for v in spec.split("x"))
        (first,) = base.choices
        design = Design((first.with_params({"BLOCK_S": s, "COLS": c, "WARPS": w}),), "tuning")
        for name, src in variants(plan.render(design)).items():
            f = tmp / f"{spec}_{name.replace('+', '_')}.py"
            f.write_text(src)
            model = ref.build(load_solution(f))
            with torch.no_grad():
                ok, err, _ = ref.check(model(*ref.inputs))
                ms = bench(lambda m=model: m(*ref.inputs), "cuda")[0]
            rows.append((spec, name, ms, "correct" if ok else f"wrong ({err:.2g})"))
            print(f"{spec:>10} {name:>20} {ms:8.4f} ms {rows[-1][3]}", flush=True)
    print(f"\nfloor (bytes at 4238 GB/s): {floor:.4f} ms")
    print(f"{'config':>10} {'variant':>20} {'ms':>8} {'of floor':>8}  check")
    for spec, name, ms, check in rows:
        print(f"{spec:>10} {name:>20} {ms:8.4f} {floor / ms:8.0%}  {check}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
