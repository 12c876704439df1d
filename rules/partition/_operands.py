"""Which operands of an instruction must cover the same partitions (NKI104, NKI111)."""

from __future__ import annotations

# Operands of an ISA instruction that must span the same partitions: every
# listed tensor argument (per-partition scalars such as bias / operand0 are
# (P, 1) tiles with the same P). Sources: the nki.isa stubs, legacy
# err_num_partition_mismatch.
SAME_PARTITIONS = {
    "tensor_tensor": ("dst", "data1", "data2"),
    "tensor_scalar": ("dst", "data", "operand0", "operand1"),
    "tensor_copy": ("dst", "src"),
    "tensor_copy_predicated": ("dst", "src", "predicate"),
    "activation": ("dst", "data", "bias", "scale", "reduce_res"),
    "activation_reduce": ("dst", "data", "bias", "scale", "reduce_res"),
    "tensor_reduce": ("dst", "data"),
    "tensor_tensor_scan": ("dst", "data0", "data1", "initial"),
    "scalar_tensor_tensor": ("dst", "data", "operand0", "operand1"),
    "tensor_scalar_reduce": ("dst", "data", "operand0", "reduce_res"),
    "tensor_scalar_cumulative": ("dst", "src", "imm0", "imm1"),
    "reciprocal": ("dst", "data"),
    "exponential": ("dst", "src", "max_value", "reduce_res"),
    "dropout": ("dst", "data", "prob"),
    "bn_stats": ("dst", "data"),
    "bn_aggr": ("dst", "data"),
}
