"""Semantics family (NKI7xx): the other errors of the Neuron compiler frontend.

The legacy frontend documented its errors in aws-neuron-sdk
``nki/api/nki.errors.rst`` (commit 1db4d74e, 36 kinds); the NKI 0.2-0.6
migration guide and release notes add the rules of the new compiler
(dynamic loops, sub-kernels, mutable tensors). Partition, memory and
migration errors have their own families; this module covers the rest
wherever the source decides them. Facts: ../shared/NKI-REFERENCE.md section
3 (LOOP, IDX, API, MEM09/MEM10 entries).

Shared syntax-level analysis (which names hold tensors or legacy index
expressions) lives in ``_semantics_facts``.
"""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.rule import Rule, invalid, valid

from ._common import Reporter
from ._semantics_facts import FileFacts, facts

ERRORS_DOC = "aws-neuron-sdk nki/api/nki.errors.rst @1db4d74e"


def _describe(f: FileFacts, fn: ast.AST, expr: ast.AST) -> str:
    """`name` (SBUF (128, 512)) for a tensor expression."""
    text = f.span_text(expr)
    refs = f.tensor_refs(fn, expr)
    if refs:
        data = refs[0].data
        buffer = str(data.get("buffer") or "").upper()
        shape = q.fmt_shape(q.shape_of(data))
        if data.get("shape_v") is None:
            return f"`{text}` ({buffer} tensor)" if buffer and buffer != "UNKNOWN" else f"`{text}` (a tensor)"
        return f"`{text}` ({buffer} {shape})" if buffer and buffer != "UNKNOWN" else f"`{text}` {shape}"
    return f"`{text}`"


def _dialect(f: FileFacts) -> str:
    return "legacy NKI (neuronxcc.nki)" if f.model.legacy else f"NKI {f.model.version}"


# ---------------------------------------------------------------------------
# Control flow on tensor values


class ControlFlowOnTensor(Rule):
    id = "NKI701"
    name = "control-flow-on-tensor"
    family = "semantics"
    level = Level.ERROR
    summary = "An if/while condition is a tensor: tensor data is not known when the kernel is compiled"
    explanation = f"""
NKI resolves every `if`, `while` and conditional expression while it
*specializes* the kernel, before anything runs on the device. At that time
a tensor has a shape, a dtype and a buffer but no values, so a condition
such as `if tile:` or `if nl.load(flag)[0, 0] > 0:` cannot be decided. The
legacy frontend rejects it with `err_dynamic_control_flow_not_supported`
("Dynamic control-flow depending on tensor value is currently not supported
by NKI", {ERRORS_DOC}); the current compiler evaluates conditions at
specialization time as well (`nki/get-started/nki-language-guide.rst`,
"Tensor Values" note and "Control Flow").

Levels: an error in legacy kernels (the documented frontend error). In a
legacy kernel, a condition on a parameter that the kernel also uses as a
tensor (`if bias:` with `nl.load(bias)` below) is a warning: it fails
whenever the caller passes a tensor. In `nki.*` kernels (NKI 0.2+) the
finding is a warning: the docs do not say what the new compiler does with a
tensor in a condition (`NkiTensor` defines no truth value), so the branch is
either rejected or constant — in both cases it does not test the data. An
optional parameter tested with `if t:` is not reported there, since it only
checks that a tensor was passed.

**Fix:** branch on specialization-time values (shapes, dtypes, Python
flags, `x is not None` — `x != None` from NKI 0.3, which has no `is`). For a
decision that depends on data, compute both sides and select with
`nl.where`/`nisa.select`/masks, or (NKI 0.2+) load the value into a
register with `nisa.register_load` and use a dynamic loop
(`nl.while_loop` in NKI 0.6, `while reg:` before).
"""
    references = (
        f"{ERRORS_DOC} (err_dynamic_control_flow_not_supported)",
        "aws-neuron-sdk nki/get-started/nki-language-guide.rst (Control Flow, Dynamic Control Flow)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def guarded_copy(a, flag):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                cnd = nl.load(flag[0:1, 0:1])
                tile = nl.load(a)
                if cnd:
                    nl.store(out, value=tile)
                return out
            """,
            lines=[9],
            title="legacy: branching on a loaded [1, 1] tile",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def guarded_copy(a, flag):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                f = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=f, src=flag)
                t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)
                if f[0, 0] > 0:
                    nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[12],
            title="current API: comparing an SBUF element in an if (a warning)",
            level=Level.WARNING,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_bias(a, bias=None):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.load(a)
                if bias:
                    t = nl.add(t, nl.load(bias))
                nl.store(out, value=t)
                return out
            """,
            lines=[8],
            title="an optional tensor parameter tested for truth: fails whenever a tensor is passed",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_bias(a, bias=None):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.load(a)
                if bias is not None:
                    t = nl.add(t, nl.load(bias))
                if a.shape[0] > 64:
                    t = nl.multiply(t, 2.0)
                nl.store(out, value=t)
                return out
            """,
            title="conditions on None checks and shapes are specialization-time values",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def guarded_copy(a, flag):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                f = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=f, src=flag)
                reg = nisa.register_alloc(0)
                nisa.register_load(reg, f)
                t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)

                def body(i):
                    nisa.dma_copy(dst=out, src=t)

                nl.fori_loop(0, reg, body)
                return out
            """,
            title="current API: the data-dependent decision is a register-driven loop",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        reporter = Reporter(ctx)
        for fn in f.device_functions():
            for node in f.own_nodes(fn):
                tests: list[tuple[ast.AST, str]] = []
                if isinstance(node, (ast.If, ast.While)):
                    tests.append((node.test, "while" if isinstance(node, ast.While) else "if"))
                elif isinstance(node, ast.IfExp):
                    tests.append((node.test, "conditional expression"))
                elif isinstance(node, ast.comprehension):
                    tests.extend((t, "comprehension filter") for t in node.ifs)
                for test, what in tests:
                    # `not t` / `a and t` are NKI702's; report the plain condition here.
                    if isinstance(test, (ast.BoolOp,)) or (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
                        continue
                    kind = f.tensor_value(fn, test)
                    if kind is None or (kind == "param" and not f.model.legacy):
                        continue
                    desc = _describe(f, fn, test)
                    if kind == "param":
                        reporter.at(
                            test,
                            f"`{what}` tests kernel parameter {desc}, which the kernel uses as a tensor: when the caller "
                            f"passes a tensor its truth value is data, unknown when the kernel is compiled "
                            f"(err_dynamic_control_flow_not_supported / err_ambiguous_tensor_truth_value)",
                            level=Level.WARNING,
                            hint="test `is not None` (`!= None` from NKI 0.3) or pass a Python flag",
                        )
                        continue
                    if f.model.legacy:
                        message = (f"`{what}` condition {desc} is tensor data, which is not known when the kernel is "
                                   f"compiled; legacy NKI cannot branch on it (err_dynamic_control_flow_not_supported)")
                    else:
                        message = (f"`{what}` condition {desc} is tensor data, which is not known when {_dialect(f)} "
                                   f"specializes the kernel: the condition cannot test the data (it is rejected or "
                                   f"constant)")
                    reporter.at(
                        test,
                        message,
                        level=Level.ERROR if f.model.legacy else Level.WARNING,
                        hint="branch on shapes or Python values; select data with nl.where / masks, or drive a "
                        "register loop (nisa.register_load + nl.while_loop)",
                    )


class AmbiguousTensorTruth(Rule):
    id = "NKI702"
    name = "tensor-truth-value"
    family = "semantics"
    level = Level.ERROR
    summary = "`and`, `or`, `not` or `bool()` applied to a tensor"
    explanation = f"""
Python's `and`, `or`, `not` and `bool()` need one truth value, but a
tensor holds many values, and none of them is known while the kernel is
compiled. The legacy frontend raises `err_ambiguous_tensor_truth_value`
("Cannot evaluate truth value of a multi-element tensor/array",
{ERRORS_DOC}); legacy masks must be combined with `&`, never `and`
(`general/nki/nki_known_issues.rst` @0521004c).

**Fix:** use the element-wise operators: `~t` (or `nl.logical_not`)
instead of `not t`, `a & b` / `a | b` (or `nl.logical_and` /
`nl.logical_or`) instead of `and` / `or`; test optional tensors with
`is not None` (`!= None` from NKI 0.3).

Levels follow NKI701: an error in legacy kernels, a warning in `nki.*`
kernels (where the truth value is at best constant).
"""
    references = (
        f"{ERRORS_DOC} (err_ambiguous_tensor_truth_value)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst @0521004c (mask conjunction)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def positive_mask(a):
                out = nl.ndarray(a.shape, dtype=nl.uint8, buffer=nl.shared_hbm)
                t = nl.load(a)
                neg = not (t > 0)
                nl.store(out, value=neg)
                return out
            """,
            lines=[8],
            title="legacy: `not` of a comparison tile",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def both(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                ta = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
                tb = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=ta, src=a)
                nisa.dma_copy(dst=tb, src=b)
                pick = ta and tb
                nisa.dma_copy(dst=out, src=pick)
                return out
            """,
            lines=[12],
            title="current API: `and` between two tiles (a warning)",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def positive_mask(a, b=None):
                out = nl.ndarray(a.shape, dtype=nl.uint8, buffer=nl.shared_hbm)
                t = nl.load(a)
                neg = ~(t > 0)
                if b is not None and a.shape[0] == 128:
                    neg = nl.logical_and(neg, nl.load(b))
                nl.store(out, value=neg)
                return out
            """,
            title="element-wise negation; `and` between specialization-time conditions",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        reporter = Reporter(ctx)
        for fn in f.device_functions():
            for node in f.own_nodes(fn):
                operands: list[tuple[ast.AST, str]] = []
                if isinstance(node, ast.BoolOp):
                    word = "and" if isinstance(node.op, ast.And) else "or"
                    operands = [(v, word) for v in node.values]
                elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                    operands = [(node.operand, "not")]
                elif (
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool"
                    and len(node.args) == 1
                ):
                    operands = [(node.args[0], "bool()")]
                for operand, word in operands:
                    kind = f.tensor_value(fn, operand)
                    if kind is None or (kind == "param" and not f.model.legacy):
                        continue
                    desc = _describe(f, fn, operand)
                    replacement = {"and": "&", "or": "|", "not": "~"}.get(word, "an explicit comparison")
                    if kind == "param":
                        reporter.at(
                            operand,
                            f"`{word}` takes the truth value of kernel parameter {desc}, which the kernel uses as a "
                            f"tensor: ambiguous whenever the caller passes a tensor (err_ambiguous_tensor_truth_value)",
                            level=Level.WARNING,
                            hint="test `is not None` (`!= None` from NKI 0.3)",
                        )
                        continue
                    reporter.at(
                        operand,
                        f"`{word}` takes the truth value of tensor {desc}; a tensor has many values and none is known "
                        f"when the kernel is compiled"
                        + (" (err_ambiguous_tensor_truth_value)" if f.model.legacy else ": the result does not depend "
                           "on the data"),
                        level=Level.ERROR if f.model.legacy else Level.WARNING,
                        hint=f"use the element-wise operator `{replacement}` (nl.logical_and / logical_or / logical_not)"
                        if word != "bool()" else "compare explicitly or use a specialization-time value",
                    )


class ControlFlowOnIndex(Rule):
    id = "NKI703"
    name = "control-flow-on-index"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: a condition depends on an nl.arange / nl.mgrid index expression"
    explanation = f"""
In legacy NKI, `nl.arange` and `nl.mgrid` build *index expressions*: symbolic
ranges the compiler turns into access patterns. They have no single value,
so an `if`, `while` or conditional expression on them cannot be decided; the
frontend raises `err_control_flow_condition_depending_on_arange`
("Control-flow depending on `nl.arange` or `nl.mgrid` is not supported",
{ERRORS_DOC}). Combining index conditions with `and` / `or` / `not` has the
same problem (legacy known issue: "We do not support using `and` for
masks", `general/nki/nki_known_issues.rst` @0521004c).

**Fix:** express the condition as a mask on the instruction
(`nl.add(x[0, j], y[0, j], mask=j > 2048)`); combine masks with `&`, `|`
and `~`.
"""
    references = (
        f"{ERRORS_DOC} (err_control_flow_condition_depending_on_arange)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst @0521004c (mask conjunction)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def shifted_add(x):
                out = nl.ndarray((1, 4096), dtype=x.dtype, buffer=nl.shared_hbm)
                for j0 in nl.affine_range(8):
                    i1 = nl.arange(512)[None, :]
                    j = j0 * 512 + i1
                    if j > 2048:
                        y = nl.add(nl.load(x[0, j]), nl.load(x[0, j - 2048]))
                        nl.store(out[0, j], value=y)
                return out
            """,
            lines=[10],
            title="branching on an arange-derived index",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def corner(a, n):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:512]
                t = nl.load(a[i_p, i_f], mask=(i_p < 64) and (i_f < 256))
                nl.store(out[i_p, i_f], value=t)
                return out
            """,
            lines=[8],
            title="`and` between mgrid masks",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def shifted_add(x):
                out = nl.ndarray((1, 4096), dtype=x.dtype, buffer=nl.shared_hbm)
                for j0 in nl.affine_range(8):
                    i1 = nl.arange(512)[None, :]
                    j = j0 * 512 + i1
                    if j0 > 3:
                        y = nl.load(x[0, j], mask=(j > 2048) & (j < 4096))
                        nl.store(out[0, j], value=y, mask=j > 2048)
                return out
            """,
            title="a mask on the instruction; branching on the loop variable is fine",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for fn in f.device_functions():
            for node in f.own_nodes(fn):
                tests: list[tuple[ast.AST, str]] = []
                if isinstance(node, (ast.If, ast.While)):
                    tests.append((node.test, "while" if isinstance(node, ast.While) else "if"))
                elif isinstance(node, ast.IfExp):
                    tests.append((node.test, "conditional expression"))
                for test, what in tests:
                    if isinstance(test, ast.BoolOp) or (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
                        continue
                    if f.index_value(fn, test):
                        reporter.at(
                            test,
                            f"`{what}` condition `{f.span_text(test)}` depends on an nl.arange / nl.mgrid index, which "
                            f"has no single value (err_control_flow_condition_depending_on_arange)",
                            hint="pass the condition as mask= to the instructions instead",
                        )
                operands: list[tuple[ast.AST, str]] = []
                if isinstance(node, ast.BoolOp):
                    operands = [(v, "and" if isinstance(node.op, ast.And) else "or") for v in node.values]
                elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                    operands = [(node.operand, "not")]
                for operand, word in operands:
                    if f.index_value(fn, operand):
                        replacement = {"and": "&", "or": "|", "not": "~"}[word]
                        reporter.at(
                            operand,
                            f"`{word}` takes the truth value of index expression `{f.span_text(operand)}` "
                            f"(nl.arange / nl.mgrid), which has no single value "
                            f"(err_control_flow_condition_depending_on_arange)",
                            hint=f"combine index conditions with `{replacement}`",
                        )


class WhileLoopEntryCondition(Rule):
    id = "NKI704"
    name = "while-loop-entry-condition"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: a while loop tests a runtime value before its first iteration (only do-while is supported)"
    explanation = f"""
The legacy NKI compiler lowers a `while` loop on a runtime value to a
device loop that always runs its first iteration and tests the condition
at the end of each iteration (do-while). A loop whose condition is a
runtime value *before* the first iteration — `while a_scalar < 10:` where
`a_scalar` was computed from a loaded tile — is rejected with
`err_while_loop_requires_unconditional_entry` ("Traditional while loops
are not supported - use do-while pattern instead", {ERRORS_DOC}).

**Fix:** enter the loop unconditionally and compute the condition at the
end of the body:

```python
cond = scalar(True)
while cond:
    ...
    cond = a_scalar < 10
```

(In NKI 0.6, `nl.while_loop(reg, body)` is a true while loop on a
register.)
"""
    references = (f"{ERRORS_DOC} (err_while_loop_requires_unconditional_entry)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt

            @nki.jit
            def count_up(a):
                out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
                a_tile = nl.load(a[0:1, 0:1])
                a_scalar = nt.scalar(a_tile)
                while a_scalar < 10:
                    a_tile = nl.add(a_tile, 1)
                    a_scalar = nt.scalar(a_tile)
                nl.store(out, value=a_tile)
                return out
            """,
            lines=[10],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt

            @nki.jit
            def count_up(a):
                out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
                a_tile = nl.load(a[0:1, 0:1])
                cond = nt.scalar(True)
                while cond:
                    a_tile = nl.add(a_tile, 1)
                    a_scalar = nt.scalar(a_tile)
                    cond = a_scalar < 10
                nl.store(out, value=a_tile)
                return out
            """,
            title="do-while: the first iteration is unconditional",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for fn in f.device_functions():
            scope = f.scope(fn)
            for node in f.own_nodes(fn):
                if not isinstance(node, ast.While) or f.tensor_value(fn, node.test):
                    continue  # a tensor condition is NKI701's
                culprit = self._runtime_at_entry(f, fn, scope, node)
                if culprit is None:
                    continue
                reporter.at(
                    node.test,
                    f"`while {f.span_text(node.test)}` tests a runtime value before the first iteration ({culprit}); "
                    f"legacy NKI only supports do-while loops (err_while_loop_requires_unconditional_entry)",
                    hint="enter the loop unconditionally (`cond = scalar(True)`) and update the condition at the "
                    "end of the body",
                )

    @staticmethod
    def _runtime_at_entry(f: FileFacts, fn: ast.AST, scope, loop: ast.While) -> str | None:
        if _reads_tensor(f, fn, loop.test):
            return f"`{f.span_text(loop.test)}` reads tensor data"
        for name in {n.id for n in ast.walk(loop.test) if isinstance(n, ast.Name)}:
            binds = [
                b for b in scope.bindings.get(name, [])
                if getattr(b.node, "lineno", 0) < loop.lineno and not _inside(f, b.node, loop)
            ]
            if not binds:
                continue
            last = max(binds, key=lambda b: (b.node.lineno, b.node.col_offset))
            if last.value is not None and _reads_tensor(f, fn, last.value):
                return f"`{name}` = `{f.span_text(last.value)}` on line {last.node.lineno}"
        return None


def _reads_tensor(f: FileFacts, fn: ast.AST, expr: ast.AST) -> bool:
    """The expression reads tensor data (not just its shape or dtype)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "dtype", "buffer", "ndim", "size"):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("len", "isinstance"):
            continue
        if isinstance(node, (ast.Name, ast.Call, ast.Subscript)) and f.tensor_value(fn, node) == "tensor":
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _inside(f: FileFacts, node: ast.AST, container: ast.AST) -> bool:
    return any(anc is container for anc in f.ancestors(node))


# ---------------------------------------------------------------------------
# Dynamic (register-driven) loops


class DynamicLoopMisuse(Rule):
    id = "NKI705"
    name = "dynamic-loop-misuse"
    family = "semantics"
    level = Level.ERROR
    summary = "A dynamic loop (fori_loop, while_loop, dynamic_range, while reg) is used in a way the compiler rejects"
    explanation = """
Dynamic loops run on the device: the body is compiled once and a hardware
loop instruction repeats it, with the induction variable held in a register
(`VirtualRegister`). The NKI docs list what that rules out
(`nki/migration/index.rst` "Rules for migrated loops", NKI 0.6;
`nki/deep-dives/nki-dynamic-loops.rst`; the `fori_loop`, `while_loop` and
`no_reorder` API pages; `nki-language-guide.rst` "Dynamic Control Flow"):

* the induction variable is frozen: `nisa.register_move` /
  `nisa.register_load` into it is an error, and it is not a Python number —
  no Python arithmetic, comparisons or `if` on it (read it through
  `.ap(scalar_offset=i)`); rebinding the Python name has no effect on the
  loop (a warning);
* a `fori_loop` body function cannot return a value; a `while_loop` body
  must return the register holding the next condition;
* tensors created inside a `fori_loop` / `while_loop` body cannot be used
  after the loop;
* dynamic loops cannot sit inside a `with nl.no_reorder():` block.

**Fix:** keep loop state in SBUF/HBM tensors declared before the loop and
update them in place; offset accesses with `.ap(..., scalar_offset=i)`;
return nothing from a `fori_loop` body and the condition register from a
`while_loop` body; put `no_reorder` inside the loop body instead of around
the loop.
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst (NKI 0.5 to 0.6, Rules for migrated loops)",
        "aws-neuron-sdk nki/deep-dives/nki-dynamic-loops.rst",
        "aws-neuron-sdk nki/api/nki/language/__init__.py (fori_loop, while_loop, no_reorder)",
        "aws-neuron-sdk nki/get-started/nki-language-guide.rst (Dynamic Control Flow)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_rows(data, n_rows):
                out = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.shared_hbm)
                n_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=n_sb, src=n_rows)
                n_reg = nisa.register_alloc(0)
                nisa.register_load(n_reg, n_sb)
                tile = nl.ndarray((1, 512), dtype=data.dtype, buffer=nl.sbuf)

                def body(i):
                    row = i * 1
                    nisa.dma_copy(dst=tile, src=data.ap([[512, 1], [1, 512]], scalar_offset=i, indirect_dim=0))
                    nisa.dma_copy(dst=out.ap([[512, 1], [1, 512]], scalar_offset=i, indirect_dim=0), src=tile)
                    return tile

                with nl.no_reorder():
                    nl.fori_loop(0, n_reg, body)
                return out
            """,
            lines=[15, 18, 21],
            title="arithmetic on the induction register, a returning body, a loop inside no_reorder",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def drain(flag):
                out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
                f = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=f, src=flag)
                reg = nisa.register_alloc(1)

                def body(r):
                    nisa.register_load(r, f)

                nl.while_loop(reg, body)
                for i in nl.dynamic_range(reg):
                    nisa.register_move(i, nisa.register_alloc(0))
                nisa.dma_copy(dst=out, src=f)
                return out
            """,
            lines=[12, 17],
            title="a while_loop body that returns nothing; writing a frozen induction register",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_rows(data, n_rows):
                out = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.shared_hbm)
                n_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=n_sb, src=n_rows)
                n_reg = nisa.register_alloc(0)
                nisa.register_load(n_reg, n_sb)
                tile = nl.ndarray((1, 512), dtype=data.dtype, buffer=nl.sbuf)

                def body(i):
                    with nl.no_reorder():
                        nisa.dma_copy(dst=tile, src=data.ap([[512, 1], [1, 512]], scalar_offset=i, indirect_dim=0))
                        nisa.dma_copy(dst=out.ap([[512, 1], [1, 512]], scalar_offset=i, indirect_dim=0), src=tile)

                nl.fori_loop(0, n_reg, body)

                def drain_body(r):
                    nisa.register_load(r, n_sb)
                    return r

                nl.while_loop(n_reg, drain_body)
                return out
            """,
            title="register offsets, no return from fori_loop, the condition returned from while_loop",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if f.model.legacy:
            return  # register loops are NKI 0.2+
        reporter = Reporter(ctx)
        for fn in f.device_functions():
            scope = f.scope(fn)
            for node in f.own_nodes(fn):
                if isinstance(node, ast.With) and any(_is_api(f, item.context_expr, "nki.language.no_reorder")
                                                       for item in node.items):
                    for inner in _own_statements_and_exprs(f, node.body):
                        what = _dynamic_loop(f, fn, inner)
                        if what:
                            where = inner.iter if isinstance(inner, ast.For) else (
                                inner.test if isinstance(inner, ast.While) else inner)
                            reporter.at(
                                where,
                                f"{what} inside `with nl.no_reorder():`; dynamic loops are not supported in a no_reorder "
                                f"block",
                                hint="put the no_reorder block inside the loop body",
                            )
                if isinstance(node, ast.Call) and (_is_api(f, node.func, "nki.language.fori_loop")
                                                   or _is_api(f, node.func, "nki.language.while_loop")):
                    self._check_body_call(f, fn, scope, node, reporter)
                if isinstance(node, ast.For) and f.loop_kind(node) == "dynamic_range" and isinstance(node.target, ast.Name):
                    self._check_induction(f, node.target.id, node.body, reporter, "nl.dynamic_range")

    def _check_body_call(self, f: FileFacts, fn, scope, call: ast.Call, reporter: Reporter) -> None:
        is_fori = _is_api(f, call.func, "nki.language.fori_loop")
        body_arg = _call_arg(call, 2 if is_fori else 1, "body_fun")
        if not isinstance(body_arg, ast.Name):
            return
        owner = scope.owner(body_arg.id)
        if owner is None:
            return
        defs = [b.node for b in owner.bindings.get(body_arg.id, [])]
        if len(defs) != 1 or not isinstance(defs[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        body = defs[0]
        api = "nl.fori_loop" if is_fori else "nl.while_loop"
        returns = [n for n in f.own_nodes(body) if isinstance(n, ast.Return)]
        valued = [r for r in returns if r.value is not None and not (isinstance(r.value, ast.Constant) and r.value.value is None)]
        if is_fori:
            for r in valued:
                reporter.at(
                    r,
                    f"the {api} body `{body.name}` returns a value; a fori_loop body cannot return anything (carry "
                    f"state in SBUF/HBM tensors)",
                    hint="remove the return value; update a tensor declared before the loop instead",
                )
        elif not valued:
            reporter.at(
                body,
                f"the {api} body `{body.name}` returns no value; it must return the register holding the next loop "
                f"condition (the loop runs while it is non-zero)",
                hint="`return r` after updating the condition register (nisa.register_load(r, flag))",
            )
        args = body.args.posonlyargs + body.args.args
        if args:
            self._check_induction(f, args[0].arg, body.body, reporter, api, frozen=is_fori)

    def _check_induction(self, f: FileFacts, name: str, body: list[ast.stmt], reporter: Reporter, api: str,
                         frozen: bool = True) -> None:
        for node in _own_statements_and_exprs(f, body):
            if frozen and isinstance(node, ast.Call) and (_is_api(f, node.func, "nki.isa.register_move")
                                               or _is_api(f, node.func, "nki.isa.register_load")):
                dst = _call_arg(node, 0, "dst")
                if isinstance(dst, ast.Name) and dst.id == name:
                    reporter.at(
                        node,
                        f"the induction register `{name}` of {api} is frozen; writing it with "
                        f"{f.span_text(node.func)} is an error",
                        hint="use a separate register or an SBUF tensor for loop state",
                    )
            elif frozen and isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    reporter.at(
                        node,
                        f"assigning the induction variable `{name}` of {api} has no effect on the loop (it is a "
                        f"read-only register)",
                        level=Level.WARNING,
                        hint="keep loop state in an SBUF tensor declared before the loop",
                    )
            if isinstance(node, (ast.BinOp, ast.Compare)) and not isinstance(getattr(node, "op", None), ast.MatMult):
                operands = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.left, *node.comparators]
                if any(isinstance(o, ast.Name) and o.id == name for o in operands):
                    what = "Python arithmetic" if isinstance(node, ast.BinOp) else "a Python comparison"
                    reporter.at(
                        node,
                        f"{what} on the induction variable `{name}` of {api}: it is a register whose value exists only "
                        f"on the device (`{f.span_text(node)}`)",
                        hint="read the register through .ap(..., scalar_offset=...) instead of computing with it",
                    )
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "range", "float"):
                if any(isinstance(a, ast.Name) and a.id == name for a in node.args):
                    reporter.at(
                        node,
                        f"`{node.func.id}()` of the induction variable `{name}` of {api}: it is a register whose value "
                        f"exists only on the device",
                        hint="read the register through .ap(..., scalar_offset=...)",
                    )


def _is_api(f: FileFacts, expr: ast.AST, name: str) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    qual = f.bindings.resolve_nki(target)
    return qual is not None and qual.name == name


def _call_arg(call: ast.Call, index: int, keyword: str) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return None


def _own_statements_and_exprs(f: FileFacts, body: list[ast.stmt]):
    """Every node under a block, not descending into nested functions."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _dynamic_loop(f: FileFacts, fn, node: ast.AST) -> str | None:
    """A description of a dynamic loop construct, or None."""
    if isinstance(node, ast.Call):
        if _is_api(f, node.func, "nki.language.fori_loop"):
            return "nl.fori_loop"
        if _is_api(f, node.func, "nki.language.while_loop"):
            return "nl.while_loop"
    if isinstance(node, ast.For) and f.loop_kind(node) == "dynamic_range":
        return "a `for ... in nl.dynamic_range(...)` loop"
    if isinstance(node, ast.While) and isinstance(node.test, ast.Name) and _is_register(f, fn, node.test.id):
        return f"a `while {node.test.id}:` register loop"
    return None


def _is_register(f: FileFacts, fn, name: str) -> bool:
    owner = f.scope(fn).owner(name)
    if owner is None:
        return False
    binds = owner.bindings.get(name, [])
    return bool(binds) and all(
        isinstance(b.value, ast.Call) and _is_api(f, b.value.func, "nki.isa.register_alloc") for b in binds
    )
