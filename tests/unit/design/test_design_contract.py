"""What an emitted ModelNew was generated for: built with other construction arguments, or called
with a size the captured graph fixed, it refuses with a ValueError instead of computing
something else (a group count, a head dimension's scale and a top-k width are held in its
kernels)."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import pytest
import torch
from design_checks import captured as captured_once
from design_checks import import_source

from kernelwright.design.capture import init_literal
from kernelwright.design.contract import MODEL_HELPERS, guard_init
from kernelwright.design.emit import emit
from kernelwright.design.fusion import fuse
from kernelwright.design.graph import OpGraph
from kernelwright.design.lower import lower
from kernelwright.design.recognise_attention import recognise_attention
from kernelwright.design.structures import group_options, rank_designs
from kernelwright.evaluate.guard.registry import GuardContext, run_checks
from kernelwright.skills.library import SkillLibrary

GROUP_NORM = """
import torch
import torch.nn as nn

groups = 3
channels = 12
KERNELWRIGHT = {"small": {}}


class Model(nn.Module):
    def __init__(self, groups, channels, eps=1e-5):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels, eps=eps)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(2, channels, 5, 7)]


def get_init_inputs():
    return [groups, channels]
"""

# the scale reads the head dimension, so torch.export fixes it at 16
ATTENTION = """
import math
import torch
import torch.nn as nn

KERNELWRIGHT = {"small": {}}


class Model(nn.Module):
    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(q.shape[-1])
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [torch.randn(2, 3, 37, 16) for _ in range(3)]


def get_init_inputs():
    return []
"""


def captured(tmp_path: Path, text: str) -> OpGraph:
    """``text`` as tmp_path/task.py, captured at its small size (once a process for each text:
    several tests read the same task's graph)."""
    path = tmp_path / "task.py"
    path.write_text(text)
    return captured_once(path)


def emitted_module(tmp_path: Path, text: str) -> tuple[types.ModuleType, str]:
    part = fuse(lower(recognise_attention(captured(tmp_path, text))))
    library = SkillLibrary.builtin()
    design = rank_designs([group_options(part, g, library) for g in part.fused])[0]
    source = emit(part, design, text, task_name="task", size="small")
    assert run_checks("static", GuardContext(source, ast.parse(source))) == []
    return import_source(tmp_path / "candidate.py", source), source


def test_built_with_other_arguments_it_refuses(tmp_path: Path) -> None:
    module, source = emitted_module(tmp_path, GROUP_NORM)
    assert "_refuse_shape(" not in source  # the weights fix the channels: the model refuses
    module.ModelNew(3, 12)
    module.ModelNew(groups=3, channels=12, eps=1e-5)
    module.ModelNew(3, (12))
    for args, kwargs in [
        ((6, 12), {}),
        ((3, 12), {"eps": 1e-3}),
        ((), {"groups": 2, "channels": 12}),
    ]:
        with pytest.raises(
            ValueError, match="generated for ModelNew\\(groups=3, channels=12, eps=1e-05\\)"
        ):
            module.ModelNew(*args, **kwargs)


# sizes tracing fixes without computing a value from them: a slice's bound, a pooled length
SLICED_AND_POOLED = """
import torch
import torch.nn as nn
import torch.nn.functional as F

KERNELWRIGHT = {"small": {}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.randn(64, 64))

    def forward(self, x, y):
        T = x.size(-1)
        return torch.sigmoid(x) * self.buf[:T, :T], F.max_pool1d(y, 3, 2)


def get_inputs():
    return [torch.randn(64, 64), torch.randn(1, 4, 37)]


def get_init_inputs():
    return []
"""


def test_held_sizes_are_those_a_value_was_computed_from(tmp_path: Path) -> None:
    assert captured(tmp_path, ATTENTION).held == (("k", 3), ("q", 3))  # the scores' size
    assert captured(tmp_path, GROUP_NORM).held == ()
    graph = captured(tmp_path, SLICED_AND_POOLED)
    assert any(s.isdigit() and s != "1" for u in graph.user_inputs for s in u.meta.shape)
    assert graph.held == (("y", 0),)  # a size of 1: the graph's unit dimension


def test_a_held_size_is_checked_and_the_rest_stay_free(tmp_path: Path) -> None:
    module, source = emitted_module(tmp_path, ATTENTION)
    # leading dimensions fold into the batch: the fixed one counts from the end
    assert "if q.dim() < 4 or q.shape[-1] != 16:" in source
    model = module.ModelNew()
    q = torch.randn(2, 3, 37, 19)
    refused = r"q of shape \(\.\.\., _, _, 16\) .* not \(2, 3, 37, 19\)"
    with pytest.raises(ValueError, match=refused):
        model(q, q, q)
    with pytest.raises(ValueError, match="q of shape"):
        model(torch.randn(3, 37, 16), q, q)  # the rank too


def init_of(member: str, init: str) -> type:
    """A class whose ``__init__`` is ``member`` (one class-body member, indented by 4) guarded
    for construction arguments ``init``."""
    graph = OpGraph((), (), (), init=init)
    (body,) = guard_init((member,), graph)
    scope: dict[str, object] = {}
    exec(MODEL_HELPERS["_built_as"], scope)
    exec("class Built:\n" + body, scope)
    return scope["Built"]  # type: ignore[return-value]


def test_the_capture_arguments_bind_to_positions_defaults_and_starred_parameters() -> None:
    member = '''    def __init__(self, a, b=2, *rest, scale=0.5, **extra):
        """A docstring stays first."""
        self.seen = (a, b, rest, scale, extra)'''
    built = init_of(member, "[1, [2, 3], 4]")
    assert built(1, (2, 3), 4).seen == (1, (2, 3), (4,), 0.5, {})
    for args, kwargs in [
        ((1, [2, 3]), {}),
        ((1, [2, 3], 4), {"scale": 1.0}),
        ((1, [2, 3], 4), {"more": 1}),
        ((0, [2, 3], 4), {}),
    ]:
        with pytest.raises(
            ValueError,
            match="generated for ModelNew\\(a=1, b=\\[2, 3\\], "
            "rest=\\(4,\\), scale=0.5, extra={}\\)",
        ):
            built(*args, **kwargs)
    assert init_of(member, "[1]")(1).seen == (1, 2, (), 0.5, {})


def test_no_check_where_the_arguments_are_not_a_literal_or_do_not_bind() -> None:
    member = "    def __init__(self, a):\n        self.a = a"
    assert guard_init((member,), OpGraph((), (), (), init="")) == (member,)
    assert guard_init((member,), OpGraph((), (), (), init="[]")) == (member,)
    assert guard_init((member,), OpGraph((), (), (), init="[1, 2]")) == (member,)  # too many
    literal = "[3, 12, 1e-05, (1, 2), 'mean', None]"
    assert init_literal([3, 12, 1e-5, (1, 2), "mean", None]) == literal
    assert init_literal([torch.ones(2)]) == ""
    assert init_literal([torch.float32]) == ""
