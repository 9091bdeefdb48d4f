"""The harness's dispatch modes see every operator without importing TorchDynamo (seconds of
start-up in every judge and candidate process), in a fresh interpreter."""

import subprocess
import sys

SCRIPT = """
import sys
import torch
from kernelwright.evaluate.dispatch_mode import mode_base

seen = []

class Mode(mode_base()):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        seen.append(str(func))
        return func(*args, **(kwargs or {}))

with Mode():
    torch.ones(3).add(1).sum()
assert any("add" in s for s in seen) and any("sum" in s for s in seen), seen
print("torch._dynamo" in sys.modules)
"""


def test_a_mode_observes_without_importing_dynamo():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False", out.stdout + out.stderr
