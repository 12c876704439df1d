"""nkilint: a static analyzer for NKI (Neuron Kernel Interface) kernels.

It reads kernel source (never imports or runs it) and reports partition and
memory violations, missing double-buffering, CUDA/Triton leftovers, numerics
hazards, API changes between NKI versions and other compiler-frontend errors.
"""

__version__ = "0.1.0"
