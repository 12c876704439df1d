"""Row softmax, ported from a Triton kernel to NKI by hand (bundled example).

The port still carries GPU habits. `nkilint check --example` reports them;
the comments say what each finding is about.
"""
import math

import neuronxcc.nki as nki                # legacy namespace (NKI 0.1)
import neuronxcc.nki.language as nl

BLOCK_SIZE = 256                           # Triton block size kept as the tile height


@nki.jit
def softmax_kernel(x, num_warps=4):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(math.ceil(rows / BLOCK_SIZE)):
        # 256 rows on the partition dimension: SBUF has 128 partitions.
        tile = nl.load(x[i * BLOCK_SIZE:(i + 1) * BLOCK_SIZE, :])
        # The row maximum is never subtracted before exp (overflow in bf16/fp16).
        num = nl.exp(tile)
        den = nl.sum(num, axis=1, dtype=nl.bfloat16)   # low-precision accumulation
        nl.store(out[i * BLOCK_SIZE:(i + 1) * BLOCK_SIZE, :], value=num / den)
    return out
