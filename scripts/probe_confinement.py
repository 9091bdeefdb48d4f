"""What a judged process's confinement costs its host: a task's model and its first ranked design,
called in one process before and after each step a candidate's process takes before the import.

    python scripts/probe_confinement.py benchmarks/level2/07_conv2d_group_norm_silu.py \\
        --precision bf16 --out runs/confinement
    TRITON_INTERPRET=1 python scripts/probe_confinement.py TASK --small --out DIR   # a CPU check

A development instrument, like ``profile_design.py``. The steps, in the candidate process's order:
the launch monitor (Triton's launch paths patched), the audit hook, ``containment.enter`` (rlimits,
seccomp, Landlock) and ``containment.seal`` (process creation refused). The last two cannot be
undone, which is why this is a script of its own and each run one process; then a checked call of
each contender (the profiler and the harness's dispatch mode around it, as the process's checked
calls before its timed ones). After each step every contender's call is timed again: on a GPU
the host's time to issue it (calls back to back, the least of three rounds) and batches made as
the harness's are, without and with the held-back regions revealed before each call (host issuing
a call, and the host's time inside the forward), and the revealed batches again after the process
slept before each (as a judged process waits while the judge checks the previous batch); on a CPU
the wall time of a call. A step that moves these is a cost the judged process pays and a process
of one's own does not. Writes ``OUT/confinement.csv`` row by row, with the process's speculation
controls (``/proc/self/status``) after each step.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from bench_gemm import _host_time, _time, pick_device  # noqa: E402
from profile_design import batched, task_contenders  # noqa: E402

FIELDS = ["task", "step", "contender", "host_ms", "batch_issue_ms", "batch_forward_ms",
          "reveal_issue_ms", "reveal_forward_ms", "idle_issue_ms", "idle_forward_ms", "call_ms",
          "speculation"]
# How long a judged process sleeps before a batch, about: the judge's checks of the previous
# batch (float64 references of the calls it read back) take tens to hundreds of milliseconds
IDLE_S = 0.2


def speculation() -> str:
    """The process's seccomp mode and speculation controls, as its status file states them."""
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:
        return ""
    keep = ("Seccomp", "Speculation")
    return "; ".join(" ".join(ln.split()) for ln in lines if ln.startswith(keep))


def steps(models: dict[str, Any], inputs: list[Any]) -> list[tuple[str, Any]]:
    """(name, apply) of each confinement step, in the candidate process's order, then a
    checked call of every contender (the profiler and the dispatch mode around it)."""
    from kernelwright.evaluate import containment
    from kernelwright.evaluate.guard.monitor import LaunchMonitor
    from kernelwright.evaluate.guard.sandbox import install_audit_hook

    state: dict[str, Any] = {}

    def monitor() -> None:
        state["monitor"] = LaunchMonitor()
        state["monitor"].install()

    def enter() -> None:
        sandbox = containment.Sandbox(scratch=tempfile.mkdtemp(),
                                      read_roots=containment.default_read_roots())
        state["report"] = containment.enter(sandbox)

    def checked() -> None:
        # as the process's checked calls run: whatever the profiler or the mode leave behind
        # is then paid by every timed call after them
        from collections import Counter

        import torch

        from kernelwright.evaluate.guard.observer import ForwardObserver

        for fn in models.values():
            observer = ForwardObserver(Counter())
            state["monitor"].watcher = observer
            try:
                with torch.no_grad(), observer.profiled(), observer.numpy_guard(), observer:
                    fn(*inputs)
            finally:
                state["monitor"].watcher = None

    return [
        ("plain", lambda: None),
        ("launch monitor", monitor),
        ("audit hook", lambda: install_audit_hook(())),
        ("containment.enter", enter),
        ("containment.seal", lambda: containment.seal(state["report"])),
        ("checked calls", checked),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("task", type=Path)
    ap.add_argument("--precision", choices=["fp32", "tf32", "bf16"], default="fp32")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--small", action="store_true", help="the task's small size (CPU runs)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT / "src"))
    device = pick_device()
    if device is None:
        return 2
    import torch

    args.out.mkdir(parents=True, exist_ok=True)
    model, inputs, designs = task_contenders(args.task, args.precision, args.small, device, 1,
                                             args.out)
    models = {"eager": model, **designs}
    with (args.out / "confinement.csv").open("w", newline="") as fh, torch.no_grad():
        writer = csv.DictWriter(fh, FIELDS)
        writer.writeheader()
        for _ in range(2):  # compiled, warmed
            for fn in models.values():
                fn(*inputs)
        for step, apply in steps(models, inputs):
            apply()
            status = speculation()
            for name, fn in models.items():
                def call(fn: Any = fn) -> Any:
                    return fn(*inputs)

                row = {"task": args.task.stem, "step": step, "contender": name,
                       "speculation": status}
                if device == "cuda":
                    row["host_ms"] = f"{_host_time.__wrapped__(call):.4f}"
                    for label, reveal, idle in (("batch", False, 0.0), ("reveal", True, 0.0),
                                                ("idle", True, IDLE_S)):
                        issue, _, _, forward = batched(fn, inputs, reveal=reveal, idle_s=idle)
                        row[f"{label}_issue_ms"] = f"{issue:.4f}"
                        row[f"{label}_forward_ms"] = f"{forward:.4f}"
                else:
                    row["call_ms"] = f"{_time(call, device):.4f}"
                writer.writerow(row)
                fh.flush()
                shown = row.get("host_ms") or row.get("call_ms")
                batches = (f", batch issue {row['batch_issue_ms']} (forward "
                           f"{row['batch_forward_ms']}), with held-back regions revealed "
                           f"{row['reveal_issue_ms']} ({row['reveal_forward_ms']}), after "
                           f"{IDLE_S:g} s idle {row['idle_issue_ms']} ({row['idle_forward_ms']})"
                           if "batch_issue_ms" in row else "")
                print(f"{step:18s} {name:40s} {shown} ms{batches}", flush=True)
            print(f"{'':18s} {status}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
