"""NKI611 kernel-language-restriction."""

from __future__ import annotations

import ast
import re

from nkilint.findings import Edit, Level, Span
from nkilint.model.bindings import Gen
from nkilint.rule import invalid, valid
from nkilint.versions import V0_3

from ._base import MIGRATION_GUIDE, Issues, MigrationRule, make_fix, tuple_fix
from ._index import NameIndex
from ._kernels import kernel_target


class KernelLanguageRestriction(MigrationRule):
    id = "NKI611"
    name = "kernel-language-restriction"
    family = "migration"
    level = Level.ERROR
    fixable = True
    fix_follows_target = True
    summary = "Python the NKI 0.3 compiler rejects: `is`/`is not`, `*` in a kernel signature, list kernel arguments"
    explanation = """
The NKI 0.3 compiler validates the kernel language more strictly
(aws-neuron-sdk `nki/migration/index.rst`, 0.2 -> 0.3 "Language
restrictions"):

* no keyword-only separator `*` in a kernel's signature (`@nki.jit def
  k(x, *, flag=True)`);
* no `is` / `is not` inside kernels ("object identity is not meaningful
  during tracing"). Comparisons with `None` are not reported: the NKI
  team's own nki-library kernels (targeting 0.6) use `x is None` in about 50
  places, so the compiler evidently accepts them;
* no list kernel arguments (defaults in the signature, or lists passed at
  a call site of the kernel): use tuples, which are immutable and hashable
  (kernel caching).

Reported for targets 0.3+, in `nki.*` code, and as port items in legacy
code.

**Fix:** remove `*,` (parameters with defaults last) — `nkilint check --fix`
does this when the result is valid Python, and it keeps every existing call
working; with `--unsafe-fixes` it also rewrites `a is b` as `a == b`
(equality is not identity) and list literals as tuples (list-only
operations on them would break).
"""
    references = (f"{MIGRATION_GUIDE} (0.2 -> 0.3, Language restrictions)",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, *, factor=2.0, perm=[0, 1]):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if factor is True:
                    pass
                return out

            def run(x):
                return scale_kernel(x, factor=3.0, perm=[1, 0])
            """,
            lines=[5, 7, 12],
            fixed="""
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, factor=2.0, perm=[0, 1]):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if factor is True:
                    pass
                return out

            def run(x):
                return scale_kernel(x, factor=3.0, perm=[1, 0])
            """,
        ),
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, mode=None, perm=(0, 1)):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if mode is not None and mode is not nl.float32:
                    pass
                return out

            def run(x):
                return scale_kernel(x, perm=[1, 0])
            """,
            lines=[7, 12],
            title="with --unsafe-fixes",
            unsafe_fixes=True,
            fixed="""
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, mode=None, perm=(0, 1)):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if mode is not None and mode != nl.float32:
                    pass
                return out

            def run(x):
                return scale_kernel(x, perm=(1, 0))
            """,
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, *, factor=2.0):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if factor is True:
                    pass
                return out
            """,
            title="NKI 0.2 accepted these",
            nki_version="0.2",
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, bias=None, factor=2.0, perm=(0, 1)):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if bias is not None and factor == 2.0:
                    pass
                return out

            def helper(x, *, flag=False):
                return x is flag
            """,
            title="`is None`, and host helpers, are fine",
        ),
    )

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        if index.version < V0_3:
            return
        for node in index.nodes:
            if isinstance(node, ast.Compare):
                _identity_compare(index, out, node)
        for call in index.calls:
            func = call.func
            if isinstance(func, ast.Subscript):
                _list_arguments(index, out, call, func.value)
                continue
            qual = index.bindings.resolve(func)
            if qual is None or not qual.is_nki:
                _list_arguments(index, out, call, func)
        for fn, gen in index.roots.items():
            _kernel_signature(index, out, fn, gen)


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _identity_compare(index: NameIndex, out: Issues, node: ast.Compare) -> None:
    if index.bindings.dialect.value == "none":
        return
    if not any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
        return
    left = node.left
    pairs = []
    for op, right in zip(node.ops, node.comparators):
        pairs.append((op, left, right))
        left = right
    bad = [(op, a, b) for op, a, b in pairs if isinstance(op, (ast.Is, ast.IsNot)) and not (_is_none(a) or _is_none(b))]
    if not bad or not index.in_device(node):
        return
    gen = index.file_gen()
    fix = None
    if len(node.ops) == 1 and node.lineno == node.end_lineno:
        op = "==" if isinstance(node.ops[0], ast.Is) else "!="
        fix = make_fix(f"use {op}", [Edit(index.span(node), f"{index.text(node.left)} {op} "
                                                           f"{index.text(node.comparators[0])}")], False)
    # A warning, not an error: the 0.3 migration guide says `is` is unsupported,
    # but nki-library's own trace-tested kernels compare objects with `is`
    # (test_tensor_view.py), so some uses evidently compile.
    out.add(node, Level.WARNING,
            f"`{index.text(node)}` in a kernel: the NKI 0.3 migration guide says the compiler does not support `is` / "
            f"`is not` (comparisons with None are accepted){index.port_note(gen)}",
            hint="use == / != (they compare values, not identity)", fix=fix, gen=gen)


def _kernel_signature(index: NameIndex, out: Issues, fn: ast.FunctionDef, gen: Gen) -> None:
    args = fn.args
    if args.kwonlyargs and args.vararg is None:
        first = args.kwonlyargs[0]
        star = _bare_star_span(index, first)
        fix = None
        defaults_before = bool(args.defaults)
        all_kw_defaults = all(d is not None for d in args.kw_defaults)
        if star is not None and (not defaults_before or all_kw_defaults):
            fix = make_fix("remove the * separator", [Edit(star, "")], True)
        out.add(star or fn, index.level(gen, fn, device=True),
                f"kernel `{fn.name}` has a keyword-only `*` separator: the NKI 0.3 compiler rejects `*` in kernel "
                f"signatures{index.port_note(gen)}",
                hint="remove `*,` and keep the parameters with defaults at the end", fix=fix, gen=gen)
    for default in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
        if isinstance(default, ast.List):
            out.add(default, index.level(gen, fn, device=True),
                    f"kernel `{fn.name}` has a list default `{index.text(default)}`: the NKI 0.3 compiler rejects list "
                    f"kernel arguments{index.port_note(gen)}",
                    hint="use a tuple", fix=tuple_fix(index, default), gen=gen)


def _bare_star_span(index: NameIndex, first: ast.arg) -> Span | None:
    """The span of ``*, `` before the first keyword-only parameter."""
    line = index.source.line_text(first.lineno)
    col = index.source.byte_col_to_char(first.lineno, first.col_offset)
    m = re.search(r"\*\s*,\s*$", line[:col])
    if m is None:
        return None
    return Span(first.lineno, m.start() + 1, first.lineno, col + 1)


def _list_arguments(index: NameIndex, out: Issues, call: ast.Call, target: ast.AST) -> None:
    values = list(call.args) + [k.value for k in call.keywords]
    lists = [v for v in values if isinstance(v, ast.List)]
    if not lists:
        return
    gen = kernel_target(index, target)
    if gen is None:
        return
    for value in lists:
        out.add(value, index.port_level(gen),
                f"list argument `{index.text(value)}` passed to kernel `{index.text(target)}`: the NKI 0.3 compiler "
                f"rejects list kernel arguments{index.port_note(gen)}",
                hint="pass a tuple", fix=tuple_fix(index, value), gen=gen)
