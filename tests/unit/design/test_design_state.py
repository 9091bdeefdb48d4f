"""Tensors a model keeps or makes outside its inputs and parameters. A plain tensor attribute the
forward writes (an RNN cell's hidden state, KernelBench level-3 33) is captured as a buffer, its
new value an output the ModelNew writes back, and its reads moved to the input's device as the
task's forward does (``.cuda()`` moves only parameters and buffers); one the forward only reads
is read so too (or inlined, one value). A small tensor the forward makes from literals is
written into the emitted file."""

from __future__ import annotations

import json
from pathlib import Path

from design_checks import write_task

from kernelwright.design.capture import capture_path
from kernelwright.design.emit import emit
from kernelwright.design.fusion import fuse
from kernelwright.design.graph import graph_from_dict
from kernelwright.design.lower import lower
from kernelwright.design.structures import group_options, rank_designs
from kernelwright.skills.library import SkillLibrary

# the cell of KernelBench level-3 33 at a small size: the hidden state is overwritten by the
# given one, concatenated with the input, and replaced by the new state
RNN_CELL = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.randn(6, 24)
        self.i2h = nn.Linear(40 + 24, 24)
        self.h2o = nn.Linear(24, 8)

    def forward(self, x, initial_hidden):
        self.hidden.copy_(initial_hidden)
        self.hidden = self.hidden.to(x.device)
        combined = torch.cat((x, self.hidden), dim=1)
        self.hidden = torch.tanh(self.i2h(combined))
        return self.h2o(self.hidden)


def get_inputs():
    return [torch.randn(6, 40), torch.randn(6, 24)]


def get_init_inputs():
    return []
"""

# a running average the forward reads before writing it: the output depends on the state
RUNNING_MEAN = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.state = torch.randn(33)

    def forward(self, x):
        self.state = self.state * 0.5 + x.mean(0)
        return x * self.state


def get_inputs():
    return [torch.randn(5, 33)]


def get_init_inputs():
    return []
"""


# attributes the forward only reads: a one-value scale and a table of weights
READ_ONLY = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.tensor(0.5)
        self.weights = torch.randn(33)

    def forward(self, x):
        return torch.relu(x) * self.scale + self.weights.to(x.device)


def get_inputs():
    return [torch.randn(5, 33)]


def get_init_inputs():
    return []
"""


def test_an_attribute_the_forward_writes_is_a_write_not_a_returned_output(
    tmp_path: Path,
) -> None:
    graph = capture_path(write_task(tmp_path, RNN_CELL), "small")
    (state,) = [i for i in graph.inputs if i.kind == "state"]
    assert state.target == "hidden"
    assert graph.writes == ("hidden",)
    assert len(graph.returned) == 1 and len(graph.outputs) == 2
    (fqn, value), = graph.written
    assert fqn == "hidden" and graph.node(value.name).target == "aten.tanh.default"  # type: ignore[union-attr]
    assert graph_from_dict(json.loads(json.dumps(graph.to_dict()))) == graph
    # copy_(initial_hidden) is the given state itself: the attribute's old value is never read
    lowered = lower(graph)
    assert not any(n.target == "aten.copy.default" for n in lowered.nodes)
    assert lowered.writes == ("hidden",)


def emitted(tmp_path: Path, body: str) -> str:
    path = write_task(tmp_path, body)
    part = fuse(lower(capture_path(path, "small")))
    library = SkillLibrary.builtin()
    (design, *_) = rank_designs([group_options(part, g, library) for g in part.fused], 4)
    return emit(part, design, path.read_text(), task_name="t", size="small")


def test_the_model_new_writes_the_attribute_back_and_returns_only_the_outputs(
    tmp_path: Path,
) -> None:
    src = emitted(tmp_path, RNN_CELL)
    forward = src[src.index("    def forward("):]
    assert "        self.hidden = " in forward
    assert "self.hidden.to(" not in forward  # overwritten by the given state before any read
    ret = [ln for ln in forward.splitlines() if ln.strip().startswith("return ")]
    assert len(ret) == 1 and "," not in ret[0]


def test_a_state_read_moves_to_the_input_device_as_the_forward_does(tmp_path: Path) -> None:
    src = emitted(tmp_path, RUNNING_MEAN)
    forward = src[src.index("    def forward("):]
    assert "= self.state.to(x.device)" in forward
    assert "        self.state = " in forward


def test_rnn_cell_with_its_state_matches_pytorch(check) -> None:  # type: ignore[no-untyped-def]
    # compare() also checks the attribute after the call against the task's model
    check(RNN_CELL, skills=("gemm-tiled",), params={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16})


def test_a_state_read_then_written_matches_pytorch(check) -> None:  # type: ignore[no-untyped-def]
    check(RUNNING_MEAN)


def test_attributes_the_forward_only_reads_are_read_or_inlined(tmp_path: Path) -> None:
    graph = capture_path(write_task(tmp_path, READ_ONLY), "small")
    assert graph.writes == ()
    assert [i.target for i in graph.inputs if i.kind == "state"] == ["weights"]
    assert any(n.target == "aten.scalar_tensor.default" and n.args == (0.5,) for n in graph.nodes)
    forward = emitted(tmp_path, READ_ONLY).split("    def forward(")[1]
    assert "= self.weights.to(x.device)" in forward and "self.scale" not in forward


def test_attributes_read_only_match_pytorch(check) -> None:  # type: ignore[no-untyped-def]
    check(READ_ONLY)


# tensors the forward makes from literals: export lifts them as constants of the program
MADE_IN_FORWARD = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        w = torch.tensor([1.0, -2.5, 3.0], device=x.device)
        return torch.relu(x) * w + torch.tensor([[0.5], [1.5]], device=x.device)


def get_inputs():
    return [torch.randn(2, 3)]


def get_init_inputs():
    return []
"""


def test_constants_made_in_the_forward_are_written_into_the_file(tmp_path: Path) -> None:
    forward = emitted(tmp_path, MADE_IN_FORWARD).split("    def forward(")[1]
    assert "torch.tensor([1.0, -2.5, 3.0], dtype=torch.float32, device=x.device)" in forward
    assert ".reshape((2, 1))" in forward


def test_constants_made_in_the_forward_match_pytorch(check) -> None:  # type: ignore[no-untyped-def]
    check(MADE_IN_FORWARD)


def test_a_constant_too_large_to_write_is_refused_in_a_sentence(tmp_path: Path) -> None:
    import pytest

    from kernelwright.design.kernel.common import DesignError

    body = MADE_IN_FORWARD.replace(
        "torch.tensor([1.0, -2.5, 3.0], device=x.device)",
        "torch.tensor([float(i) for i in range(5000)], device=x.device)[:3]",
    )
    with pytest.raises(DesignError, match="too large to write"):
        emitted(tmp_path, body)
