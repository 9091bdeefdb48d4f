"""``kernelwright check-task``: is a task worth benchmarking at all?

A benchmark built on degenerate tasks rewards kernels that do nothing. A task is flagged when
its reference outputs:

    do not depend on the inputs          two input draws give the same output
    do not depend on the weights         two weight seeds give the same output (if it has any)
    are near zero                        max |output| below 1e-6
    are matched by an all-zeros answer   zeros pass the policy tolerance
    are matched by a constant answer     each output's mean, broadcast, passes the tolerance
    are not finite                       NaN or Inf in the reference
    copy an input                        an output equals one of the inputs

The reference runs in a child process (the task's code never runs in kernelwright's own).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from kernelwright.errors import EvalError, TaskError
from kernelwright.evaluate.child import read_request, run_child, write_result
from kernelwright.records import Precision, Task


@dataclass(frozen=True, slots=True)
class TaskFinding:
    """One problem with a task."""

    check: str
    message: str


@dataclass(frozen=True, slots=True)
class TaskQuality:
    """The findings for one task (empty: the task is fine)."""

    task: str
    size: str
    findings: tuple[TaskFinding, ...]
    output_shapes: tuple[tuple[int, ...], ...]

    @property
    def ok(self) -> bool:
        """No finding."""
        return not self.findings


def check_task(
    task: Task, precision: Precision = Precision.FP32, timeout_s: float = 300
) -> TaskQuality:
    """Run the degeneracy checks on ``task`` (at ``task.size``) in a child process."""
    request = {"path": task.path, "size": task.size, "precision": precision.value}
    result = run_child("kernelwright.task.quality", request, timeout_s)
    data = result.result
    if data is None:
        raise EvalError(
            f"{task.path}: checking the task {'timed out' if result.timed_out else 'crashed'} "
            f"(exit {result.returncode}): {result.stderr_tail[-500:]}"
        )
    if data.get("error"):
        raise TaskError(f"{task.path}: {data['error']}")
    return TaskQuality(
        task=task.name,
        size=task.size,
        findings=tuple(TaskFinding(f["check"], f["message"]) for f in data["findings"]),
        output_shapes=tuple(tuple(s) for s in data["shapes"]),
    )


def _findings(module: Any, precision: Precision) -> tuple[list[dict[str, str]], list[list[int]]]:
    import torch

    from kernelwright.evaluate.correctness import compare_outputs
    from kernelwright.evaluate.precision import apply_policy, cast_value
    from kernelwright.evaluate.runs import as_output_list, build_model

    apply_policy(precision)
    tol = precision.default_tolerance
    init = list(getattr(module, "get_init_inputs", list)())

    def inputs(seed: int) -> list[Any]:
        torch.manual_seed(seed)
        return list(cast_value(list(module.get_inputs()), precision))

    def run(model_seed: int, x: list[Any]) -> list[Any]:
        model = build_model(module.Model, init, model_seed, "cpu", precision)
        with torch.no_grad():
            return [o.detach().clone() for o in as_output_list(model(*x), strict=False)]

    x1, x2 = inputs(1), inputs(2)
    out1 = run(0, [v.clone() if isinstance(v, torch.Tensor) else v for v in x1])
    found: list[dict[str, str]] = []

    def add(check: str, message: str) -> None:
        found.append({"check": check, "message": message})

    floating = [o for o in out1 if o.is_floating_point()]
    if any(not bool(torch.isfinite(o).all()) for o in floating):
        add("non-finite", "the reference output contains NaN or Inf")
    out2 = run(0, x2)
    if all(_same(a, b) for a, b in zip(out1, out2, strict=True)):
        add("input-independent", "two different input draws give the same output")
    model = build_model(module.Model, init, 0, "cpu", precision)
    if any(True for _ in model.parameters()):
        out3 = run(12345, x1)
        if all(_same(a, b) for a, b in zip(out1, out3, strict=True)):
            add("weight-independent", "two weight seeds give the same output")
    if floating and max(float(o.abs().max()) for o in floating if o.numel()) < 1e-6:
        add("near-zero", "every output is below 1e-6 in magnitude")
    if floating and compare_outputs(out1, [torch.zeros_like(o) for o in out1], tol)["ok"]:
        add("zeros-pass", f"an all-zeros output passes the {precision.value} tolerance")
    constant = [
        torch.full_like(o, float(o.double().mean()))
        if o.is_floating_point()
        else o.flatten()[0].expand_as(o).clone()
        for o in out1
    ]
    # A one-element output (a loss) always equals its own mean: the test says nothing there.
    if any(o.numel() > 1 for o in out1) and compare_outputs(out1, constant, tol)["ok"]:
        add("constant-pass", "a constant output (each output's mean) passes the tolerance")
    for i, o in enumerate(out1):
        for j, v in enumerate(x1):
            if isinstance(v, torch.Tensor) and v.shape == o.shape and _same(o, v):
                add("copies-input", f"output {i} equals input {j}: there is nothing to compute")
    return found, [list(o.shape) for o in out1]


def _same(a: Any, b: Any) -> bool:
    import torch

    return bool(a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b))


def main(workdir: str) -> None:
    """Child entry point: ``python -m kernelwright.task.quality WORKDIR``."""
    from kernelwright.task.module import import_task_module

    req = read_request(workdir)
    try:
        module = import_task_module(req["path"], req["size"])
        findings, shapes = _findings(module, Precision(req["precision"]))
    except Exception as exc:  # the task's own code failed
        write_result(workdir, {"error": f"running the reference failed: {type(exc).__name__}: "
                                        f"{exc}"})
        return
    write_result(workdir, {"findings": findings, "shapes": shapes})


if __name__ == "__main__":
    main(sys.argv[1])
