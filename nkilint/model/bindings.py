"""What a name means: import resolution to canonical NKI names.

Both API generations map to one canonical spelling (``nki.language.zeros``)
with the generation recorded: ``import neuronxcc.nki.language as nl`` binds
``nl`` to ``nki.language`` (legacy), ``from nki import language as L`` binds
``L`` to ``nki.language`` (current). Alias spelling is never trusted: only
the module path counts (``ncc`` is ``nki.compiler`` in some real files and
``nki.collectives`` in others).
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field


_PACKAGE_ROOTS = ("neuronxcc", "torch_neuronx", "jax_neuronx")


class Dialect(enum.Enum):
    NONE = "none"
    LEGACY = "legacy"  # neuronxcc.nki (NKI 0.1)
    CURRENT = "current"  # nki (NKI 0.2+)
    BOTH = "both"


class Gen(enum.Enum):
    LEGACY = "legacy"
    CURRENT = "current"
    OTHER = "other"  # not NKI (numpy, torch, triton, ...)


@dataclass(frozen=True)
class Qual:
    """A resolved dotted name: canonical path and the generation it came from."""

    name: str
    gen: Gen

    @property
    def is_nki(self) -> bool:
        return self.gen in (Gen.LEGACY, Gen.CURRENT)

    def startswith(self, prefix: str) -> bool:
        return self.name == prefix or self.name.startswith(prefix + ".")

    def child(self, attr: str) -> "Qual":
        # Memoised: the model and the rules resolve the same dotted names
        # hundreds of thousands of times per run, and a frozen dataclass is
        # slow to construct. Quals are immutable, so sharing one is safe.
        key = (self.name, self.gen, attr)
        hit = _CHILDREN.get(key)
        if hit is None:
            if len(_CHILDREN) >= 100_000:
                _CHILDREN.clear()
            hit = _CHILDREN[key] = Qual(f"{self.name}.{attr}", self.gen)
        return hit


_CHILDREN: dict[tuple[str, Gen, str], Qual] = {}


@dataclass(frozen=True)
class ImportRecord:
    node: ast.AST  # the Import / ImportFrom statement
    local: str  # bound local name ("*" for star imports)
    qual: Qual  # what it means
    module: str  # the module path as written (e.g. neuronxcc.nki.language)
    level: int = 0  # relative import level


def canonicalize(module_path: str) -> Qual:
    """Canonical name and generation of an absolute dotted path."""
    parts = module_path.split(".")
    if parts[0] == "neuronxcc":
        if len(parts) >= 2 and parts[1] == "nki":
            return Qual(".".join(["nki", *parts[2:]]), Gen.LEGACY)
        return Qual(module_path, Gen.OTHER)
    if parts[0] == "nki":
        return Qual(module_path, Gen.CURRENT)
    if parts[0] == "torch_neuronx":
        # torch_neuronx.nki re-exports the current nki package; nki_jit is legacy.
        if len(parts) >= 2 and parts[1] == "nki":
            return Qual(".".join(["nki", *parts[2:]]), Gen.CURRENT)
        if parts[-1] == "nki_jit":
            return Qual("torch_neuronx.nki_jit", Gen.LEGACY)
        return Qual(module_path, Gen.OTHER)
    if parts[0] == "jax_neuronx" and parts[-1] == "nki_call":
        return Qual("jax_neuronx.nki_call", Gen.LEGACY)
    return Qual(module_path, Gen.OTHER)


@dataclass
class Bindings:
    """Import bindings of one module (file-wide: imports inside functions
    are included; rebinding a name by assignment is tracked separately)."""

    names: dict[str, Qual] = field(default_factory=dict)
    records: list[ImportRecord] = field(default_factory=list)
    star_modules: list[Qual] = field(default_factory=list)
    relative: dict[str, tuple[int, str, str | None]] = field(default_factory=dict)  # local -> (level, module, name)

    @property
    def dialect(self) -> Dialect:
        legacy = any(r.qual.gen is Gen.LEGACY for r in self.records)
        current = any(r.qual.gen is Gen.CURRENT for r in self.records)
        if legacy and current:
            return Dialect.BOTH
        if legacy:
            return Dialect.LEGACY
        if current:
            return Dialect.CURRENT
        return Dialect.NONE

    def legacy_imports(self) -> list[ImportRecord]:
        return [r for r in self.records if r.qual.gen is Gen.LEGACY]

    def current_imports(self) -> list[ImportRecord]:
        return [r for r in self.records if r.qual.gen is Gen.CURRENT]

    def resolve(self, expr: ast.AST) -> Qual | None:
        """The canonical name an expression (Name / Attribute chain) denotes."""
        parts: list[str] = []
        node = expr
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.reverse()
        base = self.names.get(node.id)
        if base is None:
            star = next((s for s in self.star_modules if s.is_nki), None)
            if star is None:
                return None
            base = star.child(node.id)
        elif base.gen is Gen.OTHER and base.name in _PACKAGE_ROOTS:
            # `import neuronxcc.nki.language` binds `neuronxcc`: canonicalise the chain.
            return canonicalize(".".join([base.name, *parts]))
        for part in parts:
            base = base.child(part)
        return base

    def resolve_nki(self, expr: ast.AST) -> Qual | None:
        qual = self.resolve(expr)
        return qual if qual is not None and qual.is_nki else None


def _record(b: Bindings, node: ast.AST, local: str, path: str, module: str, level: int = 0) -> None:
    qual = canonicalize(path)
    if local == "*":
        b.star_modules.append(qual)
    else:
        b.names[local] = qual
    b.records.append(ImportRecord(node, local, qual, module, level))


def iter_statements(body: list[ast.stmt]):
    """Every statement, recursively (imports are statements: no need to
    visit the expressions, which are most of a module's nodes)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        for block_name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, block_name, None)
            if block and isinstance(block, list):
                stack.extend(reversed(block))
        for handler in getattr(stmt, "handlers", ()) or ():
            stack.extend(reversed(handler.body))
        for case in getattr(stmt, "cases", ()) or ():
            stack.extend(reversed(case.body))


def collect_bindings(tree: ast.Module) -> Bindings:
    b = Bindings()
    for node in iter_statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    _record(b, node, alias.asname, alias.name, alias.name)
                else:
                    # `import neuronxcc.nki.language` binds `neuronxcc`; attribute
                    # chains from it resolve through canonicalize().
                    top = alias.name.split(".")[0]
                    b.names[top] = Qual(top, Gen.OTHER)
                    qual = canonicalize(alias.name)
                    b.records.append(ImportRecord(node, top, qual, alias.name))
                    if top == "nki":
                        b.names["nki"] = Qual("nki", Gen.CURRENT)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                for alias in node.names:
                    local = alias.asname or alias.name
                    b.relative[local] = (node.level, module, None if alias.name == "*" else alias.name)
                continue
            for alias in node.names:
                local = alias.asname or alias.name
                path = f"{module}.{alias.name}" if alias.name != "*" else module
                _record(b, node, "*" if alias.name == "*" else local, path, module)
    return b
