"""Prompts are data: Jinja templates in ``agents/prompts/``, rendered with strict variables.

system.md     the solution format and harness rules, shared by every role
planner.md    stage 1: structure and skills, no code        (task, skills, references, notes)
coder.md      the first ModelNew                             (task, plan, pitfalls, references)
debugger.md   a repair                                       (task, failing file, verdict)
tuner.md      stage 2: faster on the device, tunables exposed (task, best file, measurements)
no_code.md, duplicate.md   feedback turns inside one conversation
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import jinja2

from kernelwright.hardware.energy import Objective
from kernelwright.records import Precision

_PRECISION_RULES = {
    Precision.FP32: "float32 end to end; accumulate in float32 and pass "
    '`input_precision="ieee"` to `tl.dot` (its default is TF32 on GPUs, which misses fp32 '
    "tolerance).",
    Precision.TF32: "float32 tensors; TF32 matrix units are allowed (`tl.dot`'s default); "
    "accumulate in float32.",
    Precision.BF16: "floating inputs and weights arrive in bfloat16; accumulate in float32 and "
    "store in the output's dtype.",
}
_BACKEND_TEXT = {
    "triton": "Triton: `@triton.jit` kernels",
    "cuda": "CUDA: `torch.utils.cpp_extension.load_inline`",
}


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(_load),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        keep_trailing_newline=False,
    )


def _load(name: str) -> str:
    return (resources.files("kernelwright.agents") / "prompts" / name).read_text()


def render(name: str, **values: Any) -> str:
    """Render ``prompts/<name>.md`` (every variable the template uses must be given)."""
    return _environment().get_template(f"{name}.md").render(**values).strip() + "\n"


def system_prompt(
    *, backends: tuple[str, ...], precision: Precision, constraint_lines: list[str],
    objective: Objective = Objective.TIME,
) -> str:
    """The rules every role works under (the run's objective named when it is not time)."""
    return render(
        "system",
        backends=" or ".join(_BACKEND_TEXT.get(b, b) for b in backends),
        precision=precision.value,
        precision_rule=_PRECISION_RULES[precision],
        constraints=constraint_lines,
        objective=_OBJECTIVE_TEXT.get(objective, ""),
    )


_OBJECTIVE_TEXT = {
    Objective.ENERGY: "energy per call (joules), not time",
    Objective.EDP: "energy x time per call (a kernel that saves energy by running slowly "
                   "gains nothing)",
}
