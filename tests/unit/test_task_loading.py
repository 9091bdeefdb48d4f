import textwrap

import pytest

from kernelwright.errors import TaskError
from kernelwright.task import (
    import_task_module,
    is_solution_file,
    load_task,
    task_id,
    task_options,
)


def write(tmp_path, text, name="task.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


VALID = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2
rows = 64
cols = rows * 2
KERNELWRIGHT = {"small": {"rows": 3}, "atol": 1e-3}
def get_inputs():
    return [torch.randn(rows, cols)]
def get_init_inputs():
    return []
"""


def test_valid_task_loads_without_running(tmp_path):
    p = write(tmp_path, VALID + "\nraise SystemExit('the parent must never execute a task')\n")
    task = load_task(p)
    assert task.name == tmp_path.name and len(task.sha256) == 64 and not task.has_variants
    assert task_options(task)["atol"] == 1e-3


def test_small_size_rewrites_constants_and_derived_ones_follow(tmp_path):
    p = write(tmp_path, VALID)
    full = import_task_module(p, "full")
    small = import_task_module(p, "small")
    assert (full.rows, full.cols) == (64, 128)
    assert (small.rows, small.cols) == (3, 6)
    assert small.get_inputs()[0].shape == (3, 6)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("import torch\ndef get_inputs(): return []\n", "does not define Model"),
        ("import torch\nclass Model: pass\n", "does not define get_inputs"),
        ("class Model:\n  def f(:\n", "not valid Python"),
        (
            "class Model: pass\ndef get_inputs(): return []\nKERNELWRIGHT = {'small': f()}\n",
            "literal dict",
        ),
        (
            "class Model: pass\ndef get_inputs(): return []\nKERNELWRIGHT = {'smol': {}}\n",
            "unknown KERNELWRIGHT keys",
        ),
    ],
)
def test_bad_tasks_say_what_is_wrong(tmp_path, text, message):
    with pytest.raises(TaskError, match=message):
        load_task(write(tmp_path, text))


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(TaskError, match="no such task file"):
        load_task(tmp_path / "nope.py")
    with pytest.raises(TaskError, match="is a directory"):
        load_task(tmp_path)


def test_small_override_of_unknown_constant_is_an_error(tmp_path):
    p = write(tmp_path, VALID.replace('{"rows": 3}', '{"nrows": 3}'))
    with pytest.raises(TaskError, match="does not assign"):
        import_task_module(p, "small")


def test_import_failure_is_a_task_error(tmp_path):
    p = write(tmp_path, "class Model: pass\ndef get_inputs(): return []\nraise RuntimeError('x')\n")
    with pytest.raises(TaskError, match="importing the task raised RuntimeError"):
        import_task_module(p)


def test_a_task_is_named_after_its_file_or_the_folder_of_a_task_py(tmp_path):
    assert task_id("benchmarks/level1/06_softmax_rows.py") == "06_softmax_rows"
    (tmp_path / "softmax").mkdir()
    inside = write(tmp_path / "softmax", VALID)
    assert task_id(inside) == "softmax"
    assert load_task(inside).name == "softmax"
    assert load_task(write(tmp_path, VALID, name="07_relu.py")).name == "07_relu"


def test_solution_files_are_told_apart_from_tasks(tmp_path):
    solution = write(tmp_path, "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n", "s.py")
    assert is_solution_file(solution)
    assert not is_solution_file(write(tmp_path, VALID))
    assert not is_solution_file(write(tmp_path, "def broken(:\n", "broken.py"))
    assert not is_solution_file(tmp_path / "missing.py")


def test_a_calls_inputs_and_parameters_are_counted_on_the_meta_device(tmp_path):
    from kernelwright.task.meta_size import meta_call_bytes

    p = write(tmp_path, """
        import torch
        class Model(torch.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.fc = torch.nn.Linear(n, 4)
            def forward(self, x, k):
                return self.fc(x) * k
        def get_inputs():
            return [torch.randn(40000, 100000), 3]
        def get_init_inputs():
            return [100000]
    """)
    # 4e9 input floats and a 4 x 100000 weight with 4 biases, fp32; nothing allocated
    module = import_task_module(p, "small")
    counted = meta_call_bytes(module.get_inputs, module.Model, module.get_init_inputs())
    assert counted == 4 * (40000 * 100000 + 4 * 100000 + 4)
