"""What every kernel family's templates share (the families are ``design/families/``).

emitter.py          the body printer: a group's values as statements over index groups
expr.py             Triton expression printing: each pointwise operator, literals, helpers
common.py           the rendered record, sizes from runtime tensors, allocation, launches
"""
