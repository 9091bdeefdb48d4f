"""Triton's once-a-process costs, paid by a candidate's process before the candidate arrives.

A process's first Triton compile hashes Triton's own files into its cache key, builds the
driver's helper module and a kernel launcher with the host's C compiler and imports the code
generator's modules: about 1.5 s of a small candidate's 2.6 s first call on an H200, none of it
the candidate's. Compiling and launching one kernel of kernelwright's own while the process
warms up (a spare, off any candidate's clock) leaves the candidate's warm-up step with its own
kernels' compiles only. The kernel runs before the launch monitor is installed, so it is never
counted as the candidate's. The process also builds the launchers of the argument types earlier
candidates' kernels had (``launchers``): a kernel of those types then finds its launcher in the
process's Triton cache instead of compiling one.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import triton
import triton.language as tl

from kernelwright.evaluate.launchers import Signature


@triton.jit
def _increment(x_ptr):  # type: ignore[no-untyped-def]
    tl.store(x_ptr, tl.load(x_ptr) + 1)


def warm(torch: Any, signatures: list[Signature]) -> None:
    """Compile and launch one one-element kernel on the current CUDA device, then build the
    launchers of ``signatures`` (already checked)."""
    x = torch.zeros(1, device="cuda")
    _increment[(1,)](x)
    torch.cuda.synchronize()
    build_launchers(signatures)


def build_launchers(signatures: list[Signature]) -> int:
    """Build (or find in the cache) the launcher Triton's CUDA driver makes for each signature,
    as its ``CudaLauncher`` does, so that the module's cache key is the one a kernel of these
    argument types looks up. The C compiles run at once (each is a compiler process), so a
    spare's readiness waits for the slowest one, not their sum. Returns how many are ready; one
    that fails is left to the kernel's own first launch."""
    try:
        from triton.backends.nvidia import driver
        from triton.runtime.build import compile_module_from_src
    except ImportError:
        return 0

    def build(signature: Signature) -> bool:
        try:
            source = driver.make_launcher({}, dict(enumerate(signature)), None)
            compile_module_from_src(src=source, name="__triton_launcher",
                                    library_dirs=driver.library_dirs(),
                                    include_dirs=driver.include_dirs,
                                    libraries=driver.libraries)
            return True
        except Exception:  # noqa: BLE001 - a type this Triton does not know: nothing to build
            return False

    if not signatures:
        return 0
    with ThreadPoolExecutor(max_workers=len(signatures)) as pool:
        return sum(pool.map(build, signatures))
