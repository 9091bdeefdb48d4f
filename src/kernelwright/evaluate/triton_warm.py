"""Triton's once-a-process costs, paid by a candidate's process before the candidate arrives.

A process's first Triton compile hashes Triton's own files into its cache key, builds the
driver's helper module and a kernel launcher with the host's C compiler and imports the code
generator's modules: about 1.5 s of a small candidate's 2.6 s first call on an H200, none of it
the candidate's. Compiling and launching one kernel of kernelwright's own while the process
warms up (a spare, off any candidate's clock) leaves the candidate's warm-up step with its own
kernels' compiles only. The kernel runs before the launch monitor is installed, so it is never
counted as the candidate's.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl


@triton.jit
def _increment(x_ptr):  # type: ignore[no-untyped-def]
    tl.store(x_ptr, tl.load(x_ptr) + 1)


def warm(torch: Any) -> None:
    """Compile and launch one one-element kernel on the current CUDA device."""
    x = torch.zeros(1, device="cuda")
    _increment[(1,)](x)
    torch.cuda.synchronize()
