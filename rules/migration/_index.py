"""The name-use index the migration rules share (a per-file analysis).

Every migration rule asks the same questions of a file: which NKI names it
uses, in which API generation, inside device code or not, under which
function; which kernels the host launches. The index answers them from one
pass over the syntax tree, and each rule runs its own detection over it.

Levels follow the target version (``model.version``): a construct the
target deprecates is a warning; one it removed or rejects is an error. In a
file that still imports the legacy ``neuronxcc.nki`` namespace, constructs
are reported as the port list: notes while the target (0.2, 0.3) still
compiles legacy kernels, errors from 0.4, where legacy code inside kernels is
a compile error (only inside device code; host code items stay notes).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nkilint.context import RuleContext
from nkilint.findings import Level, Span
from nkilint.model.analysis import Analysis
from nkilint.model.bindings import Gen, Qual
from nkilint.model.scopes import Scopes
from nkilint.model.kernels import ROOT_DECORATORS, module_aliases, resolve_decorator
from nkilint.releases import FACTS, FactStatus, Release, Status, release_of_nki
from nkilint.versions import V0_1, V0_2, NkiVersion


FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPED = FUNCS + (ast.Lambda,)
_UNSET = object()
LEVEL_OF = {Status.ALLOWED: None, Status.NOTE: Level.NOTE, Status.WARNING: Level.WARNING, Status.ERROR: Level.ERROR}


def applies(ctx: RuleContext) -> bool:
    """Whether the file can hold anything a migration rule reports: it names
    NKI and imports an NKI namespace (or star-imports a module). Checked on
    the bindings alone, so host-only files never build a kernel model."""
    if ctx.source is None or "nki" not in ctx.source.text:
        return False
    bindings = ctx.bindings
    return bindings.dialect.value != "none" or bool(bindings.star_modules)


@dataclass(frozen=True)
class NameUse:
    """A load of a whole dotted NKI name (``nl.arange``, not ``nl``)."""

    node: ast.AST
    qual: Qual
    in_body: bool  # inside some function body


class NameIndex(Analysis):
    """The syntax facts of one file that the migration rules read."""

    def __init__(self, model) -> None:
        super().__init__(model)
        self.source = model.source
        self.tree = model.module.tree
        self.bindings = model.bindings
        self.version: NkiVersion = model.version
        self.release: Release = model.release or release_of_nki(model.version)
        # The function whose body holds a node, memoised by function_of.
        self.body_func: dict[int, ast.AST | None] = {}
        # The file's shared node list and parent map (Scopes builds its index on
        # model.module.tree, as this index reads it).
        index = model.analysis(Scopes).file
        self.nodes: list[ast.AST] = index.nodes
        self.parents: dict[int, ast.AST] = index.parents
        self.calls = [n for n in self.nodes if isinstance(n, ast.Call)]
        self.uses: list[NameUse] = []
        self.loads: dict[str, list[ast.Name]] = {}
        self.assigned: set[str] = set()
        definitions = FUNCS + (ast.ClassDef,)  # once, not a new tuple per node
        for node in self.nodes:
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    self.loads.setdefault(node.id, []).append(node)
                else:
                    self.assigned.add(node.id)
            elif isinstance(node, definitions):
                self.assigned.add(node.name)
            elif isinstance(node, ast.arg):
                self.assigned.add(node.arg)
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                parent = self.parents.get(id(node))
                if isinstance(parent, ast.Attribute) and parent.value is node:
                    continue  # not the whole dotted name
                qual = self.bindings.resolve(node)
                if qual is not None and qual.is_nki:
                    self.uses.append(NameUse(node, qual, self.function_of(node) is not None))
        self.range_shadowed = "range" in self.assigned or "range" in self.bindings.names
        self.roots: dict[ast.AST, Gen] = self._root_kernels()

    # -- text ---------------------------------------------------------------
    def text(self, node: ast.AST) -> str:
        return self.source.text_of(self.source.span_of(node))

    def span(self, node: ast.AST) -> Span:
        return self.source.span_of(node)

    # -- structure ------------------------------------------------------------
    def function_of(self, node: ast.AST) -> ast.AST | None:
        """The innermost function whose body contains ``node`` (decorators,
        defaults and annotations belong to the enclosing scope)."""
        known = self.body_func
        hit = known.get(id(node), _UNSET)
        if hit is not _UNSET:
            return hit
        # Up the parents until a function whose body holds the path, or a node
        # whose answer is known; every node on the way has the same answer.
        path: list[int] = []
        cur = node
        fn: ast.AST | None = None
        while True:
            hit = known.get(id(cur), _UNSET)
            if hit is not _UNSET:
                fn = hit
                break
            path.append(id(cur))
            parent = self.parents.get(id(cur))
            if parent is None:
                break
            if isinstance(parent, _SCOPED):
                body = parent.body if isinstance(parent.body, list) else [parent.body]
                if any(b is cur for b in body):
                    fn = parent
                    break
            cur = parent
        for key in path:
            known[key] = fn
        return fn

    def call_of(self, node: ast.AST) -> ast.Call | None:
        """The call whose callee is ``node``."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Call) and parent.func is node:
            return parent
        return None

    def in_device(self, node: ast.AST) -> bool:
        """Whether ``node`` is device code: inside the body of a kernel or of
        a helper a kernel reaches, or in the decorators of a kernel."""
        fn = self.function_of(node)
        model = self.model
        while fn is not None:
            if isinstance(fn, FUNCS) and model.is_device_function(fn):
                return True
            fn = self.function_of(fn)
        cur: ast.AST | None = node
        while cur is not None:
            parent = self.parents.get(id(cur))
            if isinstance(parent, FUNCS) and any(d is cur for d in parent.decorator_list):
                return model.is_device_function(parent)
            cur = parent
        return False

    def file_gen(self) -> Gen:
        return Gen.LEGACY if self.bindings.dialect.value == "legacy" else Gen.CURRENT

    def alias_of(self, module: str) -> str | None:
        """A local name bound to ``module`` (e.g. ``nl`` for nki.language)
        in the file's own generation (current preferred)."""
        best = None
        for rec in self.bindings.records:
            if rec.qual.name == module and rec.local != "*" and rec.node is not None:
                if isinstance(rec.node, ast.Import) and not any(a.asname for a in rec.node.names) and "." in rec.module:
                    continue  # `import nki.language` binds `nki`, not an alias
                if best is None or rec.qual.gen is Gen.CURRENT:
                    best = rec.local
        return best

    # -- levels -------------------------------------------------------------------
    def fact_status(self, fact_id: str) -> FactStatus:
        return FACTS.status(fact_id, self.release)

    def retired_level(self, fact_id: str) -> Level | None:
        """The level of a fact the target deprecated or removed after it was
        introduced (None before its first step and while it is allowed)."""
        st = self.fact_status(fact_id)
        return LEVEL_OF[st.status] if st.step is not None else None

    def fact_level(self, fact_id: str) -> Level | None:
        """The level the target release gives a versioned fact
        (``nkilint.releases.FACTS``); None where it is allowed."""
        return LEVEL_OF[FACTS.status(fact_id, self.release).status]

    def is_legacy_port(self, gen: Gen) -> bool:
        return gen is Gen.LEGACY and self.version >= V0_2

    def level(self, gen: Gen, node: ast.AST, deprecated: bool = False, device: bool | None = None) -> Level:
        """Deprecated: a warning. Rejected by the target: an error, except in
        legacy code: there each construct is an item of the port list, a note
        (NKI601 reports the deprecated namespace once, as a warning) until
        the target rejects legacy code inside kernels (SDK 2.30), and in
        legacy host code. ``device`` overrides the device-code test (kernel
        signatures, imports used in kernels)."""
        if deprecated:
            return Level.WARNING
        if self.is_legacy_port(gen):
            if not self.legacy_rejected_in_kernels():
                return Level.NOTE
            in_device = self.in_device(node) if device is None else device
            return Level.ERROR if in_device else Level.NOTE
        return Level.ERROR

    def legacy_rejected_in_kernels(self) -> bool:
        """Whether the target rejects legacy code inside kernels (release
        fact ``legacy-namespace-in-kernel``: from SDK 2.30)."""
        return self.fact_level("legacy-namespace-in-kernel") is Level.ERROR

    def port_level(self, gen: Gen) -> Level:
        """The level of a construct the target rejects, in code that is not
        tied to a device function here (a launch): an error in nki.* code and
        in legacy code once the target rejects it; a port-list note before."""
        if gen is Gen.LEGACY and not self.legacy_rejected_in_kernels():
            return Level.NOTE
        return Level.ERROR

    def port_note(self, gen: Gen) -> str:
        if not self.is_legacy_port(gen):
            return ""
        if self.legacy_rejected_in_kernels():
            return f"; this legacy neuronxcc.nki code must be ported: NKI {self.version} rejects the legacy namespace inside kernels"
        return f"; legacy neuronxcc.nki code still compiles with NKI {self.version}, but must be ported before NKI 0.4"

    def lookup_version(self, gen: Gen) -> NkiVersion:
        """The version whose API a name is checked against: the target, or
        the legacy API (0.1) for legacy code when the target is 0.1."""
        if gen is Gen.LEGACY and self.version < V0_2:
            return V0_1
        return self.version

    # -- kernels --------------------------------------------------------------------
    def _root_kernels(self) -> dict[ast.AST, Gen]:
        """Decorated kernels of this file that are launched from the host: a
        decorated function that another function of the file calls is a
        sub-kernel (its signature and return values are not the kernel's
        interface)."""
        aliases = module_aliases(self.tree, self.bindings)
        called_in_functions = {
            n.func.id for n in self.calls if isinstance(n.func, ast.Name) and self.function_of(n) is not None
        }
        out: dict[ast.AST, Gen] = {}
        for node in self.nodes:
            if not isinstance(node, FUNCS):
                continue
            for deco in node.decorator_list:
                name = resolve_decorator(deco, self.bindings, aliases)
                if name in ROOT_DECORATORS:
                    if node.name in called_in_functions and self._called_from_device(node.name):
                        break
                    target = deco.func if isinstance(deco, ast.Call) else deco
                    qual = self.bindings.resolve(target)
                    out[node] = qual.gen if qual is not None and qual.is_nki else self.file_gen()
                    break
        return out

    def _called_from_device(self, name: str) -> bool:
        for n in self.loads.get(name, ()):
            call = self.parents.get(id(n))
            if isinstance(call, ast.Call) and call.func is n and self.in_device(call):
                return True
        return False
