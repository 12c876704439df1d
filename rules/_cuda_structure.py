"""Names the numerics family still imports from the cuda family's former
helper module; the cuda family itself is the package ``rules/cuda``.
Delete this module once the numerics family is converted (issue 19)."""

from __future__ import annotations

from nkilint.model.graph import Site  # noqa: F401 - re-exported

from .cuda._base import nki_name, other_name  # noqa: F401 - re-exported
