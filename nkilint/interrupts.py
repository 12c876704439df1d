"""Ctrl-C that surfaces as another exception.

A KeyboardInterrupt raised inside a library's ``with`` block can be replaced
by the error its clean-up then raises: libcst's position provider, stopped
half-way through code generation, raises ``KeyError`` from its ``finally``,
and the interrupt survives only as that error's ``__context__``. Such an
error is the user's Ctrl-C, not a crashed rule or a bug in nkilint.
"""

from __future__ import annotations


def caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt is in the exception's cause/context chain."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


__all__ = ["caused_by_interrupt"]
