import numpy as np
import pytest

from kernelwright.errors import ConfigError
from kernelwright.tuning.restrictions import Expression, satisfied


def test_kernel_tuner_style_expressions_evaluate_vectorised():
    cols = {
        "MWG": np.array([64, 64, 32]),
        "MDIMC": np.array([8, 16, 16]),
        "VWM": np.array([2, 8, 4]),
    }
    expr = Expression.parse("MWG % (MDIMC * VWM) == 0", frozenset(cols))
    assert expr.names == ("MWG", "MDIMC", "VWM")
    assert satisfied((expr,), cols).tolist() == [True, False, False]


def test_chained_comparison_and_boolean_operators():
    cols = {"bx": np.array([1, 32, 64, 8]), "by": np.array([16, 32, 32, 2])}
    exprs = (
        Expression.parse("32 <= bx * by <= 1024"),
        Expression.parse("not (bx == 64 and by == 32) or bx < 0"),
    )
    assert satisfied(exprs, cols).tolist() == [False, True, False, False]


def test_shared_memory_budget_with_if_else_and_min():
    cols = {
        "use_shmem": np.array([0, 1, 1]),
        "bx": np.array([256, 16, 256]),
        "tx": np.array([4, 1, 4]),
    }
    expr = Expression.parse("use_shmem == 0 or (bx * tx + 14) * min(15, 16) < 12 * 1024")
    assert satisfied((expr,), cols).tolist() == [True, True, False]  # (256*4+14)*15 > 12288
    expr = Expression.parse("(bx * tx if use_shmem else 0) < 1000")
    assert satisfied((expr,), cols).tolist() == [True, True, False]


def test_division_by_zero_counts_as_violated_not_as_a_crash():
    cols = {"a": np.array([4, 4]), "b": np.array([0, 2])}
    assert satisfied((Expression.parse("a / b > 1"),), cols).tolist() == [True, True]
    assert satisfied((Expression.parse("a % b == 0"),), cols)[1]


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "bx.__class__",
        "(lambda: 1)()",
        "[x for x in range(3)]",
        "bx[0]",
        "open('/etc/passwd')",
        "eval('1')",
        "bx := 3",
    ],
)
def test_anything_outside_the_whitelist_is_refused(text):
    with pytest.raises(ConfigError):
        Expression.parse(text)


def test_unknown_names_are_named_in_the_error():
    with pytest.raises(ConfigError, match="BLOCK_Q"):
        Expression.parse("BLOCK_M * BLOCK_Q <= 128", frozenset({"BLOCK_M", "BLOCK_N"}))


def test_syntax_errors_are_config_errors():
    with pytest.raises(ConfigError, match="not an expression"):
        Expression.parse("a <= <= b")
