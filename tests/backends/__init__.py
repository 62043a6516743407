"""The backends: reference interpreter, codegen, fused kernels, the cost model."""
