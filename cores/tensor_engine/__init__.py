"""The TensorEngine: executes the MCORE's tensor instructions (docs/tensor_engine.md)."""
