"""Ready-made kernels: the GPU-aware default and the usual off-the-shelf baseline.

    gpu_kernel(space)      M52(sizes on log2, constrained products) × Cat(flags and variants)
                           + Cat(sizes seen as categories)
    default_kernel(space)  M52(every parameter on a linear [0, 1] scale), ARD: the common default

The product lets every categorical choice (shared memory on/off, a layout variant) change the
whole size landscape, which is what such switches do on a GPU; the constrained products (threads
per block, tile extents, register and shared-memory footprints) give the GP coordinates along
which occupancy cliffs are single steps rather than diagonal ridges. The second term treats each
size value as its own category: a block width of 48 or a tile of 3 is not "between" its
neighbours on a GPU (warp multiples, divisibility of the problem, bank conflicts, unrolling), so
the model keeps a value-specific offset that the smooth term cannot express.
"""

from __future__ import annotations

from kernelwright.tuning.gp.features import Feature, raw_features, structured_features
from kernelwright.tuning.gp.kernels import Base, Kernel, Product, Sum
from kernelwright.tuning.space import Kind, Space

MAX_CATEGORIES = 32  # sizes with more distinct values than this stay smooth-only


def gpu_kernel(space: Space) -> Kernel:
    """The GPU-aware default kernel for ``space`` (see module docstring)."""
    numeric, categorical = structured_features(space)
    parts: list[Kernel] = []
    if numeric:
        parts.append(Base("m52", numeric))
    if categorical:
        parts.append(Base("cat", categorical))
    if not parts:
        return default_kernel(space)
    smooth = parts[0] if len(parts) == 1 else Product(tuple(parts))
    sizes = tuple(
        Feature((p.name,), "cat")
        for p in space.params
        if p.kind is not Kind.CATEGORICAL and 1 < len(p.values) <= MAX_CATEGORIES
    )
    return Sum((smooth, Base("cat", sizes))) if sizes else smooth


def default_kernel(space: Space) -> Kernel:
    """Matérn-5/2 with one length-scale per parameter, on min-max scaled raw values."""
    return Base("m52", raw_features(space))
