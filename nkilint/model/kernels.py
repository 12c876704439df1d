"""Which functions are device code.

* Roots: functions decorated by ``nki.jit`` (bare or called), ``nki.trace``,
  legacy ``nki.baremetal`` / ``benchmark`` / ``profile``, torch_neuronx
  ``nki_jit`` (also through module-level aliases such as
  ``nki_jit = nki.trace``), stacked with other decorators; and functions
  passed to ``nki.jit(f)``, ``nki.simulate(f)``, ``nki.simulate_kernel(f,
  ...)``, ``compile_kernel(f, ...)``, ``nki_call(f, ...)``, ``nki.execute(f,
  ...)`` and ``nki.multi_rank_execute/simulate(f, ...)``.
* Helpers reached from roots are found by the interpreter (inlined calls).
* Probable device code: other functions that call ``nki.language`` /
  ``nki.isa`` / ``nki.collectives`` ops or allocations, or take parameters
  annotated ``nl.ndarray`` / ``nt.tensor`` (library helpers whose roots live
  elsewhere). They are analysed with unknown inputs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .. import astwalk
from . import api_semantics as api
from .bindings import Bindings

ROOT_DECORATORS = {
    "nki.jit", "nki.trace", "nki.baremetal", "nki.benchmark", "nki.profile", "torch_neuronx.nki_jit",
}
LAUNCHERS = {
    "nki.jit", "nki.simulate", "nki.simulate_kernel", "nki.baremetal", "nki.benchmark", "nki.profile",
    "nki.trace", "torch_neuronx.nki_jit", "jax_neuronx.nki_call", "nki.compiler.kernel_builder.compile_kernel",
    # NKI 0.8 standalone execution
    "nki.execute", "nki.multi_rank_execute", "nki.multi_rank_simulate",
}
# Decorators that stack with a root decorator and do not change what the function is.
STACKED = {"nki.compiler.skip_middle_end_transformations", "nki.compiler.force_auto_alloc", "nki.compiler.enable_stack_allocator"}


@dataclass
class KernelCandidate:
    node: ast.FunctionDef
    kind: str  # root, probable
    how: str  # the decorator or launcher that makes it a root, or why it is probable
    decorator: ast.AST | None = None  # the decorator node (roots)
    class_name: str | None = None


def _callee(expr: ast.AST) -> ast.AST:
    return expr.func if isinstance(expr, ast.Call) else expr


def resolve_decorator(expr: ast.AST, bindings: Bindings, aliases: dict[str, str]) -> str | None:
    """Canonical name of a decorator, following ``nki_jit()`` factories and
    module-level aliases (``nki_jit = nki.trace``)."""
    target = _callee(expr)
    # nki_jit()(f) / @nki_jit() : the factory call itself.
    if isinstance(target, ast.Call):
        target = target.func
    qual = bindings.resolve(target)
    if qual is not None and (qual.is_nki or qual.name in ("torch_neuronx.nki_jit", "jax_neuronx.nki_call")):
        return qual.name
    if isinstance(target, ast.Name) and target.id in aliases:
        return aliases[target.id]
    if isinstance(target, ast.Attribute) and target.attr == "jit" and isinstance(target.value, ast.Name):
        # e.g. an alias module the bindings could not resolve (`_nki.jit`).
        name = target.value.id
        if name in aliases and aliases[name] == "nki":
            return "nki.jit"
    return None


def module_aliases(tree: ast.Module, bindings: Bindings) -> dict[str, str]:
    """Module-level names bound to NKI decorators or launchers."""
    out: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = _callee(stmt.value) if isinstance(stmt.value, ast.Call) else stmt.value
            qual = bindings.resolve(value)
            if qual is not None and (qual.name in ROOT_DECORATORS or qual.name in LAUNCHERS or qual.name == "nki"):
                out[stmt.targets[0].id] = qual.name
    return out


def _functions(tree: ast.Module, classes: dict[str, ast.ClassDef] | None = None) -> list[tuple[ast.FunctionDef, str | None]]:
    """Every function with the class it is a method of (if any); fills
    ``classes`` with the classes met on the way."""
    out: list[tuple[ast.FunctionDef, str | None]] = []

    def visit(body, cls: str | None) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((stmt, cls))
                visit(stmt.body, None)
            elif isinstance(stmt, ast.ClassDef):
                if classes is not None:
                    classes[stmt.name] = stmt
                visit(stmt.body, stmt.name)
            elif isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    block = getattr(stmt, field, None)
                    if block:
                        if field == "handlers":
                            for h in block:
                                visit(h.body, cls)
                        else:
                            visit(block, cls)

    visit(tree.body, None)
    return out


def uses_nki_device_api(func: ast.FunctionDef, bindings: Bindings) -> str | None:
    """Why a function looks like device code, or None."""
    for arg in func.args.args + func.args.kwonlyargs + func.args.posonlyargs:
        if arg.annotation is not None:
            ann = arg.annotation.value if isinstance(arg.annotation, ast.Subscript) else arg.annotation
            qual = bindings.resolve(ann)
            if qual is not None and qual.name in ("nki.language.ndarray", "nki.typing.tensor", "nki.typing.mutable_tensor", "nki.language.tile"):
                return f"parameter {arg.arg} is annotated {qual.name}"
    for node in astwalk.walk(func):
        if isinstance(node, ast.Call):
            qual = bindings.resolve(node.func)
            if qual is None or not qual.is_nki:
                continue
            info = api.classify(qual.name)
            if info is not None and info.kind in ("alloc", "dma", "compute", "matmul", "transpose"):
                return f"calls {qual.name}"
    return None


def _nki_object_classes(classes: dict[str, ast.ClassDef], bindings: Bindings) -> set[str]:
    """Classes deriving (directly or through a local class) from NKIObject."""
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, node in classes.items():
            if name in out:
                continue
            for base in node.bases:
                qual = bindings.resolve(base)
                if (qual is not None and qual.name.endswith("NKIObject")) or (isinstance(base, ast.Name) and base.id in out):
                    out.add(name)
                    changed = True
                    break
    return out


_LAUNCH_WORDS = ("jit", "simulate", "compile_kernel", "nki_call", "baremetal", "benchmark", "profile", "trace", "execute")


def find_kernels(
    tree: ast.Module, bindings: Bindings, text: str | None = None, nodes: list[ast.AST] | None = None
) -> list[KernelCandidate]:
    """Kernel roots (decorated or launched), helpers they call and probable
    kernels of one module. ``nodes`` is the tree's shared node list
    (``SourceFile.nodes``), so the launch-site scan does not walk it again."""
    aliases = module_aliases(tree, bindings)
    classes: dict[str, ast.ClassDef] = {}
    functions = _functions(tree, classes)
    by_name: dict[str, list[ast.FunctionDef]] = {}
    for fn, _ in functions:
        by_name.setdefault(fn.name, []).append(fn)
    roots: dict[int, KernelCandidate] = {}
    for fn, cls in functions:
        for deco in fn.decorator_list:
            name = resolve_decorator(deco, bindings, aliases)
            if name in ROOT_DECORATORS:
                roots[id(fn)] = KernelCandidate(fn, "root", f"@{name}", deco, cls)
                break
    # Launch forms: nki.jit(f), nki.simulate(f)(...), compile_kernel(f, ...).
    # Only files that import an NKI launcher can contain one.
    has_launcher = bool(aliases) or any(
        r.qual.is_nki or r.qual.name in ("torch_neuronx.nki_jit", "jax_neuronx.nki_call") for r in bindings.records
    )
    if has_launcher and text is not None:
        has_launcher = any(word + "(" in text for word in _LAUNCH_WORDS)
    for node in (nodes if nodes is not None else astwalk.walk(tree)) if has_launcher else ():
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = resolve_decorator(node.func, bindings, aliases)
        if name not in LAUNCHERS:
            continue
        first = node.args[0]
        if isinstance(first, ast.Name) and first.id in by_name:
            for fn in by_name[first.id]:
                if id(fn) not in roots:
                    roots[id(fn)] = KernelCandidate(fn, "root", f"{name}({first.id})", None)
    out: list[KernelCandidate] = list(roots.values())
    nki_object_classes = _nki_object_classes(classes, bindings)
    for fn, cls in functions:
        if id(fn) in roots:
            continue
        why = uses_nki_device_api(fn, bindings)
        if why is None and cls in nki_object_classes and fn.name != "__init__":
            why = f"method of NKIObject subclass {cls}"
        if why:
            out.append(KernelCandidate(fn, "probable", why, None, cls))
    out.sort(key=lambda k: (k.node.lineno, k.node.col_offset))
    return out


def module_kernels(info) -> list[KernelCandidate]:
    """``find_kernels`` of a project module (``ModuleInfo``), found once per
    module: the file's own analysis and the project's kernel index both ask."""
    found = info.__dict__.get("_kernel_candidates")
    if found is None:
        found = info._kernel_candidates = find_kernels(info.tree, info.bindings, info.source.text, info.source.nodes)
    return list(found)
