from kernelwright.agents.extract import extract_code

MODEL = """import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return kernel(x)
"""
KERNEL = """import triton


@triton.jit
def kernel_impl(x_ptr):
    pass


def kernel(x):
    return x
"""


def test_single_fenced_block():
    got = extract_code(f"Sure.\n\n```python\n{MODEL}```\nDone.")
    assert got.code == MODEL


def test_chooses_the_last_block_with_model_new():
    reply = f"```python\nclass Model: pass\n```\nthen\n```py\n{MODEL}```\n```bash\npip x\n```"
    assert extract_code(reply).code == MODEL
    older = MODEL.replace("kernel(x)", "old(x)")
    assert extract_code(f"```python\n{older}```\nfixed:\n```python\n{MODEL}```").code == MODEL


def test_joins_a_kernel_block_the_model_block_needs():
    reply = f"Kernel:\n```python\n{KERNEL}```\nModule:\n```python\n{MODEL}```"
    code = extract_code(reply).code
    assert code is not None
    assert "def kernel(x)" in code and "class ModelNew" in code


def test_does_not_join_unrelated_blocks():
    reply = f"```python\nprint('usage')\n```\n```python\n{MODEL}```"
    assert extract_code(reply).code == MODEL


def test_missing_fences_with_stray_prose():
    reply = f"Here is the file:\n{MODEL}\nThis should be fast because it fuses everything."
    assert extract_code(reply).code == MODEL


def test_unterminated_fence_and_tilde_fences():
    assert extract_code(f"```python\n{MODEL}").code == MODEL
    assert extract_code(f"~~~python\n{MODEL}~~~").code == MODEL


def test_reasoning_sections_are_dropped():
    reply = f"<think>maybe ```python\nclass ModelNew: broken(\n```</think>\n```python\n{MODEL}```"
    assert extract_code(reply).code == MODEL


def test_no_code_is_a_problem_not_an_exception():
    for reply in ("", "I cannot help with that.", "```python\nprint(1)\n```"):
        got = extract_code(reply)
        assert got.code is None and got.problem


def test_syntax_errors_are_reported():
    got = extract_code("```python\nclass ModelNew(nn.Module):\n    def f(self:\n```")
    assert got.code is None
    assert "does not parse" in got.problem
