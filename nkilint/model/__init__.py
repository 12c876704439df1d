"""The NKI semantic model: bindings, kernels, abstract values, kernel graphs."""
