"""The review report: per file, per kernel, the sections a reviewer reads,
all computed from the semantic model and the findings of one check run.

``build_review(paths, settings)`` reads the files (never imports or runs
them), runs the enabled rules once per file, and keeps the model the rules
used, so the findings and the pictures describe the same analysis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..context import ModelCrash
from ..discovery import discover
from ..engine import Checker, RunOptions, project_scan_roots, read_file
from ..findings import Level
from ..model.semantic import FileModel, Kernel
from ..source import SourceError, decode_source
from .card import Card, build_card
from .cost import Cost, build_cost
from .loop_table import LoopRow, build_loops
from .memory_picture import MemoryPicture, build_memory
from .rubric import RUBRICS, ReviewFinding, group, review_finding
from .work import compute, transfers

SCHEMA_VERSION = 1


@dataclass
class KernelReview:
    card: Card
    memory: MemoryPicture | None
    loops: list[LoopRow]
    cost: Cost
    findings: list[ReviewFinding]
    kernel: Kernel = field(repr=False)  # the model's kernel (graph pictures read it)
    error: str | None = None  # a section could not be computed

    @property
    def by_rubric(self) -> dict[str, list[ReviewFinding]]:
        return group(self.findings)

    def counts(self) -> dict[str, int]:
        return {r: len(fs) for r, fs in self.by_rubric.items()}

    def to_json(self) -> dict:
        return {
            "card": self.card.to_json(),
            "memory": self.memory.to_json() if self.memory else None,
            "loops": [r.to_json() for r in self.loops],
            "cost": self.cost.to_json(),
            "findings": {r: [f.to_json() for f in fs] for r, fs in self.by_rubric.items()},
            "error": self.error,
        }


@dataclass
class FileReview:
    path: str
    dialect: str
    kernels: list[KernelReview]
    outside: list[ReviewFinding]  # findings in no kernel (imports, helpers, module code)
    error: str | None = None
    text: str = field(default="", repr=False)
    # Probable device code with no op, no on-chip tensor and no finding (a
    # configuration method, a helper the model could not reach): named only.
    quiet: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "path": self.path, "dialect": self.dialect, "error": self.error,
            "kernels": [k.to_json() for k in self.kernels], "quiet_functions": list(self.quiet),
            "outside_kernels": {r: [f.to_json() for f in fs] for r, fs in group(self.outside).items()},
        }


@dataclass
class Review:
    target: str
    sdk: str
    nki_version: str
    target_origin: str
    files: list[FileReview]
    errors: list[str]
    original: object | None = None  # an OriginalReview when --original was given

    def kernels(self) -> list[KernelReview]:
        return [k for f in self.files for k in f.kernels]

    def to_json(self) -> dict:
        out = {
            "schema_version": SCHEMA_VERSION,
            "tool": "nkilint review",
            "target": self.target, "sdk": self.sdk, "nki_version": self.nki_version,
            "target_origin": self.target_origin,
            "rubrics": list(RUBRICS),
            "files": [f.to_json() for f in self.files],
            "errors": list(self.errors),
        }
        if self.original is not None:
            out["original"] = self.original.to_json()
        return out


def _span_of(kernel: Kernel) -> tuple[int, int]:
    node = kernel.node
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return start, getattr(node, "end_lineno", node.lineno) or node.lineno


def _owner(kernels: list[Kernel], line: int) -> Kernel | None:
    """The innermost kernel whose source contains the line."""
    best, size = None, None
    for k in kernels:
        lo, hi = _span_of(k)
        if lo <= line <= hi and (size is None or hi - lo < size):
            best, size = k, hi - lo
    return best


def review_kernel(model: FileModel, kernel: Kernel, display: str, settings, findings: list[ReviewFinding]) -> KernelReview:
    card = build_card(model, kernel, display, settings)
    moves = transfers(kernel.graph)
    work = compute(kernel.graph)
    error = None
    try:
        memory = build_memory(kernel, settings.target)
    except Exception as exc:  # the memory model is best effort for a report; say so
        memory, error = None, f"memory picture not available: {type(exc).__name__}: {exc}"
    return KernelReview(card, memory, build_loops(kernel, moves, work),
                        build_cost(settings.target.name, moves, work), findings, kernel, error)


def review_file(checker: Checker, path: Path, display: str, settings, kernel_name: str | None) -> FileReview:
    try:
        text = decode_source(read_file(path))
    except SourceError as err:
        return FileReview(display, "none", [], [], f"not analysed: {err.message}")
    result, ctx = checker.check_source(text, display, str(path))
    ruleset = checker.ruleset
    found = [review_finding(f, ruleset, text, display) for f in result.findings
             if not f.suppressed and f.level >= Level.NOTE]
    if ctx is None:
        return FileReview(display, "none", [], found, "not analysed: the file does not parse", text)
    try:
        model = ctx.model
    except ModelCrash as exc:
        return FileReview(display, "none", [], found, str(exc), text)
    kernels = [k for k in model.kernels if kernel_name is None or k.name == kernel_name]
    owned: dict[int, list[ReviewFinding]] = {id(k): [] for k in kernels}
    outside = []
    for f in found:
        owner = _owner(kernels, f.line)
        (owned[id(owner)] if owner is not None else outside).append(f)
    quiet = [k for k in kernels if kernel_name is None and _quiet(k, owned[id(k)])]
    settings = checker.profile_for(display).settings  # the file's, after [[tool.nkilint.overrides]]
    reviews = [review_kernel(model, k, display, settings, owned[id(k)]) for k in kernels if k not in quiet]
    return FileReview(display, model.dialect.value, reviews, outside, None, text, [k.name for k in quiet])


def _quiet(kernel: Kernel, findings: list) -> bool:
    if kernel.kind != "probable" or findings:
        return False
    graph = kernel.graph
    return not any(True for _ in graph.ops()) and not any(
        d.get("buffer") in ("sbuf", "psum") for _, d in graph.tensors())


def _display(item, root: Path | None) -> str:
    if root is None:
        return item.display
    try:
        return item.path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return item.display


def build_review(paths: tuple[str, ...], settings, ruleset, enabled, kernel_name: str | None = None,
                 display_root: Path | None = None) -> Review:
    """``display_root``: show paths relative to it (the bundled example)."""
    files, errors = discover(list(paths), settings.root, settings.all_excludes,
                             respect_gitignore=settings.respect_gitignore)
    if display_root is None:  # the nested [tool.nkilint] tables, as nkilint check reads them
        from ..nested import directories_of, resolve_scopes

        scopes = resolve_scopes(settings, directories_of(item.path for item in files), ruleset)
        settings = settings.merged(scopes=scopes) if scopes else settings
    options = RunOptions(project_roots=project_scan_roots(paths, settings))
    checker = Checker(settings, ruleset, enabled, options)
    reviews = [review_file(checker, item.path, _display(item, display_root), settings, kernel_name) for item in files]
    if kernel_name is not None and not any(f.kernels for f in reviews):
        errors.append(f"no kernel named {kernel_name!r} in {', '.join(paths)}")
    return Review(settings.target.name, settings.release.minor, str(settings.nki_version),
                  settings.target_origin.text, reviews, list(errors))


__all__ = ["Review", "FileReview", "KernelReview", "build_review", "review_file", "SCHEMA_VERSION"]
