"""Verification of the TensorEngine (cores/tensor_engine/): a stand-alone
cocotb top, a memory model of the PCORE array, random instructions and the
comparison with the reference executor."""
