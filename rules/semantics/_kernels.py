"""Kernel entry points as the frontend sees them: the root kernels of the
file and their parameters, `nt.mutable_tensor` annotations, what a return
statement returns, `experimental_flags`, and calls of functions decorated
as kernels (NKI706-NKI708, NKI720, NKI721)."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.model.bindings import Bindings
from nkilint.model.kernels import ROOT_DECORATORS, module_aliases, resolve_decorator
from nkilint.model.scopes import Scopes
from nkilint.model.semantic import FileModel, Kernel
from nkilint.model.values import FuncV


def root_kernels(model: FileModel, scopes: Scopes) -> Iterator[tuple[Kernel, ast.FunctionDef]]:
    """(kernel, function node) of the root kernels defined in this file."""
    own = {id(fn) for fn in scopes.functions()}
    for kernel in model.kernels:
        if kernel.kind == "root" and id(kernel.node) in own:
            yield kernel, kernel.node


def kernel_args(fn: ast.FunctionDef) -> list[ast.arg]:
    """Named parameters of a kernel (positional-only, regular, keyword-only)."""
    a = fn.args
    return list(a.posonlyargs) + list(a.args) + list(a.kwonlyargs)


def is_mutable_annotation(bindings: Bindings, ann: ast.AST | None) -> bool:
    """``nt.mutable_tensor`` (or ``nt.mutable_tensor[...]``)."""
    if ann is None:
        return False
    base = ann.value if isinstance(ann, ast.Subscript) else ann
    qual = bindings.resolve_nki(base)
    return qual is not None and qual.name == "nki.typing.mutable_tensor"


def experimental_flag(decorator: ast.AST | None, flag: str) -> bool:
    """@nki.jit(experimental_flags='enable-mutable-parameter, ...') names the flag."""
    if not isinstance(decorator, ast.Call):
        return False
    for kw in decorator.keywords:
        if kw.arg == "experimental_flags" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            return flag in {x.strip() for x in kw.value.value.split(",")}
    return False


def returned_names(ret: ast.Return) -> set[str]:
    """Names a return statement returns (itself or as tuple/list items)."""
    value = ret.value
    if value is None:
        return set()
    items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    return {x.id for x in items if isinstance(x, ast.Name)}


def decorated_kernel(model: FileModel, scopes: Scopes, fn: ast.AST, callee: ast.AST) -> tuple[FuncV, str] | None:
    """(function value, decorator) of a callee decorated as a kernel
    (nki.jit, trace, ...), resolved through this module's names or its
    imports; None for local names and undecorated functions."""
    if not isinstance(callee, ast.Name):
        return None
    if scopes.of(fn).owner(callee.id) is not None:
        return None  # a local name (parameter, nested def, assignment)
    value = (model.module.env or {}).get(callee.id)
    if not isinstance(value, FuncV) or not isinstance(value.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    module = value.module
    aliases = module_aliases(module.tree, module.bindings)
    for deco in value.node.decorator_list:
        name = resolve_decorator(deco, module.bindings, aliases)
        if name in ROOT_DECORATORS:
            return value, name
    return None
