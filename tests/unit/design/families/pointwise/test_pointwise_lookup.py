"""Table lookups (``table[index]``, ``nn.Embedding``) loaded through their index inside the
element-wise kernels that read them (design/ops.py ``lookup``, lowering's per-reader copies,
the emitter's indexed load), checked against PyTorch under the interpreter."""

from __future__ import annotations

from pathlib import Path

from design_checks import designs_for, write_task

ROTARY = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        angles = torch.outer(torch.arange(64, dtype=torch.float32), torch.rand(8))
        self.register_buffer("cos_table", angles.cos(), persistent=False)
        self.register_buffer("sin_table", angles.sin(), persistent=False)
    def _rotate(self, x, cos, sin):
        heads = x.view(x.shape[0], -1, 16)
        x1, x2 = heads.chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).view(x.shape)
    def forward(self, positions, query, key):
        cos = self.cos_table[positions].unsqueeze(1)
        sin = self.sin_table[positions].unsqueeze(1)
        return self._rotate(query, cos, sin), self._rotate(key, cos, sin)
def get_inputs():
    return [torch.randint(0, 64, (37,)), torch.randn(37, 6 * 16), torch.randn(37, 2 * 16)]
def get_input_variants():
    # negative positions count from the end of the table, as in PyTorch
    return [[torch.randint(-64, 64, (5,)), torch.randn(5, 6 * 16), torch.randn(5, 2 * 16)]]
def get_init_inputs():
    return []
"""

EMBEDDING = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 24)
        self.scale = nn.Parameter(torch.rand(24) + 0.5)
    def forward(self, tokens, x):
        return self.embed(tokens) * self.scale + x
def get_inputs():
    return [torch.randint(0, 50, (3, 11)), torch.randn(3, 11, 24)]
def get_input_variants():
    return [[torch.randint(0, 50, (2, 7)), torch.randn(2, 7, 24)]]
def get_init_inputs():
    return []
"""

INDEX_SELECT = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias_table = nn.Parameter(torch.randn(29, 3))
    def forward(self, idx, x):
        # a bias per position, rows of a table picked by index_select
        return x + self.bias_table.index_select(0, idx).permute(1, 0)
def get_inputs():
    return [torch.randint(0, 29, (41,)), torch.randn(3, 41)]
def get_input_variants():
    return []
def get_init_inputs():
    return []
"""

SUMMED = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(40, 33), persistent=False)
    def forward(self, idx, w):
        rows = self.table[idx]
        return rows.sum(-1), rows, (self.table[idx] * w).sum(-1)
def get_inputs():
    return [torch.randint(0, 40, (9,)), torch.randn(33)]
def get_input_variants():
    return []
def get_init_inputs():
    return []
"""


def test_rotary_tables_are_loaded_in_both_kernels(check) -> None:
    """One cos and one sin lookup, read by the query's and the key's kernels: each kernel loads
    the rows it needs through the positions (no gathered copy, no PyTorch call), once each."""
    (src,) = check(ROTARY)
    forward = src[src.index("class ModelNew") :]
    assert "aten.index" not in forward and "left to PyTorch" not in src
    # the group's kernels (not the shared helpers, whose names start with an underscore)
    kernels = [k for k in src.split("@triton.jit")[1:] if not k.lstrip().startswith("def _")]
    # the query's and the key's groups are the same code: the key's launches the query's kernel
    assert len(kernels) == 1 and "the same code as" in src
    for kernel in kernels:
        assert kernel.count("tl.load(b_cos_table_ptr") == 1
        assert kernel.count("tl.load(b_sin_table_ptr") == 1
        # one position a row: loaded once a row (_load_col), not once a column
        assert kernel.count("_load_col(positions_ptr") == 1
        assert "tl.load(positions_ptr" not in kernel


def test_index_select_along_the_first_dimension_is_a_lookup(check) -> None:
    (src,) = check(INDEX_SELECT)
    assert "aten.index_select" not in src[src.index("class ModelNew") :]


def test_embedding_feeds_an_elementwise_chain(check) -> None:
    (src,) = check(EMBEDDING)
    assert "aten.embedding" not in src[src.index("class ModelNew") :]
    assert "tl.load(p_embed_weight_ptr + embedding_row * p_embed_weight_stride0" in src


def test_lookup_read_by_a_reduction_stays_with_pytorch(check, tmp_path: Path) -> None:
    """The reduction templates do not load through an index: a lookup a reduction reads (or
    that is itself an output) is a labelled framework call; a lookup multiplied first is loaded
    by the element-wise kernel, whose result the reduction reads. All match PyTorch."""
    for src in check(SUMMED):  # every ranked design
        assert "a table lookup read outside element-wise kernels" in src
    part, _ = designs_for(write_task(tmp_path, SUMMED))
    framework = [g for g in part.groups if g.kind == "framework"]
    assert len(framework) == 1 and "index" in part.graph.node(framework[0].nodes[0]).target
    (pointwise,) = [g for g in part.groups if g.kind == "pointwise"]
    assert any(part.graph.node(n).target == "aten.index.Tensor" for n in pointwise.nodes)
