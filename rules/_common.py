"""Small helpers shared by the built-in rule modules."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level, Span
from nkilint.model.graph import Site


class Reporter:
    """Reports graph-based findings once per (span, message), in this file.

    A kernel may reach the same helper several times (and the same site
    through different call chains); a node that lives in another module is
    reported at the call in this file that led to it.
    """

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.seen: set[tuple] = set()

    def at_site(self, site: Site | None, message: str, **kwargs) -> bool:
        model = self.ctx.model
        node = model.report_node(site)
        if node is None:
            return False
        if site is not None and not model.in_this_file(site):
            if model.in_linted_tree(site.file):
                # The callee's file is checked too: the fault is reported
                # there, once, at the place that must change.
                return False
            message, kwargs["related"] = reached_through(self.ctx, site, message, kwargs.get("related"))
        return self.at(node, message, **kwargs)

    def at(self, where: ast.AST | Span, message: str, **kwargs) -> bool:
        span = self.ctx.span_of(where)
        level = kwargs.get("level")
        key = (span, message, level)
        if key in self.seen:
            return False
        # The same place with the same message at a lower level is noise.
        for other in list(self.seen):
            if other[0] == span and other[1] == message:
                return False
        self.seen.add(key)
        self.ctx.report(span, message, **kwargs)
        return True


def reached_through(ctx: RuleContext, site: Site, message: str, related: list | None) -> tuple[str, list]:
    """A finding reported at the call that reaches ``site`` in another
    module: the message names the callee's ``path:line`` and the callee's
    place becomes a related location (paths as reports show them)."""
    where = ctx.model.display_path(site.file)
    return (f"{message} (in {where}:{site.line}, reached from here)",
            list(related or []) + [related_site(site, where)])


def related_site(site: Site, path: str) -> tuple[Span, str, str]:
    """A related location for ``site``, shown with ``path``."""
    node = site.node
    line = getattr(node, "lineno", 1) or 1
    col = getattr(node, "col_offset", 0) + 1
    end_line = getattr(node, "end_lineno", None) or line
    end_col = (getattr(node, "end_col_offset", None) or col) + 1
    if (end_line, end_col) <= (line, col):
        end_line, end_col = line, col + 1
    return (Span(line, col, end_line, end_col), "the construct this finding is about, in a helper the call reaches",
            path)


def error_or_warning(always: bool) -> Level:
    """Error when the violation holds for every value the code allows."""
    return Level.ERROR if always else Level.WARNING
