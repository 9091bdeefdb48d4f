"""Kernel templates: one generator per schedule, each rendering Triton source text.

emitter.py          the body printer: a group's values as statements over index groups
pointwise.py        element-wise chains (flat, or rows x contiguous columns)
reduction.py        row/column reductions: one pass and looped sweeps (+ accumulate.py,
                    passes.py for the online-softmax and Welford folds, split.py for the
                    two-stage split); reduction_launch.py renders their wrappers
scan.py             cumulative sums and products (row or column walk, reverse)
pool.py             max and average pooling in 1, 2 and 3 dimensions
select.py           top-k of rows in registers with its prologue and epilogue (k rounds)
common.py           the rendered record, sizes from runtime tensors, allocation, launches
"""
