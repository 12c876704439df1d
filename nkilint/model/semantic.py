"""The semantic model of one file: what rules query.

``analyze_file`` resolves bindings, finds the kernels, interprets each one
once and keeps its graph. Helpers reached from a kernel are analysed inline
(with the kernel's values); other device code is analysed with unknown
inputs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..findings import Span
from ..paths import display_path
from ..source import SourceFile
from ..targets import Target
from ..versions import V0_1, NkiVersion
from .analysis import A, AnalysisCache
from .bindings import Bindings, Dialect
from .callgraph import SUBKERNEL, kernel_calls
from .graph import KernelGraph, Site
from .interp import Budget, Interpreter, InterpStats
from .interp.state import _TensorWithShapeObj
from .kernels import KernelCandidate, module_kernels
from .launches import Launch, find_launches
from .project_launches import project_launches
from .project import ModuleInfo, Project
from .values import FuncV, Unknown, Value, const_int, describe, int_bounds


# A specialization's kernel name is the kernel's name, this marker and the
# launch's line (``matmul@launch:40``); rules' messages that name the kernel
# are rewritten to name the launch (``RuleContext.take_findings``).
SPECIALIZED = "@launch:"
# At most this many specializations per kernel (distinct launches).
MAX_SPECIALIZATIONS = 4


@dataclass
class Kernel:
    name: str
    node: ast.FunctionDef
    kind: str  # root or probable
    how: str
    graph: KernelGraph
    decorator: ast.AST | None = None
    class_name: str | None = None
    error: str | None = None  # interpretation stopped early (budget, internal)
    # A root that another root of the file reaches (a sub-kernel): its tensor
    # parameters may be on-chip tiles, so they were given an unknown buffer.
    subkernel: bool = False
    # How the project uses a decorated kernel (callgraph): "launched" (host
    # code launches it), "subkernel" (only other kernels call it),
    # "uncalled" (nothing in the scanned tree refers to it), None (not
    # known: no project scan, or not a module-level decorated function).
    launch: str | None = None
    # A launch-site specialization: the kernel analysed again with the
    # shapes, dtypes and constants of one launch in host code (launches.py).
    specialization: Launch | None = None

    @property
    def base_name(self) -> str:
        """The kernel's own name (a specialization's name also names its launch)."""
        return self.name.split(SPECIALIZED, 1)[0]


@dataclass
class AllocRecord:
    """How well an on-chip allocation's partition size is known."""

    file: str
    line: int
    col: int
    buffer: str
    status: str  # exact, bounded, unknown
    reason: str = ""


@dataclass
class FileModel:
    source: SourceFile
    module: ModuleInfo
    bindings: Bindings
    dialect: Dialect
    version: NkiVersion  # the target NKI version
    target: Target
    kernels: list[Kernel] = field(default_factory=list)
    stats: InterpStats = field(default_factory=InterpStats)
    device_function_ids: set[int] = field(default_factory=set)
    # id(function node) -> the kernel whose analysis first inlined it: a
    # helper's code runs inside that kernel (findings name it).
    called_from: dict[int, str] = field(default_factory=dict)
    # The target Neuron SDK release (nkilint.releases.Release); None: the
    # newest release of ``version``.
    release: Any = None
    _analyses: AnalysisCache = field(default_factory=AnalysisCache, repr=False, compare=False)
    # Site.file -> whether it names this file (rules ask for every node).
    _in_file: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)

    def analysis(self, cls: type[A]) -> A:
        """A per-file analysis (``nkilint.model.analysis``), computed on first
        use and kept with this model."""
        return self._analyses.get(cls, self)

    @property
    def legacy(self) -> bool:
        """Whether the file is written against the legacy (0.1) API."""
        return self.dialect is Dialect.LEGACY or (self.dialect is Dialect.NONE and self.version == V0_1)

    @property
    def path(self) -> str:
        return str(self.module.path)

    # -- queries ------------------------------------------------------------
    def graphs(self) -> Iterator[tuple[Kernel, KernelGraph]]:
        for k in self.kernels:
            yield k, k.graph

    @property
    def specializations(self) -> list[Kernel]:
        """The kernels analysed again with the inputs of a launch."""
        return [k for k in self.kernels if k.specialization is not None]

    def kernel(self, name: str) -> Kernel | None:
        return next((k for k in self.kernels if k.name == name), None)

    def is_device_function(self, node: ast.AST) -> bool:
        return id(node) in self.device_function_ids

    def in_this_file(self, site: Site | None) -> bool:
        if site is None:
            return False
        hit = self._in_file.get(site.file)
        if hit is None:
            hit = self._in_file[site.file] = Path(site.file) == self.module.path
        return hit

    def in_linted_tree(self, file: str) -> bool:
        """The file is under the project's scan roots (the tree being
        checked), so its own findings are reported when it is checked."""
        roots = self.module.project.scan_roots
        if not roots:
            return False
        path = Path(file)
        for root in roots:
            root = Path(root)
            if path == root or root in path.parents:
                return True
        return False

    def line_ref(self, site: Site | None) -> str:
        """How a message names the line of a site: ``line 12`` in this file,
        ``line 12 of pkg/helpers.py`` (relative to the project root) in
        another one, so that a line number never points into the wrong file."""
        if site is None:
            return "an unknown line"
        if self.in_this_file(site):
            return f"line {site.line}"
        return f"line {site.line} of {self.display_path(site.file)}"

    def display_path(self, file: str) -> str:
        """A file's path as reports show it: relative to the project root
        (absolute outside it: a message must not invent a location)."""
        return display_path(file, self.module.project.root)

    def report_node(self, site: Site | None) -> ast.AST | None:
        """The node to report for a site: itself when it is in this file,
        else the outermost call in this file that led to it."""
        if site is None:
            return None
        if self.in_this_file(site):
            return site.node
        for file, call in site.chain:
            if Path(file) == self.module.path:
                return call
        return None

    def span(self, site: Site | None) -> Span | None:
        node = self.report_node(site)
        return self.source.span_of(node) if node is not None else None

    def alloc_records(self) -> list[AllocRecord]:
        out = []
        seen: dict[tuple, AllocRecord] = {}
        for _, graph in self.graphs():
            for _, data in graph.tensors():
                if data.get("origin") != "alloc" or data.get("buffer") not in ("sbuf", "psum"):
                    continue
                site: Site | None = data.get("site")
                if site is None:
                    continue
                status, reason = partition_status(data)
                key = (site.file, getattr(site.node, "lineno", 0), getattr(site.node, "col_offset", 0))
                rank = {"exact": 2, "bounded": 1, "unknown": 0}
                rec = AllocRecord(key[0], key[1], key[2] + 1, data.get("buffer"), status, reason)
                if key not in seen or rank[status] > rank[seen[key].status]:
                    seen[key] = rec
        out.extend(seen.values())
        return out


def partition_size(data: dict) -> Value | None:
    shape = data.get("shape_v")
    axis = data.get("partition_axis") or 0
    if shape is None:
        obj = data.get("shape_obj")
        # Rank still unknown: the leading dimension is known as a symbol.
        return obj.dim(axis) if obj is not None else None
    if axis >= len(shape):
        return None
    return shape[axis]


def partition_status(data: dict) -> tuple[str, str]:
    """(exact|bounded|unknown, reason) for a tensor node's partition size."""
    size = partition_size(data)
    if size is None:
        shape = data.get("shape_v")
        return "unknown", "shape unknown" if shape is None else "rank 0"
    if const_int(size) is not None:
        return "exact", ""
    bounds = int_bounds(size)
    if bounds is not None and bounds[1] != float("inf"):
        return "bounded", ""
    if isinstance(size, Unknown):
        return "unknown", size.reason
    if bounds is not None:
        return "unknown", f"unbounded: {describe(size)}"
    return "unknown", getattr(size, "reason", "") or "not an integer"


def default_project(source: SourceFile) -> Project:
    """A project rooted at the file's directory (no checker gave one)."""
    return Project(Path(source.path).parent if Path(source.path).is_absolute() else Path.cwd())


def module_for(source: SourceFile, project: Project) -> ModuleInfo:
    """The project module of a source being checked (parsed once, bindings
    collected, nothing interpreted yet)."""
    path = Path(source.path)
    if not path.is_absolute():
        path = Path.cwd() / path
    if path.exists():
        project.register_source(path, source)
        info = project.module_at(path)
        if info is not None:
            return info
    # stdin or an in-memory example: a module with a virtual path.
    virtual = (project.root / (Path(source.display_path).name or "stdin.py")).resolve()
    info = ModuleInfo(virtual, source, source.tree, project)
    return info


def analyze_file(source: SourceFile, project: Project | None, target: Target, version: NkiVersion,
                 release: Any = None) -> FileModel:
    project = project or default_project(source)
    module = module_for(source, project)
    bindings = module.bindings
    dialect = bindings.dialect
    model = FileModel(source, module, bindings, dialect, version, target, release=release)
    legacy = model.legacy
    candidates = module_kernels(module)
    visited: set[int] = set()
    roots = [c for c in candidates if c.kind == "root"]
    probable = [c for c in candidates if c.kind == "probable"]
    reached_by: dict[int, set[int]] = {}  # root -> functions its analysis inlined
    calls = kernel_calls(module.project)
    # Roots that only other kernels of the project call are analysed once,
    # as sub-kernels (parameters of unknown memory), instead of once as a
    # launched kernel whose result _apply_project_calls would then discard.
    project_sub = {id(c.node) for c in roots if _project_status(calls, module, c) == SUBKERNEL}
    for cand in roots + probable:
        if cand.kind == "probable" and id(cand.node) in visited:
            continue
        before = set(model.stats.functions_visited)
        kernel = _interpret(cand, module, target, version, legacy, model.stats,
                            top_level=id(cand.node) not in project_sub)
        reached_by[id(cand.node)] = model.stats.functions_visited - before
        for function in reached_by[id(cand.node)]:
            model.called_from.setdefault(function, kernel.name)
        model.kernels.append(kernel)
        visited |= model.stats.functions_visited
    # Roots reached from another root (directly or through helpers) are
    # sub-kernels: analyse them again with parameters of unknown memory.
    for index, kernel in enumerate(model.kernels):
        if kernel.kind != "root":
            continue
        if any(id(kernel.node) in inlined for owner, inlined in reached_by.items() if owner != id(kernel.node)):
            if id(kernel.node) in project_sub:  # already analysed with parameters of unknown memory
                again = kernel
            else:
                cand = KernelCandidate(kernel.node, "root", kernel.how, kernel.decorator, kernel.class_name)
                again = _interpret(cand, module, target, version, legacy, model.stats, top_level=False)
            again.subkernel = True
            again.how += " (also called from another kernel)"
            model.kernels[index] = again
    _apply_project_calls(model, module, calls, project_sub)
    model.device_function_ids = visited | {id(c.node) for c in candidates}
    _specialize(model, module, target, version, legacy)
    model.kernels.sort(key=lambda k: k.node.lineno)
    return model


def _project_status(index: Any, module: ModuleInfo, cand: KernelCandidate) -> str | None:
    """How the project launches a root kernel (callgraph.py), if it knows."""
    if index is None or cand.class_name is not None:
        return None
    info = index.info(module.path, cand.node.name)
    return info.status if info is not None else None


def _apply_project_calls(model: FileModel, module: ModuleInfo, index: Any, project_sub: set[int]) -> None:
    """Decorated kernels that only other kernels of the project call are
    sub-kernels (analysed with parameters of unknown memory in analyze_file):
    record how the project launches each root and where a sub-kernel is called."""
    if index is None:
        return
    for kernel in model.kernels:
        if kernel.kind != "root" or kernel.class_name is not None:
            continue
        info = index.info(module.path, kernel.node.name)
        if info is None:
            continue
        kernel.launch = info.status
        if info.status != SUBKERNEL or kernel.subkernel:
            continue
        assert id(kernel.node) in project_sub
        ref = info.refs[0]
        kernel.subkernel = True
        kernel.launch = SUBKERNEL
        kernel.how += f" (called from kernel {ref.caller} at {Path(ref.file).name}:{ref.line})"


def _specialize(model: FileModel, module: ModuleInfo, target: Target, version: NkiVersion, legacy: bool) -> None:
    """Analyse each top-level kernel again for every launch in this file's
    host code that decides some of its inputs (launches.py)."""
    tops = [k for k in model.kernels if k.kind == "root" and not k.subkernel and k.class_name is None
            and k.launch != SUBKERNEL]
    if not tops:
        return
    launches: list[Launch] = []
    if any(isinstance(n, ast.Call) for n in module.source.nodes):
        from .scopes import Scopes

        parents = model.analysis(Scopes).file.parents
        launches = find_launches(module.tree, model.bindings, [k.node for k in tops], model.device_function_ids,
                                 parents, module.source.nodes)
    # Then the launches in other project files (a test importing the kernel), in sorted file order.
    launches += project_launches(module, [k.node for k in tops if k.launch != SUBKERNEL])
    count: dict[int, int] = {}
    seen: set[tuple] = set()
    for launch in launches:
        n = count.get(id(launch.kernel), 0)
        if n >= MAX_SPECIALIZATIONS or (id(launch.kernel), launch.key) in seen:
            continue
        seen.add((id(launch.kernel), launch.key))
        count[id(launch.kernel)] = n + 1
        base = next(k for k in tops if k.node is launch.kernel)
        cand = KernelCandidate(base.node, "root", base.how, base.decorator, None)
        # Internal name: the launch's line, and for another file its position in the list (lines may repeat).
        suffix = str(launch.line) if launch.file is None else f"f{len(seen)}_{launch.line}"
        kernel = _interpret(cand, module, target, version, legacy, model.stats, overrides=dict(launch.args),
                            name=f"{base.name}{SPECIALIZED}{suffix}")
        kernel.specialization = launch
        kernel.launch = base.launch
        kernel.how = f"{base.how}, specialized to the launch at {launch.describe()}"
        model.kernels.append(kernel)


def _interpret(cand: KernelCandidate, module: ModuleInfo, target: Target, version: NkiVersion, legacy: bool,
               stats: InterpStats, top_level: bool = True, overrides: dict | None = None,
               name: str | None = None) -> Kernel:
    name = name or (f"{cand.class_name}.{cand.node.name}" if cand.class_name else cand.node.name)
    graph = KernelGraph(name, str(module.path))
    interp = Interpreter(module, target, version, graph, legacy, stats)
    interp.param_buffer = "hbm" if top_level else "unknown"
    interp.param_overrides = overrides or {}
    kernel = Kernel(name, cand.node, cand.kind, cand.how, graph, cand.decorator, cand.class_name)
    func = FuncV(cand.node, module, qualname=name)
    try:
        interp.module_env(module)
        interp.run_function(func, [], {}, root=True)
    except Budget:
        kernel.error = f"the interpreter's step budget of {interp.initial_budget:,} steps ran out; the graph is partial"
    except RecursionError:
        kernel.error = "the code is nested too deep for the interpreter; the graph is partial"
        graph.truncated = True
    stats.steps += max(interp.initial_budget - interp.budget, 0)
    _finalize(graph)
    return kernel


def _finalize(graph: KernelGraph) -> None:
    """Fill in parameter shapes learnt after the node was created."""
    for _, data in graph.tensors():
        obj = data.get("shape_obj")
        if data.get("shape_v") is None and obj is not None and obj.rank is not None:
            data["shape_v"] = obj.fix_rank(obj.rank)


__all__ = ["SPECIALIZED", "FileModel", "Kernel", "analyze_file", "partition_status", "partition_size", "_TensorWithShapeObj"]
