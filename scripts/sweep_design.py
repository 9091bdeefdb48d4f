"""Sweep a design's parameters on one GPU: every combination of the values given, checked and timed.

    python scripts/sweep_design.py kernelbench/level1/94_MSELoss.py \\
        --grid LOOP_BLOCK=2048,4096,8192 --grid LOOP_WARPS=4,8,16 \\
        --grid SPLIT_PROGRAMS=264,528,1056 --out runs/sweep-mse
    TRITON_INTERPRET=1 python scripts/sweep_design.py TASK --small --grid ... --out DIR

A development instrument, like ``bench_gemm.py``, not a verdict: kernelwright's own generated
kernels (trusted code) are imported in this process and timed with ``triton.testing.do_bench``
(CUDA events, L2 flushed before each run, the median), so dozens of variants fit in a minute; the
harness still verifies and times whatever ``kernelwright optimize`` returns. The defaults in each
family's ``defaults.py`` are chosen from such sweeps (``design/families/SWEEPS.md``).

For each task: plan it at the size (``plan_task``); take the first ranked design holding every
``--skill`` (default: the top design); for every combination of the ``--grid`` values set each
parameter on every group choice that has it (``g1.WARPS=4,8`` names group 1 only), skipping
combinations that break the skill's constraints; render, import, run once and compare with the
task's ``Model`` (``torch.allclose`` at the task's tolerance, else the policy's), then time.
``--precision`` runs model, inputs and plan under that policy, as the harness does. Eager
PyTorch and ``torch.compile`` are timed once per task. Writes ``OUT/sweep.csv`` row by row (a
crash keeps what was measured) and prints each task's default and best.

``--lift-conditions`` plans the ``--skill`` skills as if their validity conditions held: an
experiment on a condition itself (does the skill lose where its condition says it does not
apply?). Its rows say so in their note, and each variant is still checked against the model.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gemm import _time, csv_rows, load_module, pick_device  # noqa: E402

FIELDS = ["task", "variant", "skills", "params", "ms", "ok", "note", "precision", "commit"]


def parse_grid(items: list[str]) -> list[tuple[int | None, str, list[int]]]:
    """``[g<i>.]NAME=v1,v2`` items as (group or None, name, values)."""
    axes: list[tuple[int | None, str, list[int]]] = []
    for item in items:
        key, _, values = item.partition("=")
        group, _, name = key.rpartition(".")
        if not values or not name:
            raise SystemExit(f"--grid {item!r}: expected [g<i>.]NAME=v1,v2,...")
        gid = int(group[1:]) if group else None
        axes.append((gid, name, [int(v) for v in values.split(",")]))
    return axes


def variants(plan: Any, skills: list[str], axes: list[Any]) -> list[tuple[str, Any]]:
    """(label, Design): the chosen design as planned, then each valid grid combination."""
    from kernelwright.design.choices import Design

    base = next((d for d in plan.designs if all(s in d.skills for s in skills)), None)
    if base is None:
        raise RuntimeError(f"no design holds {skills}: {[d.skills for d in plan.designs]}")
    for gid, name, _ in axes:
        if not any(name in c.params and gid in (None, c.group) for c in base.choices):
            raise RuntimeError(f"--grid {name}: no group of {base.skills} has that parameter")
    names = plan.constraint_names()
    found = [("default", base)]
    for combo in itertools.product(*(values for _, _, values in axes)):
        choices = []
        for c in base.choices:
            params = dict(c.params)
            for (gid, name, _), value in zip(axes, combo, strict=True):
                if (gid is None or gid == c.group) and name in params:
                    params[name] = value
            choices.append(c.with_params(params))
        skill_ok = all(
            plan.library.get(c.skill).satisfies({**names[c.group], **c.params}) for c in choices
        )
        if skill_ok:
            label = " ".join(
                f"{'' if g is None else f'g{g}.'}{n}={v}"
                for (g, n, _), v in zip(axes, combo, strict=True)
            )
            found.append((label, Design(tuple(choices), "tuning")))
    return found


def lifted_library(skills: list[str]) -> Any:
    """The built-in skills, those named without their validity conditions."""
    import dataclasses

    from kernelwright.skills.library import SkillLibrary

    library = SkillLibrary.builtin()
    for name in skills:
        library.get(name)  # an unknown id stops here, naming the known ones
    return SkillLibrary(dataclasses.replace(s, conditions=()) if s.id in skills else s
                        for s in library)


def sweep_task(path: Path, args: argparse.Namespace, device: str, write: Any) -> None:
    import torch

    from kernelwright.design.plan import plan_task
    from kernelwright.evaluate.precision import apply_policy, cast_value, prepare_model
    from kernelwright.records import Precision
    from kernelwright.task import load_task, task_options
    from kernelwright.task.module import import_task_module

    size = "small" if args.small else "full"
    policy = Precision(args.precision)
    apply_policy(policy)
    task = load_task(path, size=size)
    module = import_task_module(path, size)
    opts = task_options(task)
    init = list(module.get_init_inputs()) if hasattr(module, "get_init_inputs") else []
    if args.small and not opts.get("small"):  # the file's own size: a CPU run at all?
        from kernelwright.evaluate.memory import refuse_unsized_on_cpu
        from kernelwright.task.meta_size import meta_call_bytes

        refuse_unsized_on_cpu(meta_call_bytes(module.get_inputs, module.Model, init))
    plan = plan_task(task, device, size, isolate=False, precision=args.precision,
                     library=lifted_library(args.skill) if args.lift_conditions else None)
    found = variants(plan, args.skill, parse_grid(args.grid))
    tol = policy.default_tolerance
    atol, rtol = float(opts.get("atol", tol.atol)), float(opts.get("rtol", tol.rtol))
    torch.manual_seed(0)
    with torch.device(device):  # drawn on the device: gigabytes of inputs in a moment
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
        inputs = list(cast_value(inputs, policy))
        torch.manual_seed(1)
        model = prepare_model(module.Model(*init), device, policy)
    with torch.no_grad():
        want = model(*inputs)
    row = {"task": path.stem, "precision": args.precision, "commit": args.commit}
    lifted = "conditions lifted" if args.lift_conditions else ""

    def run(variant: str, skills: str, params: str, fn: Any, check: bool) -> None:
        out = {**row, "variant": variant, "skills": skills, "params": params, "ok": "",
               "note": lifted if check else ""}
        try:
            with torch.no_grad():
                if check:
                    got = fn()
                    out["ok"] = bool(torch.allclose(got, want, atol=atol, rtol=rtol))
                    del got
                out["ms"] = f"{_time(fn, device):.4f}"
        except Exception as exc:  # a variant that fails is a row, not the end of the sweep
            out["note"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        write(out)

    with torch.no_grad():
        run("eager", "", "", lambda: model(*inputs), False)
        if args.compile and device == "cuda":
            compiled = torch.compile(model)
            run("torch.compile", "", "", lambda: compiled(*inputs), False)
            del compiled
    folder = args.out / "candidates"
    folder.mkdir(parents=True, exist_ok=True)
    for n, (label, design) in enumerate(found):
        if time.monotonic() > args.deadline:
            write({**row, "variant": label, "note": "skipped: --budget-s spent"})
            continue
        params = "; ".join(
            f"g{c.group}:" + ",".join(f"{k}={v}" for k, v in sorted(c.params.items()))
            for c in design.choices
        )
        file = folder / f"{path.stem}__{n}.py"
        try:
            file.write_text(plan.render(design))
            torch.manual_seed(1)
            with torch.device(device):
                new = prepare_model(load_module(file).ModelNew(*init), device, policy)
        except Exception as exc:
            write({**row, "variant": label, "params": params, "note": f"render: {exc}"[:200]})
            continue
        run(label, "+".join(design.skills), params, lambda new=new: new(*inputs), True)
        del new
        if device == "cuda":
            torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+", type=Path)
    ap.add_argument("--grid", action="append", default=[], help="[g<i>.]NAME=v1,v2,...")
    ap.add_argument("--skill", action="append", default=[], help="the design holds this skill")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--small", action="store_true", help="the tasks' small sizes (CPU runs)")
    ap.add_argument("--no-compile", dest="compile", action="store_false")
    ap.add_argument(
        "--precision",
        choices=["fp32", "tf32", "bf16"],
        default="fp32",
        help="the policy: model, inputs and plan as the harness runs them",
    )
    ap.add_argument("--lift-conditions", action="store_true",
                    help="plan the --skill skills as if their validity conditions held")
    ap.add_argument("--budget-s", type=float, default=480.0)
    ap.add_argument("--commit", default=os.environ.get("KW_COMMIT", ""), help="for the rows")
    args = ap.parse_args(argv)
    if args.lift_conditions and not args.skill:
        ap.error("--lift-conditions needs the --skill whose conditions it lifts")
    args.deadline = time.monotonic() + args.budget_s
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT / "src"))

    device = pick_device()
    if device is None:
        return 2
    rows: list[dict[str, Any]] = []
    with csv_rows(args.out / "sweep.csv", FIELDS,
                  lambda row: " | ".join(str(row.get(k, "")) for k in FIELDS[:7])) as to_csv:

        def write(row: dict[str, Any]) -> None:
            rows.append(row)
            to_csv(row)

        for path in args.tasks:
            try:
                sweep_task(path, args, device, write)
            except Exception as exc:  # one task's failure leaves the others to run
                print(f"{path}: {type(exc).__name__}: {exc}", file=sys.stderr)
                write({"task": path.stem, "variant": "plan", "note": f"{exc}"[:200]})
    for path in args.tasks:
        mine = [r for r in rows if r["task"] == path.stem and r.get("ms")]
        ok = [r for r in mine if r.get("ok") is True]
        base = {r["variant"]: r["ms"] for r in mine}
        best = min(ok, key=lambda r: float(r["ms"]), default=None)
        print(
            f"{path.stem}: eager {base.get('eager', '-')}, compile "
            f"{base.get('torch.compile', '-')}, default {base.get('default', '-')}, best "
            f"{best['ms'] + ' (' + best['variant'] + ')' if best else '-'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
