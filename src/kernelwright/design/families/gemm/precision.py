"""The math of a GEMM under each precision policy, chosen at run time and never lowered silently.

    policy   operands   tl.dot input precision            accuracy
    fp32     fp32       tf32x3 (FP32_MATH 0) or ieee (1)  fp32: three TF32 products (the small
                                                          parts' product dropped) or CUDA-core
                                                          FMAs
    tf32     fp32       tf32                              TF32 products (the caller allowed it)
    bf16     bf16       (none: bf16 tensor cores)         bf16 products, exact in fp32
    all                 fp32 accumulation

The vendor path (``gemm-vendor``) leaves the product to PyTorch, so to cuBLAS under the same
policy: IEEE fp32 on CUDA cores under fp32, TF32 tensor cores under tf32, bf16 tensor cores
(the product rounded to bf16, as PyTorch's own is) under bf16; its epilogue computes in fp32.

The wrapper reads the policy from the operands' dtype and ``torch.backends.cuda.matmul.allow_tf32``
(which the tf32 policy sets and the fp32 policy clears), so one file is honest under every
policy; the file's header, the wrapper's docstring and the optimize report name the math.
"""

from __future__ import annotations

FP32_MATH = {0: "tf32x3", 1: "ieee"}

FP32_NOTES = {
    "tf32x3": "as 3xTF32 (tl.dot input_precision='tf32x3': three TF32 tensor-core products, "
    "fp32 accuracy)",
    "ieee": "in IEEE fp32 (tl.dot input_precision='ieee': CUDA-core FMAs)",
}


def math_note(fp32_math: str) -> str:
    """The math of every policy, for a file whose fp32 operands take ``fp32_math``."""
    return (
        f"math: fp32 operands {FP32_NOTES[fp32_math]}, or TF32 where the caller allowed it "
        "(torch.backends.cuda.matmul.allow_tf32); bf16/fp16 operands on tensor cores; fp32 "
        "accumulation throughout"
    )


VENDOR_NOTE = (
    "math: PyTorch's matrix product (cuBLAS) under the caller's policy: IEEE fp32, TF32 where "
    "the caller allowed it (torch.backends.cuda.matmul.allow_tf32), bf16/fp16 on tensor cores; "
    "the epilogue in fp32"
)

VENDOR_MATH = {
    "fp32": "cuBLAS IEEE fp32 (PyTorch's matrix product), the epilogue in fp32",
    "tf32": "cuBLAS TF32 tensor-core products (PyTorch's matrix product under the policy), "
    "the epilogue in fp32",
    "bf16": "cuBLAS bf16 tensor-core products (PyTorch's matrix product, rounded to bf16), "
    "the epilogue in fp32",
}


def math_under(policy: str, fp32_math: int = 0, variant: str = "tiled") -> str:
    """The math a GEMM group's kernels use under ``policy`` (fp32, tf32, bf16) with
    ``FP32_MATH``, for its ``variant`` (``vendor``: PyTorch's product)."""
    if variant == "vendor":
        return VENDOR_MATH[policy]
    if policy == "tf32":
        return "TF32 tensor-core products (tl.dot input_precision='tf32'), fp32 accumulation"
    if policy == "bf16":
        return "bf16 tensor-core products, fp32 accumulation"
    if FP32_MATH.get(fp32_math, "tf32x3") == "ieee":
        return "IEEE fp32 (tl.dot input_precision='ieee': CUDA-core FMAs)"
    return "3xTF32 (tl.dot input_precision='tf32x3': three TF32 products, fp32 accuracy)"
