#!/usr/bin/env python
"""Compare an emitted ModelNew with the task's Model in one process, over several input seeds.

A diagnostic for a candidate the harness called incorrect: prints, per seed, the largest
difference of each output and where it is, and whether the two models' buffers match.

    PYTHONPATH=src python scripts/gpu_diff_candidate.py TASK.py [--seeds 6] [--design 0]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def main() -> None:
    import torch

    from kernelwright.design.plan import plan_task
    from kernelwright.task import load_task
    from kernelwright.task.module import import_task_module

    p = argparse.ArgumentParser()
    p.add_argument("task")
    p.add_argument("--seeds", type=int, default=6)
    p.add_argument("--device", default="cuda")
    p.add_argument("--size", default="full")
    p.add_argument("--design", type=int, default=0, help="rank of the design to emit")
    a = p.parse_args()
    plan = plan_task(load_task(a.task, a.size), a.device, a.size, isolate=False)
    design = plan.designs[a.design]
    print(Path(a.task).stem, design.structure_key())
    source = plan.render(design)
    out = Path(tempfile.mkdtemp()) / "candidate.py"  # Triton reads kernels from a file
    out.write_text(source)
    spec = importlib.util.spec_from_file_location("candidate", out)
    assert spec is not None and spec.loader is not None
    cand = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cand)
    task = import_task_module(a.task, a.size)
    init = task.get_init_inputs() if hasattr(task, "get_init_inputs") else []
    torch.manual_seed(0)
    ref = task.Model(*init).to(a.device).eval()
    torch.manual_seed(0)
    new = cand.ModelNew(*init).to(a.device).eval()
    for (name, b), (_, c) in zip(ref.named_buffers(), new.named_buffers(), strict=False):
        print(f"buffer {name}: max diff {(b - c).abs().max().item():.3g}")
    for seed in range(a.seeds):
        torch.manual_seed(seed)
        xs = [x.to(a.device) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
        with torch.no_grad():
            want = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in xs])
            got = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in xs])
            torch.cuda.synchronize() if a.device == "cuda" else None
        want = want if isinstance(want, tuple | list) else (want,)
        got = got if isinstance(got, tuple | list) else (got,)
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            d = (g.float() - w.float()).abs()
            bad = (d > 1e-4 + 1e-4 * w.float().abs()).sum().item()
            at = divmod(int(d.argmax()), w.shape[-1]) if w.dim() > 1 else int(d.argmax())
            worst = d.max().item()
            print(f"seed {seed} output {i}: max diff {worst:.3g} at {at}, {bad} beyond tol")
            if bad and w.dim() == 2:
                r, c = at
                print("   got", g[r, c].item(), "want", w[r, c].item())
                if len(xs) == 3:
                    print("   position", xs[0][r].item())
        # the same candidate again: does it agree with itself?
        with torch.no_grad():
            again = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in xs])
        again = again if isinstance(again, tuple | list) else (again,)
        same = all(torch.equal(x, y) for x, y in zip(got, again, strict=True))
        print(f"seed {seed}: rerun identical: {same}")


if __name__ == "__main__":
    main()
