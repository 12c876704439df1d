"""Bundled example kernels (``nkilint check --example``)."""
