"""Pipeline family (NKI3xx): missing double-buffering and legal-but-slow patterns."""

from __future__ import annotations
