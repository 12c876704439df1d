"""One pass over a file for the migration family (NKI6xx).

Every migration rule reads the same facts (which NKI names the file uses,
in which API generation, inside device code or not, and what the API table
says about them in the target version), so one scan classifies every site
once and hands each rule the issues with its id. A site is claimed by one
rule only (a removed name is not also an unknown one).

Levels follow the target version (``ctx.nki_version``): a construct the
target deprecates is a warning; one it removed or rejects is an error. In a
file that still imports the legacy ``neuronxcc.nki`` namespace, constructs
are reported as the port list: warnings while the target (0.2, 0.3) still
compiles legacy kernels, errors from 0.4, where legacy code inside kernels is
a compile error (only inside device code; host code stays a warning).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache

from nkilint.context import RuleContext
from nkilint.findings import Fix, Level, Span
from nkilint.model.bindings import Bindings, Gen, ImportRecord, Qual
from nkilint.model.kernels import ROOT_DECORATORS, module_aliases, resolve_decorator
from nkilint.versions import V0_1, V0_2, V0_3, V0_4, V0_5, V0_6, NkiVersion

from . import _migration_api as api

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)

LOOP_ITERATORS = ("nki.language.affine_range", "nki.language.sequential_range", "nki.language.static_range")
MATMULS = ("nki.isa.nc_matmul", "nki.language.matmul")

# Deprecated aliases with a 1:1 replacement (NKI604). (replacement, since, fix is safe)
RENAMES: dict[str, tuple[str, NkiVersion, bool, str]] = {
    "nki.isa.tensor_engine": ("nki.isa.engine.tensor", V0_2, True, "the deprecated alias names the same enum member"),
    "nki.isa.vector_engine": ("nki.isa.engine.vector", V0_2, True, "the deprecated alias names the same enum member"),
    "nki.isa.scalar_engine": ("nki.isa.engine.scalar", V0_2, True, "the deprecated alias names the same enum member"),
    "nki.isa.gpsimd_engine": ("nki.isa.engine.gpsimd", V0_2, True, "the deprecated alias names the same enum member"),
    "nki.isa.unknown_engine": ("nki.isa.engine.unknown", V0_2, True, "the deprecated alias names the same enum member"),
    "nki.language.tile_size.psum_fmax": (
        "nki.language.tile_size.psum_bank_fmax", V0_4, True, "both are 512 fp32 elements (one PSUM bank per partition)"),
    "nki.language.tile_size.total_available_sbuf_size": (
        "nki.language.tile_size.sbuf_fmax_bytes", V0_4, False,
        "despite its name the old constant is the usable SBUF bytes per partition; check that the code meant per partition"),
    "nki.tensor": ("nki.meta.tensor", V0_2, True, "the class moved to nki.meta in Neuron SDK 2.28"),
}

# Replacements for removed names, in words (the change records often say
# only "not present in the stubs").
REMOVED_HINTS: dict[str, str] = {
    "nki.language.arange": "index with integer slices (t[0:128, 0:512]), nl.ds(start, size) or tensor.ap(...)",
    "nki.language.mgrid": "index with integer slices (t[0:128, 0:512]), nl.ds(start, size) or tensor.ap(...)",
    "nki.language.par_dim": "drop par_dim: the partition dim is always the first; fold block dims into the free dims "
                            "((P, B, F)) or keep a Python list of tiles",
    "nki.language.load": "nisa.dma_copy(dst=tile, src=hbm_view) into a tile allocated with nl.ndarray (nl.load returns in NKI 0.3)",
    "nki.language.store": "nisa.dma_copy(dst=hbm_view, src=tile) (nl.store returns in NKI 0.3)",
    "nki.language.spmd_dim": "launch with one integer (kernel[2]) and split the work with nl.program_id(0)",
    "nki.language.nc": "launch with one integer (kernel[2]) and split the work with nl.program_id(0)",
    "nki.baremetal": "decorate with @nki.jit and call the kernel with numpy arrays",
    "nki.benchmark": "decorate with @nki.jit; profile with neuron-explorer capture",
    "nki.profile": "decorate with @nki.jit; profile with neuron-explorer capture",
    "nki.simulate_kernel": "nki.simulate(kernel)(*args) (NKI 0.3+) or NKI_SIMULATOR=1",
    "nki.trace": "@nki.jit",
    "nki.compiler": "allocate with nl.ndarray(..., address=(partition_offset, byte_offset)) and drop the allocator decorators",
    "nki.isa.tensor_copy_dynamic_src": "nisa.tensor_copy(dst=..., src=t.ap(pattern, scalar_offset=reg))",
    "nki.isa.tensor_copy_dynamic_dst": "nisa.tensor_copy(dst=t.ap(pattern, scalar_offset=reg), src=...)",
    "nki.language.gather_flattened": "nisa.nc_n_gather (NKI 0.2); nl.gather_flattened returns as a wrapper in NKI 0.3",
    "nki.language.atomic_rmw": "nisa.dma_compute(dst, [src, dst], reduce_op=nl.add)",
    "nki.language.loop_reduce": "an explicit loop with nisa.tensor_tensor into an accumulator tile",
    "nki.language.all_reduce": "the nki.collectives API",
    "nki.language.static_cast": "pass the dtype to the allocation or use nisa.tensor_copy into a tile of the new dtype",
    "nki.isa.builtin_custom_op": "no replacement in nki.*",
    "nki.typing.mutable_tensor": "plain parameters: outputs are allocated in the kernel (nl.shared_hbm) and returned",
    "torch_neuronx.nki_jit": "decorate the kernel with @nki.jit and call it directly",
    "jax_neuronx.nki_call": "decorate the kernel with @nki.jit and call it directly",
}

# Enum-typed parameters and their enum in nki.isa (raw ints rejected from 0.3).
ENUM_PARAMS = {
    "engine": "engine",
    "dge_mode": "dge_mode",
    "oob_mode": "oob_mode",
    "reduce_cmd": "reduce_cmd",
    "perf_mode": "matmul_perf_mode",
    "dma_engine": "dma_engine",
}
BUFFER_NAMES = ("sbuf", "psum", "hbm", "private_hbm", "shared_hbm")
ALLOC_APIS = {
    "nki.language." + n for n in (
        "ndarray", "zeros", "ones", "full", "empty", "rand", "random", "zeros_like", "ones_like", "empty_like",
        "full_like", "shared_constant", "shared_identity_matrix",
    )
}


@dataclass
class Issue:
    rule_id: str
    where: ast.AST | Span
    level: Level
    message: str
    hint: str | None = None
    fix: Fix | None = None
    gen: Gen = Gen.CURRENT
    related: tuple = ()  # (span, message, path) of places in other files


@dataclass
class _Use:
    node: ast.AST
    qual: Qual


@dataclass
class Scan:
    ctx: RuleContext
    bindings: Bindings
    version: NkiVersion
    issues: list[Issue] = field(default_factory=list)
    parents: dict[int, ast.AST] = field(default_factory=dict)
    body_func: dict[int, ast.AST | None] = field(default_factory=dict)
    nodes: list[ast.AST] = field(default_factory=list)
    claimed: set[tuple] = field(default_factory=set)
    # Filled by _migration_checks.run:
    uses: list[tuple[ast.AST, Qual, bool]] = field(default_factory=list)  # (node, name, in a function body)
    roots: dict[ast.AST, Gen] = field(default_factory=dict)  # host-launched kernels -> their generation
    range_shadowed: bool = False
    output_buffer_nodes: dict[int, bool] = field(default_factory=dict)

    # -- helpers -----------------------------------------------------------
    @property
    def source(self):
        return self.ctx.source

    def text(self, node: ast.AST) -> str:
        return self.source.text_of(self.source.span_of(node))

    def span(self, node: ast.AST) -> Span:
        return self.source.span_of(node)

    def add(self, rule_id: str, where: ast.AST | Span, level: Level, message: str, hint: str | None = None,
            fix: Fix | None = None, gen: Gen = Gen.CURRENT, related: list | None = None) -> None:
        span = where if isinstance(where, Span) else self.span(where)
        key = (rule_id, span, message)
        if key in self.claimed:
            return
        self.claimed.add(key)
        self.issues.append(Issue(rule_id, span, level, message, hint, fix, gen, tuple(related or ())))

    def function_of(self, node: ast.AST) -> ast.AST | None:
        """The innermost function whose body contains ``node``."""
        return self.body_func.get(id(node))

    @property
    def model(self):
        return self.ctx.model

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

    def is_legacy_port(self, gen: Gen) -> bool:
        return gen is Gen.LEGACY and self.version >= V0_2

    def level(self, gen: Gen, node: ast.AST, deprecated: bool = False, device: bool | None = None) -> Level:
        """Deprecated: a warning. Rejected by the target: an error, except in
        legacy code, where it is a warning until the target rejects legacy
        code inside kernels (0.4), and in legacy host code. ``device``
        overrides the device-code test (kernel signatures, imports used in
        kernels)."""
        if deprecated:
            return Level.WARNING
        if self.is_legacy_port(gen):
            in_device = self.in_device(node) if device is None else device
            return Level.ERROR if self.version >= V0_4 and in_device else Level.WARNING
        return Level.ERROR

    def port_note(self, gen: Gen) -> str:
        if not self.is_legacy_port(gen):
            return ""
        if self.version >= V0_4:
            return f"; this legacy neuronxcc.nki code must be ported: NKI {self.version} rejects the legacy namespace inside kernels"
        return f"; legacy neuronxcc.nki code still compiles with NKI {self.version}, but must be ported before NKI 0.4"

    def lookup_version(self, gen: Gen) -> NkiVersion:
        """The version whose API a name is checked against: the target, or
        the legacy API (0.1) for legacy code when the target is 0.1."""
        if gen is Gen.LEGACY and self.version < V0_2:
            return V0_1
        return self.version

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


# -- entry point -----------------------------------------------------------
def scan(ctx: RuleContext) -> Scan:
    cached = getattr(ctx, "_nkilint_migration_scan", None)
    if cached is not None:
        return cached
    if "nki" not in ctx.source.text:
        # No NKI import can exist: nothing to scan (most host-only files).
        s = Scan(ctx, Bindings(), ctx.nki_version)
        setattr(ctx, "_nkilint_migration_scan", s)
        return s
    s = Scan(ctx, Bindings(), ctx.nki_version)
    _index(s)
    bindings = s.bindings = ctx.bindings
    if bindings.dialect.value != "none" or bindings.star_modules:
        from . import _migration_checks as checks

        checks.run(s)
    setattr(ctx, "_nkilint_migration_scan", s)
    return s


def _index(s: Scan) -> None:
    """Parents and the function whose body holds each node (decorators,
    defaults and annotations belong to the enclosing scope). One pass; the
    loop avoids ast.iter_child_nodes' generator overhead (big files)."""
    parents = s.parents
    body_func = s.body_func
    nodes = s.nodes
    scoped = FUNCS + (ast.Lambda,)
    AST = ast.AST
    stack: list[tuple[ast.AST, ast.AST | None]] = [(s.ctx.tree, None)]
    pop, push = stack.pop, stack.append
    while stack:
        node, fn = pop()
        nodes.append(node)
        body_ids: set[int] = set()
        if isinstance(node, scoped):
            body = node.body if isinstance(node.body, list) else [node.body]
            body_ids = {id(b) for b in body}
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for child in value:
                    if isinstance(child, AST):
                        child_fn = node if id(child) in body_ids else fn
                        parents[id(child)] = node
                        body_func[id(child)] = child_fn
                        push((child, child_fn))
            elif isinstance(value, AST):
                child_fn = node if id(value) in body_ids else fn
                parents[id(value)] = node
                body_func[id(value)] = child_fn
                push((value, child_fn))


@lru_cache(maxsize=4096)
def cached_status(name: str, version: NkiVersion) -> api.NameStatus:
    return api.name_status(name, version)


__all__ = ["Scan", "Issue", "scan", "cached_status", "RENAMES", "REMOVED_HINTS", "ENUM_PARAMS", "BUFFER_NAMES",
           "ALLOC_APIS", "LOOP_ITERATORS", "MATMULS", "FUNCS", "ImportRecord", "ROOT_DECORATORS", "module_aliases",
           "resolve_decorator", "V0_3", "V0_5", "V0_6"]
