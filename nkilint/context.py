"""The read-only view a rule gets of one file, and its ``report`` method."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from .config import Settings
from .findings import Finding, Fix, Level, Related, Span
from .interrupts import caused_by_interrupt
from .source import SourceError, SourceFile
from .releases import Release, release_of_nki
from .targets import Target
from .versions import NkiVersion

if TYPE_CHECKING:  # pragma: no cover
    from .model.analysis import A
    from .model.project import Project
    from .model.bindings import Bindings
    from .model.semantic import FileModel
    from .rule import Rule


class ModelCrash(Exception):
    """The semantic model raised while analysing this file."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(f"the semantic model failed on this file: {type(cause).__name__}: {cause}")
        self.cause = cause


class RuleContext:
    """What a rule sees: the source and syntax tree with positions, the
    target hardware, the target SDK release (``release``, with the facts of
    ``nkilint.releases``) and its NKI version (``nki_version``), the
    settings, and (computed on first use, shared by all rules of the file)
    the semantic model and kernel graphs."""

    def __init__(
        self,
        source: SourceFile | None,
        settings: Settings,
        target: Target,
        nki_version: NkiVersion,
        project: "Project | None" = None,
        error: SourceError | None = None,
        display_path: str = "",
        release: Release | None = None,
    ) -> None:
        self.source = source
        self.settings = settings
        self.target = target
        self.nki_version = nki_version
        if release is None:
            release = settings.release if settings.nki_version == nki_version else release_of_nki(nki_version)
        assert release.nki == nki_version, "the release and the NKI version must agree"
        self.release: Release = release
        self.project = project
        self.error = error
        self.display_path = display_path or (source.display_path if source else "")
        self._findings: list[Finding] = []
        self._rule: type[Rule] | None = None
        self._model: "FileModel | None" = None
        self._model_error: Exception | None = None
        self._bindings: "Bindings | None" = None

    # -- model -------------------------------------------------------------
    @property
    def tree(self) -> ast.Module:
        if self.source is None:
            raise RuntimeError("no syntax tree: the file could not be read or parsed")
        return self.source.tree

    @property
    def model(self) -> "FileModel":
        """Bindings, kernels, abstract values and kernel graphs of this file
        (computed on first use and shared by every rule of the file)."""
        if self._model is None:
            if self._model_error is not None:
                raise ModelCrash(self._model_error)
            from .model.semantic import analyze_file

            assert self.source is not None
            try:
                self._model = analyze_file(self.source, self.project, self.target, self.nki_version, self.release)
            except Exception as exc:  # a bug in the model: report once, not per rule
                if caused_by_interrupt(exc):
                    raise KeyboardInterrupt from exc  # Ctrl-C, not a bug: nothing to remember
                self._model_error = exc
                raise ModelCrash(exc) from exc
        return self._model

    @property
    def model_if_built(self) -> "FileModel | None":
        """The file's model if a rule already asked for it (never builds it)."""
        return self._model

    def analysis(self, cls: type[A]) -> A:
        """A per-file analysis of this file's model (computed once per file,
        shared by every rule that asks; see ``nkilint.model.analysis``)."""
        return self.model.analysis(cls)

    @property
    def bindings(self) -> "Bindings":
        """Import bindings of this file, without interpreting its kernels
        (the model's own bindings once the model exists)."""
        if self._model is not None:
            return self._model.bindings
        if self._bindings is None:
            from .model.semantic import default_project, module_for

            assert self.source is not None
            self._bindings = module_for(self.source, self.project or default_project(self.source)).bindings
        return self._bindings

    # -- reporting -----------------------------------------------------------
    def begin_rule(self, rule: type["Rule"]) -> None:
        self._rule = rule

    def span_of(self, where: ast.AST | Span) -> Span:
        if isinstance(where, Span):
            return where
        assert self.source is not None
        return self.source.span_of(where)

    def report(
        self,
        where: ast.AST | Span,
        message: str,
        *,
        hint: str | None = None,
        level: Level | None = None,
        fix: Fix | None = None,
        related: list[tuple] | None = None,
        kernel: str | None = None,
        data: dict[str, Any] | None = None,
        rule_id: str | None = None,
    ) -> None:
        """Report a finding of the current rule at a node or span.

        ``level`` defaults to the rule's level; rules lower it to a warning
        when a violation depends on unknown values.
        """
        rule = self._rule
        assert rule is not None, "report() called outside a rule's check()"
        self._findings.append(
            Finding(
                rule_id=rule_id or rule.id,
                level=level if level is not None else rule.level,
                message=message,
                path=self.display_path,
                span=self.span_of(where),
                hint=hint,
                fix=fix,
                related=tuple(self._related(*entry) for entry in (related or [])),
                kernel=kernel,
                data=tuple(sorted((data or {}).items())),
            )
        )

    def _related(self, where: ast.AST | Span, message: str, path: str | None = None) -> Related:
        """``(where, message)`` in this file, or ``(span, message, path)``
        for a place in another file (``path`` as reports show it)."""
        if path is not None and path != self.display_path:
            assert isinstance(where, Span), "a related place in another file needs its span"
            return Related(where, message, path)
        return Related(self.span_of(where), message)

    def name_kernels(self, findings: list[Finding]) -> list[Finding]:
        """Findings that name no kernel get the kernel their code runs in,
        whichever rule found them: the kernel whose definition (decorators
        included) holds their first line, innermost first, else, in a
        helper function, the kernel whose analysis first inlined that
        helper. Module-level code and helpers no kernel of the file calls
        keep ``None``. The model is computed if no rule needed it; if it
        fails, nothing is named (the rules that needed it reported that)."""
        if self.source is None or all(f.kernel is not None for f in findings):
            return findings
        try:
            model = self.model
        except ModelCrash:
            return findings
        kernels = {id(k.node): k.base_name for k in model.kernels if k.specialization is None}
        owners = {**model.called_from, **kernels}
        if not owners:
            return findings
        import dataclasses

        functions = _function_ranges(self.source.nodes)
        out = []
        for f in findings:
            if f.kernel is None:
                line = f.span.start_line
                inside = [node for start, end, node in functions if start <= line <= end]
                # Sorted by start line: innermost last. A definition that is
                # a kernel wins over a helper that holds it.
                named = [owners[id(n)] for n in inside if id(n) in kernels] or [
                    owners[id(n)] for n in inside if id(n) in owners
                ]
                if named:
                    f = dataclasses.replace(f, kernel=named[-1])
            out.append(f)
        return out

    def take_findings(self) -> list[Finding]:
        out, self._findings = self._findings, []
        if self._model is not None and out and self._model.specializations:
            out = _name_launches(out, self._model)
        return out


def _name_launches(findings: list[Finding], model: "FileModel") -> list[Finding]:
    """Findings of one rule, with those of launch-site specializations
    (``Kernel.specialization``) merged in: a fault the kernel already shows
    on its own (same rule, same place) is reported once, without the launch;
    one that only a launch's inputs reveal names the launch. Messages name
    the kernel, never the specialization's internal name."""
    import dataclasses
    import re

    specs = {k.name: k for k in model.kernels if k.specialization is not None}
    internal = re.compile(r"(\w+)@launch:\w+")
    generic = {(f.rule_id, f.span) for f in findings if f.kernel not in specs}
    seen: set[tuple] = set()
    out: list[Finding] = []
    for f in findings:
        kernel = specs.get(f.kernel or "")
        message = internal.sub(r"\1", f.message)
        hint = internal.sub(r"\1", f.hint) if f.hint else f.hint
        if kernel is None:
            out.append(f if message == f.message and hint == f.hint else dataclasses.replace(f, message=message, hint=hint))
            continue
        if (f.rule_id, f.span) in generic:
            continue
        key = (f.rule_id, f.span, message)
        if key in seen:
            continue
        seen.add(key)
        launch = kernel.specialization
        assert launch is not None
        message += f" (with the inputs of the launch at {launch.describe()})"
        out.append(dataclasses.replace(f, message=message, hint=hint, kernel=kernel.base_name))
    return out


def _function_ranges(nodes: list[ast.AST]) -> list[tuple[int, int, ast.AST]]:
    """(first line with decorators, last line, node) of every function, by start."""
    out = []
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((start, node.end_lineno or node.lineno, node))
    out.sort(key=lambda r: (r[0], -r[1]))
    return out
