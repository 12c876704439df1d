"""Row softmax in Triton: the GPU original that softmax_port.py was ported
from (bundled for `nkilint review --example`, which reads it as text as
the reviewer's --original; it is never imported or run)."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols                      # the tail of a row that is not a power of two
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)                 # subtract the row maximum before exp
    num = tl.exp(x)
    den = tl.sum(num, axis=0)                 # accumulated in float32
    tl.store(out_ptr + row * out_stride + cols, num / den, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    rows, n_cols = x.shape
    out = torch.empty_like(x)
    block = triton.next_power_of_2(n_cols)
    softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=block, num_warps=4)
    return out
