"""The semantics rules' view of the model's scope and expression facts.

A thin adapter over ``nkilint.model.scopes`` and ``nkilint.model.exprs``
(the per-file analyses that answer which definitions reach a name and what
an expression holds), kept while the semantics rules move to the model
APIs.
"""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.model import query as q
from nkilint.model.exprs import MGRID_ATTRS, META_ATTRS, VIEW_METHODS, ExprFacts, short_text
from nkilint.model.exprs import TENSOR_ARGUMENT_PARAMS as TENSOR_PARAMS
from nkilint.model.scopes import COMPREHENSIONS, SCOPE_NODES, Def as Binding, Scope, Scopes
from nkilint.model.semantic import FileModel, Kernel


class FileFacts:
    """Per-file facts shared by the semantics rules (the model's analyses)."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.model: FileModel = ctx.model
        self.tree: ast.Module = self.model.module.tree
        self.bindings = self.model.bindings
        self._scopes: Scopes = ctx.analysis(Scopes)
        self._exprs: ExprFacts = ctx.analysis(ExprFacts)
        self.parents: dict[int, ast.AST] = self._scopes.file.parents
        self.produced = self._exprs.produced
        self.param_tensors = self._exprs.param_tensors

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._scopes.parent(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        return self._scopes.ancestors(node)

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        return self._scopes.enclosing_function(node)

    def functions(self) -> list[ast.AST]:
        return self._scopes.functions()

    def device_functions(self) -> list[ast.AST]:
        return [f for f in self.functions() if self.model.is_device_function(f)]

    def root_kernel(self, fn: ast.AST) -> Kernel | None:
        return self._exprs.root_kernel(fn)

    def own_nodes(self, fn: ast.AST) -> Iterator[ast.AST]:
        return self._scopes.own_nodes(fn)

    def scope(self, fn: ast.AST) -> Scope:
        return self._scopes.of(fn)

    def produced_by(self, expr: ast.AST) -> list[q.NodeRef]:
        return self._exprs.refs(expr)

    def is_alloc_call(self, expr: ast.AST) -> bool:
        return self._exprs.is_alloc_call(expr)

    def is_tensor_expr(self, fn: ast.AST, expr: ast.AST | None) -> bool:
        return self._exprs.is_tensor(fn, expr)

    def is_tensor_name(self, fn: ast.AST, name: str) -> bool:
        return self._exprs.is_tensor_name(fn, name)

    def tensor_param(self, fn: ast.AST, name: str) -> list[q.NodeRef]:
        return self._exprs.param_refs(fn, name)

    def tensor_args(self, call: ast.Call, api: str) -> list[ast.AST]:
        return self._exprs.tensor_args(call, api)

    def param_used_as_tensor(self, fn: ast.AST, name: str) -> bool:
        return self._exprs.param_used_as_tensor(fn, name)

    def tensor_value(self, fn: ast.AST, expr: ast.AST) -> str | None:
        held = self._exprs.holds(fn, expr)
        return held.value if held is not None else None

    def tensor_refs(self, fn: ast.AST, expr: ast.AST) -> list[q.NodeRef]:
        return self._exprs.tensor_refs(fn, expr)

    def is_index_source(self, expr: ast.AST) -> bool:
        return self._exprs.is_index_source(expr)

    def index_value(self, fn: ast.AST, expr: ast.AST) -> bool:
        return self._exprs.is_index(fn, expr)

    def is_index_name(self, fn: ast.AST, name: str) -> bool:
        return self._exprs.is_index_name(fn, name)

    def index_origin(self, fn: ast.AST, name: str) -> str | None:
        return self._exprs.index_origin(fn, name)

    def loop_kind(self, node: ast.For) -> str | None:
        return self._exprs.loop_kind(node)

    def span_text(self, node: ast.AST) -> str:
        return short_text(node)


def facts(ctx: RuleContext) -> FileFacts:
    """The facts of the file a rule is checking (shared by all NKI7xx rules)."""
    return ctx.analysis(_FileFactsAnalysis).facts(ctx)


class _FileFactsAnalysis:
    def __init__(self, model: FileModel) -> None:
        self._facts: FileFacts | None = None

    def facts(self, ctx: RuleContext) -> FileFacts:
        if self._facts is None:
            self._facts = FileFacts(ctx)
        return self._facts


__all__ = ["Binding", "COMPREHENSIONS", "FileFacts", "META_ATTRS", "MGRID_ATTRS", "SCOPE_NODES", "TENSOR_PARAMS",
           "VIEW_METHODS", "facts"]
