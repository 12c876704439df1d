"""NKI727 api-call-signature: an NKI call the target release's signature rejects
(a required argument missing, too many positional arguments, a parameter given twice)."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.bindings import Gen
from nkilint.model.callsig import Binding, bind, signature_for
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import short_text
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter


class ApiCallSignature(Rule):
    id = "NKI727"
    name = "api-call-signature"
    family = "semantics"
    level = Level.ERROR
    summary = "An NKI call misses a required argument, passes too many positional arguments or one twice"
    explanation = """
Checks every `nl.*`, `nisa.*` and `nki.*` call of device code against the
target release's signature of that API (the API table built from the
release's stubs): a required parameter left unbound (`nl.sum(x)` without
`axis`), more positional arguments than the signature takes (`dtype` of
most `nki.language` calls is keyword-only in the legacy API), and a
parameter passed both by position and by keyword.

**Why on Trainium:** the call never reaches the compiler. The legacy
tracer calls the API's Python function, which raises `TypeError: missing a
required argument` (or `takes 2 positional arguments but 3 were given`);
the NKI 0.2+ frontend checks the call against the same signature and
rejects it. Reductions without `axis` are the classic case: NumPy's
default (reduce everything) does not exist in NKI.

Unknown keywords are NKI615 (unknown-keyword); ISA calls written with the
legacy calling convention (no `dst`) are NKI609. A signature that the
table only carries over from an earlier release, or that comes from a
deep-dive rather than the API page, gives a warning instead of an error.

**Fix:** pass the missing argument (the message names it and the
signature), or pass the extra arguments by keyword.
"""
    references = (
        "nkilint/data/nki_api.json (API stubs of Neuron SDK 2.20-2.32, API pages of 2.33-2.34)",
        "aws-neuron-sdk nki/migration/index.rst (the NKI 0.2 signatures of nki.isa and nki.language)",
        "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/nki.language.html",
    )
    requires = (DeviceCode, Scopes)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                s = nl.sum(t)
                nl.store(out, s)
                return out
            """,
            lines=[8],
            title="legacy: a reduction without axis",
            level=Level.ERROR,
            nki_version="0.1",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), nl.float32, nl.sbuf, "t", None, 7)
                nisa.dma_copy(t, x, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[8, 9],
            title="current (NKI 0.6): too many positional arguments, src given twice",
            level=Level.ERROR,
            nki_version="0.6",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_max(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                m = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(m, nl.maximum, t)
                nisa.dma_copy(dst=out, src=m)
                return out
            """,
            lines=[11],
            title="NKI 0.8 (a signature carried over from 2.32): a warning",
            level=Level.WARNING,
            nki_version="0.8",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                s = nl.sum(t, axis=1, keepdims=True)
                nl.store(out, s)
                return out
            """,
            title="the axis passed",
            nki_version="0.1",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy(x, *shape):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray(*shape)
                nisa.dma_copy(t, x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="unpacked arguments are not judged",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        device = ctx.analysis(DeviceCode)
        scopes = ctx.analysis(Scopes)
        parents = scopes.file.parents
        bindings = ctx.model.bindings
        for node in device.all_nodes():
            if not isinstance(node, ast.Call):
                continue
            qual = bindings.resolve(node.func)
            if qual is None or not qual.is_nki:
                continue
            found = signature_for(qual, ctx.release)
            if found is None:
                continue
            sig, sdk = found
            binding = bind(node, sig, sdk)
            if not binding.faulty or _legacy_isa_convention(node, qual.gen, sig, binding, parents):
                continue
            fn = device.owner(node)
            _report(reporter, node, qual.name, binding, fn.name if fn is not None else None)


def _legacy_isa_convention(call: ast.Call, gen: Gen, sig, binding: Binding, parents: dict) -> bool:
    """NKI609 reports a current-namespace ISA call written the legacy way
    (its result used, no ``dst``): the whole call, not its arguments."""
    if gen is not Gen.CURRENT or not sig.name.startswith("nki.isa.") or not binding.missing:
        return False
    first = [p.name for p in sig.positional[:1]]
    if first != ["dst"]:
        return False
    parent = parents.get(id(call))
    result_used = parent is not None and not isinstance(parent, ast.Expr)
    shape_first = sig.name in ("nki.isa.memset", "nki.isa.iota") and call.args and isinstance(
        call.args[0], (ast.Tuple, ast.List))
    return "dst" in binding.missing or result_used or bool(shape_first)


def _report(reporter: Reporter, call: ast.Call, api: str, b: Binding, kernel: str | None) -> None:
    short = short_text(call.func)
    sig = b.signature
    release = f"Neuron SDK {b.sdk.removesuffix('.0')}"
    params = ", ".join(_param_text(p) for p in sig.params or () if p.kind in ("p", "k", "o", "*", "**"))
    where = f"`{short}({params})` in {release}"
    if not sig.verified:
        where += (" (a signature carried over from an earlier release)" if sig.source == "carried"
                  else " (a signature read from the documentation's prose)")
    level = Level.ERROR if sig.verified else Level.WARNING
    if b.missing:
        names = ", ".join(f"`{n}`" for n in b.missing)
        what = "reductions have no default axis: " if any(n == "axis" for n in b.missing) else ""
        reporter.at(
            call,
            f"`{short}(...)` misses the required argument{'s' if len(b.missing) > 1 else ''} {names} of {where}: "
            f"{what}the call raises a TypeError before it reaches the compiler",
            level=level,
            hint=f"pass {', '.join(f'{n}=...' for n in b.missing)}",
            kernel=kernel,
        )
    if b.extra_positional:
        keyword_only = [p.name for p in sig.params or () if p.kind == "k"]
        tail = f"; {', '.join(keyword_only)} {'is' if len(keyword_only) == 1 else 'are'} keyword-only" \
            if keyword_only else ""
        arg = call.args[b.max_positional]
        reporter.at(
            arg,
            f"`{short}(...)` passes {len(call.args)} positional arguments; {where} takes at most "
            f"{b.max_positional}{tail}",
            level=level,
            hint="pass the arguments after the first "
                 f"{b.max_positional} by keyword (name=value)" if keyword_only or b.max_positional else
                 "pass the arguments by keyword",
            kernel=kernel,
        )
    for name in b.doubled:
        kw = next(k for k in call.keywords if k.arg == name)
        reporter.at(
            kw,
            f"`{short}(...)` passes `{name}` both by position and as `{name}=` ({where}): Python raises "
            "'got multiple values for argument'",
            level=level,
            hint=f"drop one of the two `{name}` arguments",
            kernel=kernel,
        )


def _param_text(p) -> str:
    if p.kind == "*":
        return f"*{p.name}"
    if p.kind == "**":
        return f"**{p.name}"
    return p.name if p.required else f"{p.name}={p.default}"
