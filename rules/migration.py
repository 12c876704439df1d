"""Migration family (NKI6xx): what the target NKI version deprecated,
removed or changed. Facts: ../shared/NKI-REFERENCE.md section 1 and the API
table in nkilint/data/nki_api.json."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.bindings import Gen, collect_bindings
from nkilint.rule import Rule, invalid, valid
from nkilint.versions import V0_2, V0_4


def _current_spelling(module: str, node: ast.AST) -> str:
    """How the import statement reads in the nki.* namespace."""
    if isinstance(node, ast.Import):
        parts = []
        for alias in node.names:
            name = alias.name.replace("neuronxcc.nki", "nki", 1) if alias.name.startswith("neuronxcc.nki") else alias.name
            redundant = alias.asname is None or alias.asname == name
            parts.append(name if redundant else f"{name} as {alias.asname}")
        return "import " + ", ".join(parts)
    assert isinstance(node, ast.ImportFrom)
    mod = module
    if mod == "neuronxcc":
        names = [a for a in node.names if a.name == "nki"]
        return "import nki" if names and not names[0].asname else f"import nki as {names[0].asname}" if names else "import nki"
    mod = mod.replace("neuronxcc.nki", "nki", 1)
    names = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in node.names)
    return f"from {mod} import {names}"


class LegacyNamespace(Rule):
    id = "NKI601"
    name = "legacy-namespace"
    family = "migration"
    level = Level.ERROR
    precision = "very-high"
    summary = "The legacy neuronxcc.nki namespace is deprecated (NKI 0.2) and a compile error inside kernels (NKI 0.4+)"
    explanation = """
NKI 0.2 (Neuron SDK 2.27) introduced the `nki.*` namespace and a new
compiler; the legacy `neuronxcc.nki.*` namespace (NKI 0.1) became
deprecated. From NKI 0.4 (Neuron SDK 2.30), using `neuronxcc.nki.*` inside
an NKI kernel is a **compilation error** (aws-neuron-sdk
`nki/migration/index.rst`, "neuronxcc.nki.* inside kernels — now a
compilation error"; `release-notes/components/nki.rst`).

The level follows the target NKI version (`--nki-version`, default the
newest): nothing for 0.1, a warning for 0.2 and 0.3, an error from 0.4 when
the file has device code that uses the legacy namespace (a warning when the
file only imports it).

**Fix:** import from `nki` instead (`import nki.language as nl`,
`import nki.isa as nisa`) and port the kernel to the current API: ISA calls
take `dst` first, `nl.load`/`nl.store` become `nisa.dma_copy`, `nl.arange`
and `mask=` become slices. Changing only the import is not enough, so
nkilint does not rewrite it automatically; the other migration rules name
each construct to port.
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst",
        "aws-neuron-sdk release-notes/components/nki.rst (NKI 0.4.0)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                tile = nl.load(a)
                nl.store(out, value=tile)
                return out
            """,
            lines=[1, 2],
            title="legacy kernel, target NKI 0.6",
            nki_version="0.6",
            level=Level.ERROR,
        ),
        invalid(
            """
            from neuronxcc import nki
            """,
            lines=[1],
            title="deprecated in NKI 0.3 (a warning)",
            nki_version="0.3",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            """,
            title="the target is the legacy API itself",
            nki_version="0.1",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa
            """,
            nki_version="0.6",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        version = ctx.nki_version
        if version < V0_2:
            return
        bindings = collect_bindings(ctx.tree)
        legacy = bindings.legacy_imports()
        if not legacy:
            return
        used_in_device_code = _legacy_used_in_functions(ctx.tree, bindings)
        seen: set[int] = set()
        for record in legacy:
            if id(record.node) in seen:
                continue
            seen.add(id(record.node))
            module = record.module
            replacement = _current_spelling(module, record.node)
            if version >= V0_4 and used_in_device_code:
                level = Level.ERROR
                message = (
                    f"the legacy namespace '{module}' is a compile error inside NKI kernels from NKI 0.4 "
                    f"(Neuron SDK 2.30); the target is NKI {version}"
                )
            else:
                level = Level.WARNING
                message = f"the legacy namespace '{module}' is deprecated since NKI 0.2 (Neuron SDK 2.27)"
                if version >= V0_4:
                    message += "; using it inside a kernel is a compile error from NKI 0.4"
                else:
                    message += " and becomes a compile error inside kernels in NKI 0.4"
            ctx.report(
                record.node,
                message,
                level=level,
                hint=f"use '{replacement}' and port the kernel to the nki.* API (dst-first nki.isa calls, "
                "nisa.dma_copy for nl.load/nl.store, slices for arange/mask)",
            )


def _legacy_used_in_functions(tree: ast.Module, bindings) -> bool:
    """Whether any function body uses a legacy NKI name (device code, or
    code that builds it)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(getattr(sub, "ctx", None), ast.Load):
                    qual = bindings.resolve(sub)
                    if qual is not None and qual.gen is Gen.LEGACY and qual.name.startswith("nki."):
                        return True
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                qual = bindings.resolve(target)
                if qual is not None and qual.gen is Gen.LEGACY:
                    return True
    return False
