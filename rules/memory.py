"""Memory family (NKI2xx): PSUM and SBUF capacity, operand placement."""

from __future__ import annotations
