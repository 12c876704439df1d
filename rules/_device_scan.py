"""One syntactic pass over a file for the cuda family: device code, GPU names.

Device code is every function the semantic model treats as a kernel or
reached from one (``ctx.model.is_device_function``); everything else in
the file is host code. The pass finds every maximal name / attribute chain
in device code that means a CUDA, Triton or GPU-runtime construct (resolved
through the file's imports, or an unbound identifier pasted from CUDA C)
and records where it sits (callee, annotation, decorator, dtype argument).
The result is computed once per file and shared by the rules.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.model.bindings import Gen
from nkilint.model.device import DeviceCode

from . import _gpu_names as gn

_BUILTINS = set(dir(builtins))


@dataclass
class NameHit:
    node: ast.AST  # the Name / Attribute chain
    gpu: gn.GpuName
    function: ast.FunctionDef | None  # enclosing device function (None: host code)
    role: str  # call, annotation, decorator, dtype, value
    bare: bool = False  # an unbound identifier (no import)
    call: ast.Call | None = None  # the call when the chain is its callee


@dataclass
class FileScan:
    device_functions: list[ast.FunctionDef] = field(default_factory=list)
    device_node_ids: set[int] = field(default_factory=set)
    parents: dict[int, ast.AST] = field(default_factory=dict)
    hits: list[NameHit] = field(default_factory=list)
    host_hits: list[NameHit] = field(default_factory=list)
    bound: set[str] = field(default_factory=set)
    owner: dict[int, ast.FunctionDef] = field(default_factory=dict)  # node id -> device function
    all_nodes: list[ast.AST] = field(default_factory=list)  # every node of the file, walk order
    _fn_nodes: dict[int, list[ast.AST]] = field(default_factory=dict)

    def nodes(self, fn: ast.AST) -> list[ast.AST]:
        """The nodes of a subtree (cached: detectors walk device functions often)."""
        cached = self._fn_nodes.get(id(fn))
        if cached is None:
            cached = list(ast.walk(fn))
            self._fn_nodes[id(fn)] = cached
        return cached

    @property
    def device_nodes(self) -> Iterator[ast.AST]:
        for fn in self.device_functions:
            yield from self.nodes(fn)

    def in_device(self, node: ast.AST) -> bool:
        return id(node) in self.device_node_ids

    def function_of(self, node: ast.AST) -> ast.FunctionDef | None:
        return self.owner.get(id(node))

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def of(self, *categories: str) -> Iterator[NameHit]:
        for hit in self.hits:
            if hit.gpu.category in categories:
                yield hit

    def host_of(self, *categories: str) -> Iterator[NameHit]:
        for hit in self.host_hits:
            if hit.gpu.category in categories:
                yield hit


def scan(ctx: RuleContext) -> FileScan:
    """The scan of ctx's file (computed once, shared by every rule)."""
    return ctx.analysis(_ScanAnalysis).get(ctx)


class _ScanAnalysis:
    def __init__(self, model) -> None:
        self._scan: FileScan | None = None

    def get(self, ctx: RuleContext) -> FileScan:
        if self._scan is None:
            self._scan = _scan(ctx)
        return self._scan


def docstring_node(fn: ast.AST) -> ast.Constant | None:
    body = getattr(fn, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
        body[0].value.value, str
    ):
        return body[0].value
    return None


def bound_names(nodes: list[ast.AST]) -> set[str]:
    """Every identifier the file binds anywhere (assignments, parameters,
    definitions, imports): such a name is never a pasted CUDA identifier."""
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                out.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
    return out


def chain_root(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def is_maximal_chain(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """A Name/Attribute chain that is not the ``.value`` of a longer chain."""
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return False
    if not isinstance(chain_root(node), ast.Name):
        return False
    parent = parents.get(id(node))
    return not (isinstance(parent, ast.Attribute) and parent.value is node)


def _role(node: ast.AST, parents: dict[int, ast.AST], annotations: set[int], decorators: set[int]) -> str:
    if id(node) in decorators:
        return "decorator"
    if id(node) in annotations:
        return "annotation"
    parent = parents.get(id(node))
    if isinstance(parent, ast.Call) and parent.func is node:
        return "call"
    if isinstance(parent, ast.keyword) and parent.arg == "dtype":
        return "dtype"
    if isinstance(parent, ast.Call) and node in parent.args:
        return "argument"
    return "value"


def _subtree_ids(nodes: list[ast.AST]) -> set[int]:
    out: set[int] = set()
    for n in nodes:
        for sub in ast.walk(n):
            out.add(id(sub))
    return out


def _scan(ctx: RuleContext) -> FileScan:
    model = ctx.model
    bindings = model.bindings
    device = ctx.analysis(DeviceCode)
    result = FileScan()
    # The node list and parent map are the file's, shared with other rules.
    result.all_nodes = device.index.nodes
    result.parents = device.index.parents
    result.bound = bound_names(result.all_nodes) | set(bindings.names)
    result.device_functions = device.outermost
    result.device_node_ids = set(device._owner)
    result.owner = device._owner
    result._fn_nodes = device.index._walked
    annotations: set[int] = set()
    decorators: set[int] = set()
    docstrings: set[int] = set()
    for node in result.all_nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            anns = [a.annotation for a in args.args + args.kwonlyargs + args.posonlyargs if a.annotation is not None]
            if args.vararg is not None and args.vararg.annotation is not None:
                anns.append(args.vararg.annotation)
            if node.returns is not None:
                anns.append(node.returns)
            annotations |= _subtree_ids(anns)
            decorators |= {id(d) if not isinstance(d, ast.Call) else id(d.func) for d in node.decorator_list}
        if isinstance(node, ast.AnnAssign):
            annotations |= _subtree_ids([node.annotation])
        doc = docstring_node(node) if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None
        if doc is not None:
            docstrings.add(id(doc))
    for node in result.all_nodes:
        if not is_maximal_chain(node, result.parents):
            continue
        gpu, bare = classify_chain(node, bindings, result.bound)
        if gpu is None:
            continue
        role = _role(node, result.parents, annotations, decorators)
        fn = result.owner.get(id(node))
        parent = result.parents.get(id(node))
        call = parent if isinstance(parent, ast.Call) and parent.func is node else None
        hit = NameHit(node, gpu, fn, role, bare, call)
        if result.in_device(node):
            result.hits.append(hit)
        else:
            result.host_hits.append(hit)
    return result


def classify_chain(node: ast.AST, bindings, bound: set[str]) -> tuple[gn.GpuName | None, bool]:
    """What a maximal Name/Attribute chain means (GPU name or None), and
    whether it is an unbound pasted identifier."""
    qual = bindings.resolve(node)
    if qual is not None:
        if qual.gen is not Gen.OTHER:
            return None, False
        return gn.classify_qual(qual.name), False
    root = chain_root(node)
    if isinstance(root, ast.Name) and root.id not in bound and root.id not in _BUILTINS:
        return gn.classify_bare(root.id), True
    return None, False


def chain_text(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def function_label(fn: ast.FunctionDef | None) -> str:
    return f"kernel code ({fn.name})" if fn is not None else "host code"
