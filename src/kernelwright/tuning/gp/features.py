"""Features: what a GP kernel sees of a config.

    Feature(("BLOCK_M",), "log2")              log2 of one size parameter, scaled to [0, 1]
    Feature(("block_size_x", "block_size_y"))  log2 of a product: threads per block, a tile's area
    Feature(("use_shmem",), "cat")             a category code, compared only for equality
    Feature(("tile_size_x",), "lin")           the raw value, min-max scaled to [0, 1]
    Feature(("block_size_x",), "pow2")         whether the value is a power of two (a category)

Scaling uses the range over the space's valid table, so a length-scale of 1 spans the space.
Products are what the GPU sees: resource limits (threads, registers, shared memory) bind on
products of block and tile sizes, so a short length-scale on ``log2(bx*by)`` is a cliff at an
occupancy limit, which no kernel on ``bx`` and ``by`` separately expresses with few data.
Whether a size is a power of two is a category of its own where a parameter takes both kinds of
value: a power of two divides the power-of-two extents of most problems and keeps loads aligned,
so on a GPU the sizes between (a block width of 48, 80 or 96) tend to be slow together, which a
model that sees each value as its own category learns only one value at a time.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from kernelwright.tuning.space import Kind, Space, is_pow2

Warp = Literal["lin", "log2", "cat", "pow2"]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True, order=True)
class Feature:
    """A derived coordinate: ``warp(product of params)``.

    Attributes:
        params: one name, or several whose product is the quantity.
        warp: ``"log2"`` (sizes), ``"lin"`` (raw, scaled), ``"cat"`` (category codes) or
            ``"pow2"`` (1 where the value is a power of two, else 0: a category code).
    """

    params: tuple[str, ...]
    warp: Warp = "log2"

    def __str__(self) -> str:
        body = "·".join(self.params)
        if self.warp == "log2":
            return f"log2({body})" if len(self.params) > 1 else f"log2 {body}"
        if self.warp == "pow2":
            return f"pow2? {body}"
        return body


@dataclass
class FeatureTable:
    """Columns of features over a space's valid table, computed once each (a pure memo).

    Attributes:
        space: the space whose ``table`` rows the columns follow.
    """

    space: Space
    _cache: dict[Feature, FloatArray] = field(default_factory=dict, repr=False)

    def column(self, feature: Feature) -> FloatArray:
        """`(N,)` values of ``feature``: in [0, 1] for lin/log2, integer codes for cat and
        pow2."""
        col = self._cache.get(feature)
        if col is None:
            col = self._compute(feature)
            self._cache[feature] = col
        return col

    def matrix(self, features: tuple[Feature, ...], rows: npt.NDArray[np.intp]) -> FloatArray:
        """`(len(rows), len(features))` feature values of the given rows."""
        if not features:
            return np.zeros((len(rows), 0))
        return np.stack([self.column(f)[rows] for f in features], axis=1)

    def _compute(self, feature: Feature) -> FloatArray:
        cols = [self.space.column(p) for p in feature.params]
        if feature.warp == "cat":
            keys = list(zip(*cols, strict=True))
            codes: dict[object, int] = {}
            return np.array([codes.setdefault(k, len(codes)) for k in keys], dtype=float)
        if feature.warp == "pow2":
            product = np.prod(np.stack([c.astype(float) for c in cols]), axis=0)
            return np.array([float(is_pow2(v)) for v in product.tolist()])
        value: FloatArray = np.ones(len(self.space))
        for name, c in zip(feature.params, cols, strict=True):
            value = value * self._numeric(name, c)
        if feature.warp == "log2":
            # Sizes are positive; a parameter with zeros (a stride, a flag) is shifted to 1.
            value = np.asarray(np.log2(value if value.min() > 0 else value - value.min() + 1.0))
        lo, hi = float(value.min()), float(value.max())
        return (value - lo) / (hi - lo) if hi > lo else np.zeros_like(value)

    def _numeric(self, name: str, col: npt.NDArray[np.generic]) -> FloatArray:
        param = self.space.params[self.space.names.index(name)]
        numeric = all(isinstance(v, int | float) for v in param.values)
        if param.kind is Kind.ORDINAL or not numeric:
            rank = {v: i + 1 for i, v in enumerate(param.values)}  # 1-based: log2 stays finite
            return np.array([rank[v] for v in col.tolist()], dtype=float)
        return col.astype(float)

    def varies(self, feature: Feature) -> bool:
        """Whether the feature takes more than one value over the table."""
        col = self.column(feature)
        return bool(col.max() > col.min())


def raw_features(space: Space) -> tuple[Feature, ...]:
    """Every non-constant parameter on a linear [0, 1] scale: what a default GP is given."""
    return tuple(Feature((p.name,), "lin") for p in space.params if len(p.values) > 1)


def structured_features(space: Space) -> tuple[tuple[Feature, ...], tuple[Feature, ...]]:
    """GPU-aware features: ``(numeric, categorical)``.

    numeric: each size parameter on its scale (log2 for pow2 and log-scaled ints, linear for other
    ints, rank for ordinals), plus log2 of every product the hardware constrains:

    - products of two or more parameters that appear in the space's restrictions or derived
      quantities (the author wrote a budget on them: threads, a tile, shared memory);
    - Kernel Tuner's dimension families ``<stem>_x, <stem>_y, <stem>_z`` (block_size_*,
      tile_size_*):
      threads per block and work per thread.

    categorical: each categorical parameter (flags, variants), compared by equality, and for
    each integer size that takes both powers of two and other values, whether it is a power of
    two.
    """
    numeric: list[Feature] = []
    categorical: list[Feature] = []
    table = FeatureTable(space)
    for p in space.params:
        if len(p.values) < 2:
            continue
        if p.kind is Kind.CATEGORICAL:
            categorical.append(Feature((p.name,), "cat"))
        else:
            numeric.append(Feature((p.name,), "log2" if p.on_log_scale else "lin"))
    sizes = {p.name for p in space.params if p.kind is not Kind.CATEGORICAL and len(p.values) > 1}
    sizes |= {
        p.name
        for p in space.params
        if len(p.values) > 1 and all(isinstance(v, int) and v > 0 for v in p.values)
    }
    products: list[tuple[str, ...]] = []
    for text in (*space.restrictions, *space.derived.values()):
        products.extend(_products_in(text, sizes))
    families: dict[str, list[str]] = {}
    for name in space.names:
        m = re.fullmatch(r"(.+)_([xyz])", name)
        if m and name in sizes:
            families.setdefault(m.group(1), []).append(name)
    products.extend(tuple(sorted(v)) for v in families.values() if len(v) > 1)
    for name in sorted(sizes, key=space.names.index):
        param = space.params[space.names.index(name)]
        if param.kind is not Kind.CATEGORICAL:
            aligned = Feature((name,), "pow2")
            if table.varies(aligned):
                categorical.append(aligned)
    seen = {f.params for f in numeric}
    for prod in products:
        key = tuple(sorted(set(prod)))
        if len(key) < 2 or key in seen:
            continue
        seen.add(key)
        f = Feature(key, "log2")
        if table.varies(f):
            numeric.append(f)
    return tuple(numeric), tuple(categorical)


def _products_in(text: str, sizes: set[str]) -> list[tuple[str, ...]]:
    """Products of >= 2 size-parameter names in an expression (``a * b``, ``(a * b * c)``)."""
    out: list[tuple[str, ...]] = []
    tree = ast.parse(text, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            names = _factor_names(node)
            if names is not None:
                names = [n for n in names if n in sizes]
                if len(set(names)) >= 2:
                    out.append(tuple(sorted(set(names))))
    return out


def _factor_names(node: ast.expr) -> list[str] | None:
    """Names multiplied together in ``node`` (constants skipped); None if it is not a product."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _factor_names(node.left), _factor_names(node.right)
        if left is None or right is None:
            return None
        return left + right
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Constant):
        return []
    return None
