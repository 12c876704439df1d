"""The GPU names in a file: the cuda family's per-file analysis.

Every maximal name / attribute chain of the file that means a CUDA, Triton
or GPU-runtime construct (resolved through the file's imports, or an
unbound identifier pasted from CUDA C), with where it sits (callee,
annotation, decorator, dtype argument) and the device function that owns
it (``DeviceCode``). Hits in device code and in host code are kept apart:
most rules read only the first.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from nkilint import astwalk
from nkilint.model.analysis import Analysis
from nkilint.model.bindings import Gen
from nkilint.model.device import DeviceCode
from nkilint.model.scopes import Scopes

from . import _names as gn

if TYPE_CHECKING:  # pragma: no cover
    from nkilint.model.semantic import FileModel

_BUILTINS = frozenset(dir(builtins))


@dataclass
class NameHit:
    node: ast.AST  # the Name / Attribute chain
    gpu: gn.GpuName
    function: ast.FunctionDef | None  # enclosing device function (None: host code)
    role: str  # call, annotation, decorator, dtype, argument, value
    bare: bool = False  # an unbound identifier (no import)
    call: ast.Call | None = None  # the call when the chain is its callee


class GpuNames(Analysis):
    """GPU names of the checked file, in device and in host code."""

    def __init__(self, model: "FileModel") -> None:
        super().__init__(model)
        index = model.analysis(Scopes).file
        device = model.analysis(DeviceCode)
        self.bindings = model.bindings
        nodes = index.nodes
        parents = index.parents
        # Every identifier the file binds: such a name is never a pasted CUDA identifier.
        self.bound: set[str] = bound_names(nodes) | set(model.bindings.names)
        self.hits: list[NameHit] = []
        self.host_hits: list[NameHit] = []
        annotations, decorators = _annotations_and_decorators(nodes)
        for node in nodes:
            if not is_maximal_chain(node, parents):
                continue
            gpu, bare = self.classify(node)
            if gpu is None:
                continue
            parent = parents.get(id(node))
            call = parent if isinstance(parent, ast.Call) and parent.func is node else None
            hit = NameHit(node, gpu, device.owner(node), _role(node, parent, annotations, decorators), bare, call)
            (self.hits if device.contains(node) else self.host_hits).append(hit)

    def classify(self, node: ast.AST) -> tuple[gn.GpuName | None, bool]:
        """What a maximal Name/Attribute chain means (a GPU name or None),
        and whether it is an unbound pasted identifier."""
        qual = self.bindings.resolve(node)
        if qual is not None:
            if qual.gen is not Gen.OTHER:
                return None, False
            return gn.classify_qual(qual.name), False
        root = chain_root(node)
        if isinstance(root, ast.Name) and root.id not in self.bound and root.id not in _BUILTINS:
            return gn.classify_bare(root.id), True
        return None, False

    def hits_of(self, *categories: str) -> Iterator[NameHit]:
        """Hits in device code of the given categories, in walk order."""
        return (hit for hit in self.hits if hit.gpu.category in categories)

    def host_hits_of(self, *categories: str) -> Iterator[NameHit]:
        """Hits in host code of the given categories, in walk order."""
        return (hit for hit in self.host_hits if hit.gpu.category in categories)


# The node types bound_names reads; a node of any other class binds nothing
# (decided once per class: most nodes of a file are loads, calls, constants).
_BINDING_TYPES = (ast.Name, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.arg, ast.Import, ast.ImportFrom,
                  ast.Global, ast.Nonlocal, ast.ExceptHandler)
_BINDS_NOTHING: dict[type, bool] = {}


def bound_names(nodes: list[ast.AST]) -> set[str]:
    """Every identifier bound anywhere among the nodes (assignments,
    parameters, definitions, imports, global declarations, handlers)."""
    out: set[str] = set()
    plain_classes = _BINDS_NOTHING
    for node in nodes:
        cls = node.__class__
        plain = plain_classes.get(cls)
        if plain is None:
            plain = plain_classes[cls] = not issubclass(cls, _BINDING_TYPES)
        if plain:
            continue
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


def chain_text(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain ('' for anything else)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def is_maximal_chain(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """A Name/Attribute chain that is not the ``.value`` of a longer chain."""
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return False
    if not isinstance(chain_root(node), ast.Name):
        return False
    parent = parents.get(id(node))
    return not (isinstance(parent, ast.Attribute) and parent.value is node)


def _annotations_and_decorators(nodes: list[ast.AST]) -> tuple[set[int], set[int]]:
    """Ids of every node inside an annotation, and of every decorator (its
    callee when the decorator is a call)."""
    annotations: set[int] = set()
    decorators: set[int] = set()
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            anns = [a.annotation for a in args.args + args.kwonlyargs + args.posonlyargs if a.annotation is not None]
            if args.vararg is not None and args.vararg.annotation is not None:
                anns.append(args.vararg.annotation)
            if node.returns is not None:
                anns.append(node.returns)
            annotations |= {id(sub) for ann in anns for sub in astwalk.walk(ann)}
            decorators |= {id(d) if not isinstance(d, ast.Call) else id(d.func) for d in node.decorator_list}
        if isinstance(node, ast.AnnAssign):
            annotations |= {id(sub) for sub in astwalk.walk(node.annotation)}
    return annotations, decorators


def _role(node: ast.AST, parent: ast.AST | None, annotations: set[int], decorators: set[int]) -> str:
    if id(node) in decorators:
        return "decorator"
    if id(node) in annotations:
        return "annotation"
    if isinstance(parent, ast.Call) and parent.func is node:
        return "call"
    if isinstance(parent, ast.keyword) and parent.arg == "dtype":
        return "dtype"
    if isinstance(parent, ast.Call) and node in parent.args:
        return "argument"
    return "value"
