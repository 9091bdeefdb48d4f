import textwrap

import pytest

from kernelwright.constraints import Constraints, load_constraints
from kernelwright.errors import ConfigError
from kernelwright.evaluate.options import EvalOptions, SourceConstraints
from kernelwright.records import Precision
from kernelwright.search import Budget

EXAMPLE = """
references = ["ref.py"]
backends = ["triton"]
precision = "tf32"
forbidden_ops = ["torch.matmul", "F.scaled_dot_product_attention"]

[signatures]
"ModelNew.forward" = ["self", "x"]

[budget]
candidates = 10
minutes = 5.5
llm_calls = 40
cost_usd = 2.0
"""

HONEST = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    acc = tl.sum(tl.load(x_ptr + tl.arange(0, BLOCK)), axis=0)


class ModelNew(nn.Module):
    def forward(self, x):
        return x
"""


@pytest.fixture
def constraints(tmp_path):
    (tmp_path / "ref.py").write_text("# a reference kernel\n")
    path = tmp_path / "constraints.toml"
    path.write_text(EXAMPLE)
    return load_constraints(path)


def test_load_reads_every_field(constraints):
    assert isinstance(constraints, SourceConstraints)
    assert constraints.backends == ("triton",)
    assert constraints.precision is Precision.TF32
    assert constraints.signatures == (("ModelNew.forward", ("self", "x")),)
    assert (constraints.candidates, constraints.minutes) == (10, 5.5)
    assert (constraints.llm_calls, constraints.cost_usd) == (40, 2.0)
    assert constraints.references[0].title == "ref.py"
    assert constraints.violations(HONEST) == []


@pytest.mark.parametrize(
    "snippet",
    [
        "y = torch.matmul(x, x)",
        "y = x.matmul(x)",
        "y = x @ x",
        "y = getattr(torch, 'matmul')(x, x)",
        "from torch import matmul as mm",
        "import torch.nn.functional as F\ny = F.scaled_dot_product_attention(x, x, x)",
        "from torch.nn import functional as fn\ny = fn.scaled_dot_product_attention(x, x, x)",
    ],
)
def test_forbidden_ops_through_aliases(constraints, snippet):
    source = HONEST.replace("        return x\n", "        return x\n\n\n" + snippet + "\n")
    found = constraints.violations(source)
    assert found and {v.check for v in found} == {"constraint-forbidden-op"}


def test_backend_and_signature_violations(constraints):
    cuda = HONEST + "\nfrom torch.utils.cpp_extension import load_inline\n"
    assert [v.check for v in constraints.violations(cuda)] == ["constraint-backend"]
    renamed = HONEST.replace("def forward(self, x)", "def forward(self, inp)")
    (v,) = constraints.violations(renamed)
    assert v.check == "constraint-signature" and "forward(self, inp)" in v.reason
    assert constraints.violations("not python (") == []


def test_apply_and_limit(constraints):
    options = constraints.apply(EvalOptions(device="cpu", precision=Precision.TF32))
    assert options.constraints is constraints and options.precision is Precision.TF32
    assert constraints.limit(Budget(candidates=20, minutes=None)) == Budget(10, 5.5)
    assert Constraints().limit(Budget(3, 1.0)) == Budget(3, 1.0)
    assert Constraints().apply(EvalOptions(precision=Precision.BF16)).precision is Precision.BF16


def test_a_conflicting_precision_is_an_error_never_a_silent_change(constraints):
    with pytest.raises(ConfigError, match=r"require precision = 'tf32'.*policy is fp32"):
        constraints.apply(EvalOptions(precision=Precision.FP32))


@pytest.mark.parametrize(
    ("policy", "snippet", "refused"),
    [
        (Precision.FP32, "z = tl.dot(a, b)", True),
        (Precision.FP32, 'z = tl.dot(a, b, input_precision="tf32")', True),
        (Precision.FP32, 'z = tl.dot(a, b, input_precision="ieee")', False),
        (Precision.FP32, 'z = tl.dot(a, b, input_precision="tf32x3")', False),
        # an input_precision that is not a literal is left to the harness
        (Precision.FP32, "z = tl.dot(a, b, input_precision=PRECISION)", False),
        (Precision.FP32, "torch.backends.cuda.matmul.allow_tf32 = True", True),
        (Precision.FP32, 'torch.set_float32_matmul_precision("high")', True),
        (Precision.FP32, "y = x.half()", True),
        (Precision.FP32, "y = x.to(torch.bfloat16)", True),
        (Precision.TF32, "z = tl.dot(a, b)", False),
        (Precision.TF32, "y = x.to(dtype=torch.float16)", True),
        (Precision.BF16, "y = x.to(torch.bfloat16)", False),
        (Precision.FP32, "y = x.to(torch.float32)", False),
    ],
)
def test_precision_clause_refuses_lower_precision_in_the_source(policy, snippet, refused):
    source = HONEST.replace("        return x\n", "        return x\n\n\n" + snippet + "\n")
    found = Constraints(precision=policy).violations(source)
    assert bool(found) is refused
    if refused:
        assert [v.check for v in found] == ["constraint-precision"]
        assert f"precision = '{policy.value}' forbids" in found[0].reason


def test_fingerprint_changes_with_what_is_accepted_only(constraints):
    import dataclasses

    looser = dataclasses.replace(constraints, forbidden_ops=())
    cheaper = dataclasses.replace(constraints, candidates=3)
    assert constraints.fingerprint != looser.fingerprint
    assert constraints.fingerprint == cheaper.fingerprint


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("colour = 'red'", "unknown key"),
        ("precision = 'fp8'", "precision 'fp8' unknown"),
        ("backends = ['rocm']", "backends"),
        ("forbidden_ops = 'torch.matmul'", "list of strings"),
        ("[budget]\ncandidates = 2.5", "whole number"),
        ("[budget]\nminutes = -1", "positive"),
        ("[budget]\ntokens = 3", "unknown key"),
        ("references = ['missing.py']", "cannot be read"),
        ("this is = not toml =", "cannot read"),
    ],
)
def test_bad_files_say_what_is_wrong(tmp_path, text, match):
    path = tmp_path / "c.toml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(ConfigError, match=match):
        load_constraints(path)


def test_rules_lines_for_prompts(constraints):
    lines = constraints.rules()
    assert any("torch.matmul" in line for line in lines)
    assert any("ModelNew.forward(self, x)" in line for line in lines)
    assert constraints.describe()[0] == "Allowed kernel languages: triton."
