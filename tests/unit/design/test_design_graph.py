"""Capture, lowering and fusion: the IR, its JSON form, and the groups of typical tasks."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kernelwright.design.capture import capture_path
from kernelwright.design.fusion import fuse
from kernelwright.design.graph import Ref, graph_from_dict
from kernelwright.design.lower import lower

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def task(tmp_path: Path, forward: str, inputs: str, init: str = "", args: str = "x") -> Path:
    path = tmp_path / "t.py"
    path.write_text(
        HEADER
        + textwrap.dedent(
            f"""
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    {init or "pass"}
                def forward(self, {args}):
                    return {forward}
            def get_inputs():
                return [{inputs}]
            def get_init_inputs():
                return []
            """
        )
    )
    return path


def groups(tmp_path: Path, forward: str, inputs: str, **kw: str) -> list[tuple[str, list[str]]]:
    part = fuse(lower(capture_path(task(tmp_path, forward, inputs, **kw), "small")))
    return [(g.kind, [part.graph.node(n).op for n in g.nodes]) for g in part.groups]


def test_capture_records_symbols_parameters_and_round_trips(tmp_path: Path) -> None:
    path = task(tmp_path, "self.norm(x)", "torch.randn(5, 16)", init="self.norm = nn.LayerNorm(16)")
    graph = capture_path(path, "small")
    kinds = {i.kind for i in graph.inputs}
    assert kinds == {"user", "parameter"}
    assert {i.target for i in graph.inputs if i.kind == "parameter"} == {"norm.weight", "norm.bias"}
    (sym,) = graph.symbols
    assert (sym.input, sym.dim, sym.hint) == ("x", 0, 5)
    assert any(n.target == "aten.native_layer_norm.default" for n in graph.nodes)
    again = graph_from_dict(json.loads(json.dumps(graph.to_dict())))
    assert again == graph


def test_a_model_only_static_shapes_can_trace_is_captured_static(tmp_path: Path) -> None:
    # flattening a pooled, strided map into a linear layer holds only at the traced size: the
    # dynamic trace fails on a guard symbolic solving cannot invert, and the static one must
    # not inherit that failure through the inputs' shape environment
    init = ("self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1); self.pool = nn.AvgPool2d(7); "
            "self.fc = nn.Linear(8, 5)")
    fwd = "self.fc(self.pool(self.conv(x)).view(x.size(0), -1))"
    graph = capture_path(task(tmp_path, fwd, "torch.randn(2, 3, 14, 14)", init=init), "small")
    assert graph.symbols == ()  # static: no dimension left symbolic
    assert any(n.target == "aten.convolution.default" for n in graph.nodes)
    assert graph.outputs


def test_lowering_makes_softmax_a_chain_of_primitives(tmp_path: Path) -> None:
    graph = lower(
        capture_path(task(tmp_path, "torch.softmax(x, dim=-1)", "torch.randn(4, 9)"), "small")
    )
    assert [n.op for n in graph.nodes] == ["amax", "sub", "exp", "sum", "div"]
    assert graph.outputs == (Ref(graph.nodes[-1].name),)


def test_reverse_cumsum_idiom_becomes_one_reverse_scan(tmp_path: Path) -> None:
    fwd = "torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])"
    graph = lower(capture_path(task(tmp_path, fwd, "torch.randn(4, 9)"), "small"))
    (node,) = graph.nodes
    assert node.target == "kw.scan" and node.args[2:] == ("sum", True)


def test_an_exclusive_cumsum_idiom_becomes_one_exclusive_scan_pytorch_can_run(
    tmp_path: Path,
) -> None:
    import torch

    from kernelwright.design.emit import _node_line

    fwd = "torch.cumsum(F.pad(x, (1, 0))[:, :-1], dim=1)"
    graph = lower(capture_path(task(tmp_path, fwd, "torch.randn(4, 9)"), "small"))
    (node,) = graph.nodes
    assert node.target == "kw.scan" and node.args[1:] == (1, "sum", False, True)
    # where no template takes it, PyTorch runs the same function
    (line,) = _node_line(graph, node, None, None)  # type: ignore[arg-type]
    x = torch.randn(4, 9)
    scope = {"torch": torch, "x": x}
    exec(line, scope)
    expected = torch.cumsum(torch.nn.functional.pad(x, (1, 0))[:, :-1], dim=1)
    assert torch.equal(scope[line.split(" = ")[0]], expected)


def test_reductions_over_unit_dimensions_become_copies(tmp_path: Path) -> None:
    fwd = "torch.logsumexp(x.sum(1, keepdim=True), 1, keepdim=True).amax(1)"
    graph = lower(capture_path(task(tmp_path, fwd, "torch.randn(4, 9)"), "small"))
    reductions = [n for n in graph.nodes if n.target in (
        "aten.sum.dim_IntList", "aten.amax.default", "aten.mean.dim", "aten.amin.default")]
    assert [(n.args[1], n.out.shape) for n in reductions] == [((1,), ("s77", "1"))]
    (squeeze,) = [n for n in graph.nodes if n.target == "aten.squeeze.dims"]
    assert squeeze.out.shape == ("s77",) and squeeze.args[1] == (1,)
    assert graph.outputs == (Ref(squeeze.name),)
    # an input's dimension of 1 is fixed at capture too (torch.export specialises it): a copy;
    # an integer sum is kept (only float reductions are rewritten)
    kept = lower(capture_path(task(tmp_path, "x.sum(1), x.long().sum(1, keepdim=True)",
                                   "torch.randn(4, 1)"), "small"))
    assert sum(n.target == "aten.sum.dim_IntList" for n in kept.nodes) == 1


def test_element_wise_ops_after_a_reshape_run_before_it(tmp_path: Path) -> None:
    # a Linear on (batch, seq, features): mm on the flattened rows, a view back, then GELU and
    # a scale, which move before the view and join the product's epilogue
    fc = "self.fc = nn.Linear(8, 16)"
    found = groups(tmp_path, "F.gelu(self.fc(x)) * 2.0", "torch.randn(2, 5, 8)", init=fc)
    assert found == [("gemm", ["mm", "add", "gelu", "mul"])]
    # a residual of the output's shape is reshaped to the product's rows and joins it too
    inputs = "torch.randn(2, 5, 8), torch.randn(2, 5, 16)"
    found = groups(tmp_path, "F.gelu(self.fc(x)) + y", inputs, init=fc, args="x, y")
    assert found == [("gemm", ["mm", "add", "gelu", "add"])]
    # the sum of two products of token rows: the second's epilogue reads the first's rows
    two = "self.fc = nn.Linear(8, 16); self.gate = nn.Linear(8, 16)"
    found = groups(tmp_path, "self.fc(x) + self.gate(x)", "torch.randn(2, 5, 8)", init=two)
    assert found == [("gemm", ["mm", "add"]), ("gemm", ["mm", "add", "add"])]
    # an operand broadcast along the last dimension but varying along the flattened ones is not
    # moved: the add stays apart
    inputs = "torch.randn(2, 5, 8), torch.randn(2, 5, 1)"
    found = groups(tmp_path, "F.gelu(self.fc(x)) + y", inputs, init=fc, args="x, y")
    assert found == [("gemm", ["mm", "add", "gelu"]), ("pointwise", ["add"])]


def test_norm_is_one_reduction_group(tmp_path: Path) -> None:
    fwd = "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)"
    assert groups(tmp_path, fwd, "torch.randn(3, 4, 16)") == [
        ("reduction", ["pow", "mean", "add", "rsqrt", "mul"])
    ]


def test_a_whole_tensor_sum_of_a_row_group_splits_in_two(tmp_path: Path) -> None:
    fwd = 'F.kl_div(F.log_softmax(x, dim=-1), y, reduction="batchmean")'
    found = groups(
        tmp_path, fwd, "torch.randn(6, 10), torch.softmax(torch.randn(6, 10), -1)", args="x, y"
    )
    assert [k for k, _ in found] == ["reduction", "reduction"]
    assert found[0][1][-1] == "sum" and found[1][1][0] == "sum"


def test_ops_without_a_template_stay_with_pytorch(tmp_path: Path) -> None:
    fwd = "torch.sort(torch.softmax(x, -1), dim=-1)[0] * 2.0"
    kinds = [k for k, _ in groups(tmp_path, fwd, "torch.randn(5, 12)")]
    assert kinds == ["reduction", "framework", "pointwise"]


@pytest.mark.parametrize("layer", ["LSTM", "GRU", "RNN"])
def test_a_recurrent_layer_stays_one_framework_call(tmp_path: Path, layer: str) -> None:
    # the vendor's recurrence, not its steps unrolled over the sequence (what core ATen's
    # decompositions would make of it: thousands of nodes for a long sequence)
    init = f"self.rnn = nn.{layer}(4, 6, 2, batch_first=True); self.fc = nn.Linear(6, 3)"
    found = groups(tmp_path, "torch.relu(self.fc(self.rnn(x)[0][:, -1, :]))",
                   "torch.randn(2, 40, 4)", init=init)
    op = layer.lower() if layer != "RNN" else "rnn_tanh"
    # besides the zero initial states (a `full` each), the layer is a single node, then the head
    assert [g for g in found if g[1] != ["full"]] == [
        ("framework", [op]), ("gemm", ["mm", "add", "relu"])]


def test_a_recurrent_model_is_traced_once_and_holds_its_sizes(tmp_path: Path) -> None:
    """Traced with static shapes (symbolic ones ran the layer's steps for minutes), so every
    input size is fixed; none is moved and traced again (each trace runs every step), all are
    held: its ModelNew refuses other sizes."""
    init = "self.rnn = nn.GRU(4, 6, 1, batch_first=True); self.fc = nn.Linear(6, 3)"
    graph = capture_path(task(tmp_path, "self.fc(self.rnn(x)[0][:, -1, :])", "torch.randn(2, 9, 4)",
                              init=init), "small")
    assert graph.held == (("x", 0), ("x", 1), ("x", 2))


def test_a_size_the_model_refuses_when_moved_is_probed_quietly(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The second input's 5 channels are fixed by the convolution's weights: traced again at 4,
    the model refuses (an answer, not an error), and nothing about it reaches the terminal."""
    path = task(tmp_path, "self.conv(x) + y", "torch.randn(2, 3, 6, 6), torch.randn(2, 5, 4, 4)",
                init="self.conv = nn.Conv2d(3, 5, 3)", args="x, y")
    graph = capture_path(path, "small")
    assert ("y", 1) not in graph.held
    out, err = capfd.readouterr()
    assert "Traceback" not in err + out and "failed while attempting" not in err + out


def test_views_of_kernel_values_are_absorbed(tmp_path: Path) -> None:
    found = groups(tmp_path, "F.normalize(x, p=2.0, dim=1)", "torch.randn(2, 5, 7)")
    assert found == [("reduction", ["mul", "sum", "sqrt", "clamp", "expand", "div"])]


def test_full_size_epilogue_of_a_whole_tensor_reduction_is_kept_apart(tmp_path: Path) -> None:
    found = groups(tmp_path, 'x / torch.norm(x, p="fro")', "torch.randn(5, 7)")
    assert [k for k, _ in found] == ["reduction", "pointwise"]


@pytest.mark.parametrize(
    ("module", "fusible"),
    [("nn.MaxPool2d(3, 2, 1)", True), ("nn.AvgPool3d(3, 2, 1)", True)],
)
def test_pooling_is_its_own_group(tmp_path: Path, module: str, fusible: bool) -> None:
    shape = "torch.randn(2, 3, 5, 7, 9)" if "3d" in module else "torch.randn(2, 3, 9, 11)"
    found = groups(tmp_path, "self.pool(x)", shape, init=f"self.pool = {module}")
    assert found[0][0] == "pool"


# a DenseNet transition: batch norm, ReLU, 1 x 1 convolution, average pool
TRANSITION = "nn.AvgPool{d}d({pool})(self.conv(torch.relu(self.bn(x))))"


def transition(tmp_path: Path, d: int = 2, cin: int = 12, cout: int = 6, k: int = 1,
               pool: str = "2", padding: int = 0, out: str = "") -> list[str]:
    """The lowered graph's ops, in order, of a transition with these choices."""
    spatial = "7, 9" if d == 2 else "5, 7, 9"
    init = (f"self.bn = nn.BatchNorm{d}d({cin}); self.conv = nn.Conv{d}d({cin}, {cout}, {k}, "
            f"padding={padding}, bias=False)")
    forward = TRANSITION.format(d=d, pool=pool) + out
    graph = lower(capture_path(task(tmp_path, forward, f"torch.randn(2, {cin}, {spatial})",
                                    init=init), "small"))
    return [n.op for n in graph.nodes if n.kind == "call"]


def test_an_average_pool_runs_before_the_one_by_one_convolution_it_commutes_with(
    tmp_path: Path,
) -> None:
    ops = transition(tmp_path)
    assert ops.index("avg_pool2d") < ops.index("convolution")
    ops = transition(tmp_path, d=3, pool="(1, 2, 2)")
    assert ops.index("avg_pool3d") < ops.index("convolution")
    ops = transition(tmp_path, pool="3, stride=2")  # overlapping windows average too
    assert ops.index("avg_pool2d") < ops.index("convolution")


@pytest.mark.parametrize(
    "change",
    [
        {"k": 3, "padding": 1},  # a 3 x 3 convolution mixes pixels: it does not commute
        {"pool": "2, padding=1"},  # padded windows average zeros the bias never saw
        {"pool": "2, ceil_mode=True"},
        {"pool": "2, divisor_override=3"},
        {"cin": 48, "cout": 6},  # 48 input channels > 6 x 4: pooling first moves more bytes
    ],
    ids=["3x3", "padded-pool", "ceil-mode", "divisor", "wide-input"],
)
def test_the_pool_stays_after_the_convolution_where_it_does_not_commute(
    tmp_path: Path, change: dict[str, object]
) -> None:
    ops = transition(tmp_path, **change)  # type: ignore[arg-type]
    assert ops.index("convolution") < ops.index("avg_pool2d")
