"""Output formats. Each reporter turns a finished Run into text."""

from __future__ import annotations

FORMATS = ("text", "concise", "json", "sarif", "github", "gitlab", "junit")
