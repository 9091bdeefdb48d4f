from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.harness import _tolerance
from kernelwright.records import Precision, Tolerance
from kernelwright.task import load_task


def task_with(tmp_path, options):
    p = tmp_path / "t.py"
    p.write_text(f"class Model: pass\ndef get_inputs(): return []\nKERNELWRIGHT = {options!r}\n")
    return load_task(p)


def test_task_tolerance_loosens_the_policy_but_never_tightens_it(tmp_path):
    task = task_with(tmp_path, {"atol": 2e-3})
    assert _tolerance(EvalOptions(), task) == Tolerance(2e-3, 1e-4)
    assert _tolerance(EvalOptions(precision=Precision.BF16), task) == Tolerance(1e-2, 1e-2)


def test_command_line_tolerance_is_exact(tmp_path):
    task = task_with(tmp_path, {"atol": 2e-3})
    assert _tolerance(EvalOptions(atol=1e-6, rtol=1e-5), task) == Tolerance(1e-6, 1e-5)
