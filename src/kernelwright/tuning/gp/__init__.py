"""The GP surrogate, one module per concept: features -> kernels -> model -> loo / acquisition."""
