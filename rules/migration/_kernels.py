"""Kernel interfaces the migration rules check: what a launch refers to, and
which returned tensors a host-launched kernel allocates outside shared HBM."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from nkilint import astwalk
from nkilint.model.analysis import Analysis
from nkilint.model.bindings import Gen
from nkilint.model.kernels import ROOT_DECORATORS, module_aliases, resolve_decorator
from nkilint.versions import V0_3

from ._index import NameIndex


ALLOC_APIS = {
    "nki.language." + n for n in (
        "ndarray", "zeros", "ones", "full", "empty", "rand", "random", "zeros_like", "ones_like", "empty_like",
        "full_like", "shared_constant", "shared_identity_matrix",
    )
}


@dataclass(frozen=True)
class ReturnedTensor:
    """A tensor a root kernel returns, allocated in HBM that is not shared."""

    kernel: ast.FunctionDef
    gen: Gen
    name: str
    buffer: ast.AST  # the buffer= value
    kind: str  # hbm, private_hbm


class KernelOutputs(Analysis):
    """Returned tensors of the file's root kernels allocated in ``hbm`` or
    ``private_hbm`` (from NKI 0.3 they must be in ``shared_hbm``)."""

    def __init__(self, model) -> None:
        super().__init__(model)
        index = model.analysis(NameIndex)
        self.items: list[ReturnedTensor] = []
        if index.version >= V0_3:
            for fn, gen in index.roots.items():
                self.items.extend(_returned_outside_shared_hbm(index, fn, gen))
        self.buffer_nodes = {id(t.buffer) for t in self.items}


def _returned_outside_shared_hbm(index: NameIndex, fn: ast.FunctionDef, gen: Gen) -> list[ReturnedTensor]:
    out: list[ReturnedTensor] = []
    body_nodes = [n for n in astwalk.walk(fn) if index.function_of(n) is fn]
    returned: set[str] = set()
    for n in body_nodes:
        if isinstance(n, ast.Return) and n.value is not None:
            values = n.value.elts if isinstance(n.value, ast.Tuple) else [n.value]
            returned |= {v.id for v in values if isinstance(v, ast.Name)}
    if not returned:
        return out
    allocs: dict[str, list[ast.AST]] = {}
    for n in body_nodes:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            allocs.setdefault(n.targets[0].id, []).append(n.value)
    for name in sorted(returned):
        values = allocs.get(name, [])
        if len(values) != 1 or not isinstance(values[0], ast.Call):
            continue
        call = values[0]
        qual = index.bindings.resolve(call.func)
        if qual is None or qual.name not in ALLOC_APIS:
            continue
        buffer = next((k.value for k in call.keywords if k.arg == "buffer"), None)
        if buffer is None and qual.name == "nki.language.ndarray" and len(call.args) >= 3:
            buffer = call.args[2]
        if buffer is None:
            continue
        bq = index.bindings.resolve(buffer)
        kind = bq.name.rsplit(".", 1)[-1] if bq is not None and bq.name.startswith("nki.language.") else None
        if isinstance(buffer, ast.Constant) and isinstance(buffer.value, str):
            kind = buffer.value
        if kind in ("hbm", "private_hbm"):
            out.append(ReturnedTensor(fn, gen, name, buffer, kind))
    return out


def kernel_target(index: NameIndex, target: ast.AST) -> Gen | None:
    """The generation of the kernel ``target`` refers to, or None if it is not
    a kernel: a decorated function of this file, an imported one, or
    ``nki.jit(f)``."""
    if isinstance(target, ast.Call):
        qual = index.bindings.resolve(target.func)
        if qual is not None and qual.name == "nki.jit":
            return qual.gen
        return None
    if not isinstance(target, ast.Name):
        return None
    for fn, gen in index.roots.items():
        if fn.name == target.id and index.function_of(fn) is None:
            return gen
    try:
        module = index.model.module
        project = module.project
    except Exception:  # pragma: no cover
        return None
    for rec in index.bindings.records:
        if rec.local == target.id and isinstance(rec.node, ast.ImportFrom):
            return _imported_kernel_gen(project, module, 0, rec.module, target.id, rec.node)
    level_rec = index.bindings.relative.get(target.id)
    if level_rec is not None:
        level, mod, orig = level_rec
        return _imported_kernel_gen(project, module, level, mod, orig or target.id, None)
    return None


def _imported_kernel_gen(project, module, level: int, mod: str, name: str, node) -> Gen | None:
    try:
        other = project.find_module(module, level, mod)
    except Exception:  # pragma: no cover - project lookups never fail a rule
        return None
    if other is None:
        return None
    original = name
    if node is not None:
        original = next((a.name for a in node.names if (a.asname or a.name) == name), name)
    fn = other.functions.get(original)
    if fn is None:
        return None
    aliases = module_aliases(other.tree, other.bindings)
    for deco in fn.decorator_list:
        if resolve_decorator(deco, other.bindings, aliases) in ROOT_DECORATORS:
            target = deco.func if isinstance(deco, ast.Call) else deco
            qual = other.bindings.resolve(target)
            return qual.gen if qual is not None and qual.is_nki else Gen.CURRENT
    return None
