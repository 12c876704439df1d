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
from ._semantics_checks import (
    _describe,
    _dialect,
    _truth_tested,
    _reads_tensor,
    _inside,
    _is_api,
    _call_arg,
    _own_statements_and_exprs,
    _dynamic_loop,
    _is_mutable_annotation,
    _root_kernels,
    _kernel_args,
    _writes,
    _experimental_flag,
    _trace_mode,
    _called_from_kernel,
    _returned_names,
    _READ_PARAMS,
    _block_reports,
    _MATMULS,
    _indirect_destination,
    _written_expr,
    _loop_dependents,
    _views,
    _index_elements,
    _symbolic_loop_vars,
    _mask_problem,
    _index_names_in,
    _tile_positions,
    _ops_on_view,
    _index_span,
    _guarded,
    _tensor_api,
    _launcher,
    _decorated_kernel,
    _const_dim,
    _trusted_shape,
    _in_dead_loop,
    _strip_ones,
    _ACTIVATIONS,
    _fully_allocated,
    _vector_engine,
    _true,
)
from ._semantics_facts import FileFacts, facts

ERRORS_DOC = "aws-neuron-sdk nki/api/nki.errors.rst @1db4d74e"


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
                    operands = [(v, word) for v in _truth_tested(f, node)]
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
masks", `general/nki/nki_known_issues.rst` @0521004c); that case is a
warning, because Python evaluates it without the frontend noticing (an
SDK test, `nki/test/test_nki_isa_nc_match_replace8.py`, passes such a
mask) and the mask silently becomes one of the operands.

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
            title="`and` between mgrid masks (a warning: the mask silently becomes one operand)",
            level=Level.WARNING,
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
                    operands = [(v, "and" if isinstance(node.op, ast.And) else "or") for v in _truth_tested(f, node)]
                elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                    operands = [(node.operand, "not")]
                for operand, word in operands:
                    if f.index_value(fn, operand):
                        replacement = {"and": "&", "or": "|", "not": "~"}[word]
                        reporter.at(
                            operand,
                            f"`{word}` takes the truth value of index expression `{f.span_text(operand)}` "
                            f"(nl.arange / nl.mgrid), which has no single value: it does not combine the conditions "
                            f"element-wise (legacy known issue: `and` is not supported for masks)",
                            level=Level.WARNING,
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
            def first_row(data, n_rows):
                out = nl.ndarray((1, 512), dtype=data.dtype, buffer=nl.shared_hbm)
                n_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=n_sb, src=n_rows)
                n_reg = nisa.register_alloc(0)
                nisa.register_load(n_reg, n_sb)
                rows = []

                def body(i):
                    row = nl.ndarray((1, 512), dtype=data.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=row, src=data.ap([[512, 1], [1, 512]], scalar_offset=i, indirect_dim=0))
                    rows.append(row)

                nl.fori_loop(0, n_reg, body)
                nisa.dma_copy(dst=out, src=rows[0])
                return out
            """,
            lines=[20],
            title="a tile created in the fori_loop body, used after the loop",
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
                        what = _dynamic_loop(f, inner)
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
        self._check_escaping_tensors(f, reporter)

    @staticmethod
    def _check_escaping_tensors(f: FileFacts, reporter: Reporter) -> None:
        """Tensors created in a fori_loop body and used after the loop."""
        for kernel, graph in f.model.graphs():
            for tensor_id, data in graph.tensors():
                body_loops = [l for l in data.get("loops", ()) if graph.attrs(l).get("loop_kind") == "fori_loop"]
                if not body_loops or data.get("origin") != "alloc":
                    continue
                loop_id = body_loops[-1]
                for op_id in graph.ops_reading(tensor_id) + graph.ops_writing(tensor_id):
                    op = graph.attrs(op_id)
                    if loop_id in op.get("loops", ()):
                        continue
                    loop_site = graph.attrs(loop_id).get("site")
                    line = f" (line {loop_site.line})" if loop_site is not None else ""
                    reporter.at_site(
                        op.get("site"),
                        f"tensor `{q.tensor_name(data)}` is created inside the body of the nl.fori_loop{line} and used "
                        f"after the loop; tensors declared in a dynamic-loop body cannot be referenced outside it",
                        hint="declare the tensor before the loop and fill it inside the body",
                        kernel=kernel.name,
                    )

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


# ---------------------------------------------------------------------------
# Kernel parameters and outputs


class ImmutableParameterWritten(Rule):
    id = "NKI706"
    name = "immutable-parameter-written"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: a kernel writes one of its input parameters, which are immutable unless annotated nt.mutable_tensor"
    explanation = f"""
The parameters of a legacy top-level `nki.jit` kernel (one that returns
its outputs, the calling convention since Neuron 2.20.1) are immutable by
default;
storing into one (`nl.store(in_tensor, ...)`, `in_tensor[...] = ...`, a
DMA whose destination is a parameter) is rejected with
`err_cannot_update_immutable_parameter` ("Cannot update immutable
parameter", {ERRORS_DOC}).

Kernels in the older pass-by-reference style (`nki.trace`, `baremetal`,
torch `nki_jit`, or an `nki.jit` kernel that returns nothing) write their
output parameters by design and are not reported; neither are sub-kernels
(`@nki.jit(mode='trace')`, or a kernel another kernel of the file calls),
whose parameters are the caller's tensors, nor kernels compiled with
`experimental_flags='enable-mutable-parameter'` (as in the SDK team's
token-generation attention kernel).

**Fix:** annotate the parameter as mutable (`in_tensor: nt.mutable_tensor`
with `import neuronxcc.nki.typing as nt`) and return it, or write into a
new output tensor (`nl.ndarray(..., buffer=nl.shared_hbm)`) and return
that.
"""
    references = (f"{ERRORS_DOC} (err_cannot_update_immutable_parameter)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def increment(in_tensor):
                x = nl.load(in_tensor)
                y = x + 1
                nl.store(in_tensor, value=y)
                return in_tensor
            """,
            lines=[8],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt

            @nki.jit
            def increment(in_tensor: nt.mutable_tensor):
                x = nl.load(in_tensor)
                y = x + 1
                nl.store(in_tensor, value=y)
                return in_tensor
            """,
            title="annotated mutable and returned",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def increment(in_tensor):
                out = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
                x = nl.load(in_tensor)
                nl.store(out, value=x + 1)
                return out
            """,
            title="a new output tensor",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if not f.model.legacy:
            return  # NKI 0.2+ kernels may write arguments (the docs do)
        reporter = Reporter(ctx)
        for kernel, fn in _root_kernels(f):
            # Older legacy entry points (nki.trace, baremetal, torch nki_jit) took outputs by reference; the
            # immutability rule is that of nki.jit kernels that return their outputs.
            if "nki.jit" not in kernel.how or not any(
                isinstance(n, ast.Return) and n.value is not None for n in f.own_nodes(fn)
            ) or _trace_mode(kernel.decorator) or _called_from_kernel(f, kernel) or _experimental_flag(
                kernel.decorator, "enable-mutable-parameter"
            ):
                continue
            for arg in _kernel_args(fn):
                if _is_mutable_annotation(f, arg.annotation):
                    continue
                for ref in f.param_tensors.get(id(arg), []):
                    if ref.kernel is not kernel:
                        continue
                    for op_id in _writes(ref):
                        op = ref.graph.attrs(op_id)
                        api = str(op.get("api", "")).rpartition(".")[2]
                        what = "an assignment" if op.get("assignment") or op.get("augmented") else f"nl.{api}" \
                            if op.get("api", "").startswith("nki.language.") else f"nisa.{api}"
                        reporter.at_site(
                            op.get("site"),
                            f"{what} writes kernel parameter `{arg.arg}` of `{kernel.name}`; kernel parameters are "
                            f"immutable unless annotated nt.mutable_tensor (err_cannot_update_immutable_parameter)",
                            hint=f"annotate `{arg.arg}: nt.mutable_tensor` and return it, or write a new shared_hbm "
                            f"output",
                            kernel=kernel.name,
                        )


class MutableParameterNotReturned(Rule):
    id = "NKI707"
    name = "mutable-parameter-not-returned"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: a kernel parameter annotated nt.mutable_tensor is not returned"
    explanation = f"""
A legacy kernel parameter annotated `nt.mutable_tensor` is an output the
kernel updates in place, and the frontend requires the kernel to return it:
otherwise it raises `err_mutable_parameter_not_returned` ("A mutable kernel
parameter must be returned by `return`", {ERRORS_DOC}). (NKI 0.3+ kernels
may update a `nki.typing.mutable_tensor` in place without returning it;
this rule only checks legacy kernels.)

**Fix:** add the parameter to the returned values
(`return out_tensor, in_tensor`), or drop the annotation if the kernel does
not need to update it.
"""
    references = (f"{ERRORS_DOC} (err_mutable_parameter_not_returned)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt

            @nki.jit
            def update(in_tensor: nt.mutable_tensor):
                out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
                x = nl.load(in_tensor)
                y = x + 1
                nl.store(out_tensor, value=y)
                nl.store(in_tensor, value=y)
                return out_tensor
            """,
            lines=[12],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt

            @nki.jit
            def update(in_tensor: nt.mutable_tensor):
                out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
                x = nl.load(in_tensor)
                y = x + 1
                nl.store(out_tensor, value=y)
                nl.store(in_tensor, value=y)
                return out_tensor, in_tensor
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for kernel, fn in _root_kernels(f):
            mutable = [a for a in _kernel_args(fn) if _is_mutable_annotation(f, a.annotation)]
            if not mutable or _experimental_flag(kernel.decorator, "skip-mutable-return-check"):
                continue
            returns = [n for n in f.own_nodes(fn) if isinstance(n, ast.Return)]
            for arg in mutable:
                if not returns:
                    reporter.at(
                        arg,
                        f"mutable parameter `{arg.arg}` of `{kernel.name}` is never returned; legacy NKI requires "
                        f"every nt.mutable_tensor parameter to be returned (err_mutable_parameter_not_returned)",
                        hint=f"add `return {arg.arg}` (with the other outputs)",
                        kernel=kernel.name,
                    )
                    continue
                for ret in returns:
                    if arg.arg not in _returned_names(ret):
                        reporter.at(
                            ret,
                            f"this return of `{kernel.name}` does not return mutable parameter `{arg.arg}`; legacy NKI "
                            f"requires every nt.mutable_tensor parameter to be returned "
                            f"(err_mutable_parameter_not_returned)",
                            hint=f"return `{arg.arg}` as well",
                            kernel=kernel.name,
                        )


class OutputNeverWritten(Rule):
    id = "NKI708"
    name = "output-never-written"
    family = "semantics"
    level = Level.ERROR
    summary = "A kernel output (returned tensor or mutable parameter) is never written, or only in a loop that never runs"
    explanation = f"""
Every output of a kernel must be written. The legacy frontend rejects a
kernel whose output is never stored with `err_tensor_output_not_written_to`
({ERRORS_DOC}); its most common cause is a dead loop whose trip count is 0,
such as `nl.affine_range(M // N)` with `N > M`. The NKI 0.3+ compiler
requires every `nt.mutable_tensor` parameter to have at least one store
(NCC_IGCA090, quoted in aws-neuron/nki-library `core/router_topk`), and an
unwritten returned tensor holds garbage (legacy known issue "Unwritten
output tensor will have garbage data").

Levels: an error for legacy kernels and for mutable parameters; a warning
for a returned tensor of an NKI 0.2+ kernel (garbage output). Outputs
passed to helpers the model cannot follow are not reported.

**Fix:** check the range expressions (`math.ceil(M / N)` or
`(M + N - 1) // N` instead of `M // N`, with the tail handled by a mask or
a `min()`-bounded slice), and make sure every output is written on every
path — or initialize it outside the loop.
"""
    references = (
        f"{ERRORS_DOC} (err_tensor_output_not_written_to)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst @0521004c (unwritten output)",
        "aws-neuron/nki-library src/nkilib_src/nkilib/core/router_topk/router_topk.py (NCC_IGCA090)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            M = 128
            N = M + 1

            @nki.jit
            def copy_tiles(tensor_in):
                tensor_out = nl.ndarray((M, 512), dtype=tensor_in.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(M // N):
                    a = nl.load(tensor_in[i * N:(i + 1) * N, 0:512])
                    nl.store(tensor_out[i * N:(i + 1) * N, 0:512], value=a)
                return tensor_out
            """,
            lines=[13],
            title="legacy: the only store is in a loop of M // N = 0 iterations",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scaled(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.exp, data=t)
                return out
            """,
            lines=[11],
            title="current API: the result is computed but never copied to the output (a warning)",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            M = 128
            N = 64

            @nki.jit
            def copy_tiles(tensor_in):
                tensor_out = nl.ndarray((M, 512), dtype=tensor_in.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range((M + N - 1) // N):
                    a = nl.load(tensor_in[i * N:(i + 1) * N, 0:512])
                    nl.store(tensor_out[i * N:(i + 1) * N, 0:512], value=a)
                return tensor_out
            """,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa
            from mylib import fill

            @nki.jit
            def scaled(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                fill(out, x)
                return out
            """,
            title="written by a helper the model cannot see: not reported",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        reporter = Reporter(ctx)
        legacy = f.model.legacy
        for kernel, fn in _root_kernels(f):
            if kernel.error or kernel.graph.truncated:
                continue
            scope = f.scope(fn)
            # Returned tensors allocated in the kernel.
            for ret in (n for n in f.own_nodes(fn) if isinstance(n, ast.Return)):
                for name in sorted(_returned_names(ret)):
                    if not f.is_tensor_name(fn, name) or self._escapes(f, fn, scope, name):
                        continue
                    refs = [r for b in scope.bindings.get(name, []) if b.value is not None
                            for r in f.produced_by(b.value) if r.kernel is kernel and r.data.get("kind") == "tensor"]
                    if not refs or any(r.data.get("buffer") not in q.HBM or r.data.get("api", "").rpartition(".")[2]
                                       in ("zeros", "ones", "full", "zeros_like", "ones_like", "full_like")
                                       for r in refs):
                        continue
                    problem = self._problem(refs)
                    if problem is None:
                        continue
                    node = next(x for x in ast.walk(ret) if isinstance(x, ast.Name) and x.id == name)
                    reporter.at(
                        node,
                        f"kernel output `{name}` of `{kernel.name}` is {problem}"
                        + (" (err_tensor_output_not_written_to)" if legacy else "; the caller receives garbage"),
                        level=Level.ERROR if legacy else Level.WARNING,
                        hint="write every output on every path; check range expressions such as M // N",
                        kernel=kernel.name,
                    )
            # Mutable parameters.
            for arg in _kernel_args(fn):
                if not _is_mutable_annotation(f, arg.annotation) or self._escapes(f, fn, scope, arg.arg):
                    continue
                refs = [r for r in f.param_tensors.get(id(arg), []) if r.kernel is kernel]
                problem = self._problem(refs) if refs else "never written (not even used)"
                if problem is None:
                    continue
                reporter.at(
                    arg,
                    f"mutable parameter `{arg.arg}` of `{kernel.name}` is {problem}"
                    + (" (err_tensor_output_not_written_to)" if legacy
                       else "; the compiler requires a store to every mutable_tensor (NCC_IGCA090)"),
                    hint="store to it, or drop the nt.mutable_tensor annotation",
                    kernel=kernel.name,
                )

    @staticmethod
    def _problem(refs: list[q.NodeRef]) -> str | None:
        """Why the output is unwritten, or None if it is written (or unknown)."""
        all_writes = []
        for ref in refs:
            g = ref.graph
            for nid in g.views_of(ref.node_id) + [ref.node_id]:
                for _, op_id, d in g.g.out_edges(nid, data=True):
                    if d.get("kind") == "reads":
                        op = g.attrs(op_id)
                        if d.get("param") not in _READ_PARAMS or not str(op.get("api", "")).startswith(
                                ("nki.language.", "nki.isa.")):
                            return None  # an unmodelled use might write it
            all_writes.extend((ref, op_id) for op_id in _writes(ref))
        if not all_writes:
            return "never written"
        dead = []
        for ref, op_id in all_writes:
            loops = ref.graph.attrs(op_id).get("loops", ())
            zero = next((l for l in loops if q.upper(ref.graph.attrs(l).get("trip_v")) == 0), None)
            if zero is None:
                return None
            dead.append(ref.graph.attrs(zero))
        loop = dead[0]
        site = loop.get("site")
        line = f" on line {site.line}" if site is not None else ""
        return f"only written inside a loop that never runs (trip count 0{line})"

    @staticmethod
    def _escapes(f: FileFacts, fn: ast.AST, scope, name: str) -> bool:
        """The tensor may be written where the model cannot see: passed to a
        non-NKI call, aliased, stored in a container, or used by a nested
        function."""
        for load in scope.loads.get(name, []):
            parent = f.parent(load)
            # Climb through views (out[...], out.reshape(...)) to the use.
            node = load
            while isinstance(parent, (ast.Subscript, ast.Attribute)) and getattr(parent, "value", None) is node:
                if isinstance(parent, ast.Attribute) and parent.attr in ("shape", "dtype", "ndim", "buffer", "size"):
                    parent = None
                    break
                node = parent
                parent = f.parent(parent)
                if isinstance(parent, ast.Call) and parent.func is node:
                    node = parent  # out.reshape(...) / out.ap(...)
                    parent = f.parent(parent)
            if parent is None:
                continue
            # Anywhere inside the arguments of a call that is not an NKI API
            # (helper(out), tl.store(out + offsets, ...)).
            child = node
            for anc in [parent, *f.ancestors(parent)]:
                if isinstance(anc, ast.stmt):
                    break
                if isinstance(anc, ast.Call) and anc.func is not child:
                    qual = f.bindings.resolve_nki(anc.func)
                    if (qual is None or not qual.name.startswith(("nki.language.", "nki.isa."))) and not (
                            isinstance(anc.func, ast.Name) and anc.func.id in ("len", "print", "isinstance")):
                        return True
                child = anc
            if isinstance(parent, ast.keyword):
                parent = f.parent(parent)
            if isinstance(parent, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.Starred)):
                if not isinstance(f.parent(parent), ast.Return):
                    return True
            elif isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and getattr(parent, "value", None) is node:
                return True
        # Nested functions that mention it (closures the model may not run).
        for sub in ast.walk(fn):
            if sub is not fn and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(sub)):
                    return True
        return False


# ---------------------------------------------------------------------------
# Legacy block scoping of tensors


class TensorUsedOutOfScope(Rule):
    id = "NKI709"
    name = "tensor-used-out-of-scope"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: a tensor created inside an if/else/for block is used after the block"
    explanation = f"""
Legacy NKI scopes tensors more strictly than Python: the `if`, `else`
and `for` blocks it keeps as control flow open a scope, and a tensor
created inside one may not be used after the block ends — even when both
branches of an `if` create it. The frontend raises `err_local_variable_used_out_of_scope`
("Local variable ... is referenced outside of its parent scope",
{ERRORS_DOC}). The same happens when a loop rebinds an outer tensor
(`data = data + t` inside the loop, see NKI710) and the kernel reads
`data` after the loop.

Scopes are the bodies of loops over `range`, `nl.affine_range` and
`nl.sequential_range`, and of `if`/`else` whose condition depends on such a
loop's variable (the catalogue's example: `if i < 2:` inside
`for i in range(4)`). An `if` on specialization-time values (flags,
shapes, `nisa.get_nc_version()`) is resolved while tracing and opens no
scope — the SDK's reference flash-attention kernel binds tiles under
`if use_dma_transpose ...` and uses them after. Loops over Python sequences
and `nl.static_range` (unrolled while tracing) and `while` loops (the
catalogue names if/else/for, and its own do-while example rebinds an outer
tensor inside a `while`) are not treated as scopes either. (The NKI 0.2+ compiler follows Python scoping for static loops
and branches; only tensors created in `fori_loop` / `while_loop` bodies stay
local there, see NKI705.)

**Fix:** create the tensor before the block (`tmp = nl.ndarray(shape,
dtype=...)`) and fill it inside with `tmp[...] = ...`.
"""
    references = (f"{ERRORS_DOC} (err_local_variable_used_out_of_scope)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def pick(a, b):
                c = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                for i in range(4):
                    if i < 2:
                        tmp = nl.load(a[i])
                    else:
                        tmp = nl.load(b[i])
                    nl.store(c[i], tmp)
                return c
            """,
            lines=[12],
            title="a tile created in both branches of an if, stored after it",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def accumulate(ptr):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.zeros((128, 128), dtype=nl.float32)
                for i in nl.sequential_range(4):
                    i_tile = nisa.iota(i, dtype=nl.uint32).broadcast_to(data.shape)
                    data = data + i_tile
                nl.store(out, value=data)
                return out
            """,
            lines=[12],
            title="a loop rebinds an outer tensor; the kernel reads it after the loop",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def pick(a, b):
                c = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                for i in range(4):
                    tmp = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                    if i < 2:
                        tmp[...] = nl.load(a[i])
                    else:
                        tmp[...] = nl.load(b[i])
                    nl.store(c[i], tmp)
                return c
            """,
            title="declared before the if, filled with tmp[...] =",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for fn, report in _block_reports(ctx):
            for item in report.out_of_scope:
                d = item.binding
                where = {"if": "`if` block", "else": "`else` block", "for": "`for` loop"}.get(
                    d.block_kind, "block")
                reporter.at(
                    item.load,
                    f"tensor `{item.load.id}` is bound inside the {where} starting on line {d.block_line} (line "
                    f"{getattr(d.node, 'lineno', '?')}) and used after that block; legacy NKI tensors are local to "
                    f"their block (err_local_variable_used_out_of_scope)",
                    hint=f"create `{item.load.id}` before the block (nl.ndarray) and assign it with "
                    f"`{item.load.id}[...] = ...` inside",
                )


class TensorShadowedInBlock(Rule):
    id = "NKI710"
    name = "tensor-shadowed-in-block"
    family = "semantics"
    level = Level.WARNING
    summary = "Legacy: a block rebinds an outer tensor's name instead of updating it with t[...] ="
    explanation = f"""
Inside an `if`/`else`/`for` block, legacy NKI treats
`data = data + t` as a *new* tensor local to the block that shadows the
outer `data`; the outer tensor is not updated. The frontend warns
("shadowing local tensor ... with a new object, use 'data[...] =' if you
want to update the existing object", {ERRORS_DOC}, under
err_local_variable_used_out_of_scope), and reading `data` after the block
is then an error (NKI709).

**Fix:** update the existing tensor in place: `data[...] = data + t`.
"""
    references = (f"{ERRORS_DOC} (err_local_variable_used_out_of_scope, shadowing warning)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def accumulate(ptr):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.zeros((128, 128), dtype=nl.float32)
                for i in nl.sequential_range(4):
                    i_tile = nisa.iota(i, dtype=nl.uint32).broadcast_to(data.shape)
                    data = data + i_tile
                    nl.store(out, value=data)
                return out
            """,
            lines=[11],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def accumulate(ptr):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.zeros((128, 128), dtype=nl.float32)
                for i in nl.sequential_range(4):
                    i_tile = nisa.iota(i, dtype=nl.uint32).broadcast_to(data.shape)
                    data[...] = data + i_tile
                nl.store(out, value=data)
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for fn, report in _block_reports(ctx):
            for item in report.shadows:
                reporter.at(
                    item.target,
                    f"rebinding tensor `{item.target.id}` (bound on line {getattr(item.outer.node, 'lineno', '?')}) "
                    f"inside a block creates a new block-local tensor; the outer `{item.target.id}` is not updated",
                    hint=f"use `{item.target.id}[...] = ...` to update the existing tensor",
                )


# ---------------------------------------------------------------------------
# affine_range iterations writing the same location


class AffineRangeWriteConflict(Rule):
    id = "NKI711"
    name = "affine-range-write-conflict"
    family = "semantics"
    level = Level.ERROR
    summary = "Iterations of an affine_range loop write the same location (legacy and NKI 0.2)"
    explanation = f"""
In legacy NKI and NKI 0.2, `nl.affine_range` declares a *parallel* loop:
the compiler may run or pipeline its iterations in any order, so no two
iterations may write the same location, except associative reductions
(matmul accumulation into PSUM, `psum += nl.matmul(...)`; `acc[...] += x`;
an instruction that reads and updates its destination; `nl.loop_reduce`).
A write whose destination index does not depend on the
loop variable, into a tensor created outside the loop, is rejected by the
legacy frontend with `err_unexpected_output_dependencies` ({ERRORS_DOC};
`nl.affine_range` API docs @0521004c and @337e6041).

Levels: an error for legacy kernels when the loop provably runs at least
twice (a warning when its trip count is unknown and might be 1); a warning
(a race) for `nki.*` kernels when the target is NKI 0.2. From NKI 0.3 every static loop is
unrolled in program order and this is no longer a hazard (the loop
iterator is only deprecated, see the migration rules).

**Fix:** index the destination with the loop variable (`a[i] = ...`), or
allocate the tensor inside the loop; if the iterations really depend on
each other, use `nl.sequential_range` (legacy / 0.2) or `range`.
"""
    references = (
        f"{ERRORS_DOC} (err_unexpected_output_dependencies)",
        "aws-neuron-sdk general/nki/api/nki/language/__init__.py @0521004c (affine_range)",
        "aws-neuron-sdk nki/api/nki/language/__init__.py @337e6041 (affine_range, NKI 0.2)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def fill(x):
                out = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.affine_range(4):
                    a[0] = nl.load(x[i])
                for i in nl.affine_range(4):
                    nl.store(out[i], value=a[i])
                return out
            """,
            lines=[9],
            title="legacy: every iteration writes a[0]",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                part = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.affine_range(4):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[:, i * 512:(i + 1) * 512])
                    nisa.tensor_reduce(dst=part, data=t, op=nl.add, axis=1)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=part, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[14],
            nki_version="0.2",
            title="NKI 0.2: a scratch tile allocated outside affine_range, overwritten by every iteration (a warning)",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def matmul_acc(xT, y):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.affine_range(4):
                    a[i] = nl.load(xT[i])
                result_psum = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(xT.shape[0] // 128):
                    offset = k * 128
                    xt_tile = nl.load(xT[offset:offset + 128, 0:128])
                    y_tile = nl.load(y[offset:offset + 128, 0:128])
                    result_psum += nl.matmul(xt_tile, y_tile, transpose_x=True)
                acc = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                for k in nl.sequential_range(4):
                    acc[...] = nl.add(acc, nl.load(xT[k * 128:(k + 1) * 128, 0:128]))
                nl.store(out, value=result_psum)
                return out
            """,
            title="indexed by the loop variable; PSUM matmul accumulation; sequential_range",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for i in nl.affine_range(4):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    part = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[:, i * 512:(i + 1) * 512])
                    nisa.tensor_reduce(dst=part, data=t, op=nl.add, axis=1)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=part, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            title="NKI 0.3+ unrolls affine_range in order: no finding at the default version",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.versions import V0_2

        f = facts(ctx)
        if f.model.legacy:
            level = Level.ERROR
        elif f.model.version == V0_2:
            level = Level.WARNING
        else:
            return
        reporter = Reporter(ctx)
        deps_cache: dict[int, set[str]] = {}
        for kernel, graph in f.model.graphs():
            for op_id, op in graph.ops():
                loops = [l for l in op.get("loops", ()) if graph.attrs(l).get("loop_kind") == "affine_range"]
                site = op.get("site")
                if not loops or site is None or not f.model.in_this_file(site) or _in_dead_loop(graph, op["loops"]):
                    continue
                for target, edge in graph.writes(op_id):
                    param = edge.get("param")
                    if param == "result":
                        continue
                    base_id = graph.base_tensor(target)
                    base = graph.attrs(base_id)
                    if self._accumulation(graph, op_id, op, base):
                        continue
                    expr = _written_expr(f, op, param)
                    if expr is None or _indirect_destination(f, graph, target, expr):
                        continue
                    for loop_id in loops:
                        if loop_id in (base.get("loops") or ()):
                            continue  # allocated inside this loop: one tensor per iteration
                        loop = graph.attrs(loop_id)
                        loop_site = loop.get("site")
                        if loop_site is None or loop_site.chain != site.chain or not isinstance(loop_site.node, ast.For):
                            continue
                        fn = f.enclosing_function(loop_site.node)
                        if fn is None or f.enclosing_function(site.node) is not fn:
                            continue
                        deps = deps_cache.get(id(loop_site.node))
                        if deps is None:
                            deps = deps_cache[id(loop_site.node)] = _loop_dependents(f, loop_site.node)
                        mentioned = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
                        mask = _call_arg(op["call"], 99, "mask") if isinstance(op.get("call"), ast.Call) else None
                        if mask is not None:
                            mentioned |= {n.id for n in ast.walk(mask) if isinstance(n, ast.Name)}
                        if mentioned & deps:
                            continue
                        trip = loop.get("trip_v")
                        if q.upper(trip) is not None and q.upper(trip) <= 1:
                            continue  # a single iteration cannot conflict with another
                        sure = q.lower(trip) is not None and q.lower(trip) >= 2
                        name = q.tensor_name(base)
                        iterator = loop.get("iterator") or "i"
                        reporter.at_site(
                            site,
                            f"every iteration of `nl.affine_range` loop `{iterator}` (line {loop_site.line}) writes "
                            f"`{f.span_text(expr)}` of `{name}`, the same location: affine_range iterations may run in "
                            f"parallel and must write different locations"
                            + (" (err_unexpected_output_dependencies)" if f.model.legacy else " (NKI 0.2: a race)")
                            + ("" if sure else "; it conflicts when the loop runs more than once (its trip count "
                               "is not known)"),
                            level=level if sure else Level.WARNING,
                            hint=f"index the destination with `{iterator}`, allocate `{name}` inside the loop, or use "
                            f"nl.sequential_range",
                            kernel=kernel.name,
                        )
                        break

    @staticmethod
    def _accumulation(graph, op_id: str, op: dict, base: dict) -> bool:
        """An associative reduction, which affine_range allows: matmul
        accumulation into PSUM, `t[...] += x`, an instruction that reads and
        writes the same tensor (dst=acc, data1=acc), or nl.loop_reduce."""
        if op.get("api") in _MATMULS and base.get("buffer") == "psum":
            return True
        if op.get("augmented") or str(op.get("api", "")).endswith("loop_reduce"):
            return True
        base_id = graph.base_tensor(next((t for t, e in graph.writes(op_id) if graph.base_tensor(t)), ""))
        for src, edge in graph.reads(op_id):
            if edge.get("param") == "value":
                producer = graph.attrs(graph.base_tensor(src))
                if str(producer.get("api", "")).endswith("loop_reduce"):
                    return True
            elif graph.base_tensor(src) == base_id:
                return True  # read-modify-write of the destination
        return False


# ---------------------------------------------------------------------------
# Legacy indexing: nl.arange / nl.mgrid, masks, indirect indices


class MixedBasicAdvancedIndexing(Rule):
    id = "NKI712"
    name = "mixed-basic-advanced-indexing"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: one subscript mixes slices with nl.arange / nl.mgrid indices"
    explanation = f"""
Legacy NKI has two ways to index a tensor: *basic* indexing with integers
and slices (`a[0:128, 0:512]`) and *advanced* indexing with index
expressions from `nl.arange` / `nl.mgrid` (`a[i_p, i_f]`). One subscript
may use either, not both: `a[i, :]` with `i = nl.arange(4)[:, None]` is
rejected with `err_unsupported_mixing_basic_advanced_tensor_indexing`
({ERRORS_DOC}). (Integers may accompany index expressions: `a[i, 0]`.)

**Fix:** index every dimension the same way — all slices (`a[0:4, 0:4]`)
or all index expressions (`a[i, j]` with `j = nl.arange(4)[None, :]`).
"""
    references = (f"{ERRORS_DOC} (err_unsupported_mixing_basic_advanced_tensor_indexing)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.load(x)
                i = nl.arange(4)[:, None]
                c = nl.exp(a[i, :])
                nl.store(out, value=c)
                return out
            """,
            lines=[9],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.load(x)
                i = nl.arange(4)[:, None]
                j = nl.arange(4)[None, :]
                c = nl.exp(a[i, j])
                d = nl.exp(a[0:4, 0:4])
                nl.store(out, value=nl.add(c, d))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.model.values import IndexV, SliceV

        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for kernel, graph, view_id, data, sub in _views(f):
            items = data.get("index_v") or []
            if not any(isinstance(x, IndexV) for x in items) or not any(isinstance(x, SliceV) for x in items):
                continue
            # Confirm on the syntax: a literal slice next to an index element.
            elements = _index_elements(sub)
            if not any(isinstance(e, ast.Slice) for e in elements):
                continue
            reporter.at(
                sub,
                f"`{f.span_text(sub)}` mixes slices with nl.arange / nl.mgrid index expressions "
                f"(err_unsupported_mixing_basic_advanced_tensor_indexing)",
                hint="use slices for every dimension, or index expressions for every dimension",
                kernel=kernel.name,
            )


class NonAffineMask(Rule):
    id = "NKI714"
    name = "non-affine-mask"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: a mask= expression is not affine in the loop indices (or reads runtime data)"
    explanation = f"""
A legacy `mask=` predicate is compiled into the instruction's access
pattern, so it must be an affine expression of static loop indices and
`nl.arange`/`nl.mgrid` indices: `a*i + b*j + c < bound`, combined with `&`,
`|` and `~`. Modulo, division, products of two indices, `min`/`max`, and
runtime values (tensor elements) are rejected with
`err_unsupported_expression_in_mask` ({ERRORS_DOC}).

**Fix:** rewrite the condition affinely (split the loop so that `i % 4 < 2`
becomes a loop over the first two of every four iterations), or move a
data-dependent condition into the computation (`nl.where`, `nisa.select`).
"""
    references = (f"{ERRORS_DOC} (err_unsupported_expression_in_mask)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def half(x):
                out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(8):
                    t = nl.load(x[i])
                    nl.store(out[i], value=t, mask=(i % 4) < 2)
                return out
            """,
            lines=[9],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def half(x):
                out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:512]
                for i in nl.affine_range(8):
                    for j in nl.affine_range(8):
                        t = nl.load(x[i, i_p, i_f])
                        nl.store(out[i, i_p, i_f], value=t, mask=((2 * i + 3 * j + 1) < 20) & (i_f < x.shape[2] // 2))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for fn in f.device_functions():
            symbolic = _symbolic_loop_vars(f, fn)
            for node in f.own_nodes(fn):
                if not isinstance(node, ast.Call):
                    continue
                mask = next((kw.value for kw in node.keywords if kw.arg == "mask"), None)
                qual = f.bindings.resolve_nki(node.func)
                if mask is None or qual is None:
                    continue
                culprit = _mask_problem(f, fn, mask, symbolic)
                if culprit is None:
                    continue
                expr, why = culprit
                reporter.at(
                    mask,
                    f"mask `{f.span_text(mask)}` is not an affine expression of loop indices: `{f.span_text(expr)}` "
                    f"{why} (err_unsupported_expression_in_mask)",
                    hint="masks may only combine a*i + b*j + c comparisons with &, | and ~",
                )


class IndirectIndexLayout(Rule):
    id = "NKI715"
    name = "indirect-index-layout"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: an indirect load/store indexes a free dimension dynamically, or builds its indices with nl.mgrid"
    explanation = f"""
Legacy `nl.load` / `nl.store` accept a tile of indices (read at run time)
only on the partition (or block) dimension of the HBM tensor:
`nl.load(data[idx_tile[i_p, 0], i_f])`. Indirect indexing of a free
dimension is rejected with `err_indirect_indices_free_dim`
({ERRORS_DOC}). Index expressions built with `nl.mgrid` in a dynamic
access "may" get the same error even on the partition dimension
(`general/nki/nki_known_issues.rst` @0521004c: "Use nl.arange for indirect
load/store access indexing, nl.mgrid won't work"); since an SDK team kernel
(nki-samples `contributed/neuron-team-kernels/blockwise_mm.py`, 2025) uses
an mgrid free index next to an indirect partition index, that case is a
warning.

**Fix:** put the indirect index on the first (partition) dimension and
build the other indices with `nl.arange(n)[:, None]` /
`nl.arange(m)[None, :]`.
"""
    references = (
        f"{ERRORS_DOC} (err_indirect_indices_free_dim)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst @0521004c (indexing)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_rows(data, idx):
                out = nl.ndarray((64, 512), dtype=data.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:64, 0:512]
                idx_tile = nl.load(idx[i_p, 0])
                rows = nl.load(data[idx_tile[i_p, 0], i_f])
                nl.store(out[i_p, i_f], value=rows)
                return out
            """,
            lines=[9],
            title="mgrid indices in an indirect load (a warning)",
            level=Level.WARNING,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_cols(data, idx):
                n, m = data.shape
                out = nl.ndarray((n, 64), dtype=data.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(128)[:, None]
                i_f = nl.arange(64)[None, :]
                idx_tile = nl.load(idx[0:1, 0:64])
                cols = nl.load(data[i_p, idx_tile])
                nl.store(out[i_p, i_f], value=cols)
                return out
            """,
            lines=[11],
            title="an index tile on the free dimension",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_rows(data, idx):
                out = nl.ndarray((64, 512), dtype=data.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(64)[:, None]
                i_f = nl.arange(512)[None, :]
                idx_tile = nl.load(idx[i_p, 0])
                rows = nl.load(data[idx_tile[i_p, 0], i_f])
                nl.store(out[i_p, i_f], value=rows)
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.model.values import TensorV

        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for kernel, graph, view_id, data, sub in _views(f):
            items = data.get("index_v") or []
            if not any(isinstance(x, TensorV) for x in items):
                continue
            uses = [o for o in _ops_on_view(graph, view_id)
                    if o[1].get("api") in ("nki.language.load", "nki.language.store")]
            if not uses:
                continue
            fn = f.enclosing_function(sub)
            if fn is None:
                continue
            indirect = _tile_positions(f, fn, sub)
            if not indirect:
                continue  # a run-time offset in index arithmetic, not a tile of indices
            api = uses[0][1].get("api", "").rpartition(".")[2]
            mgrid = _index_names_in(f, fn, sub.slice, "mgrid")
            base = graph.attrs(graph.base_tensor(view_id))
            shape = base.get("shape_v")
            rank = len(shape) if shape is not None else None
            elements = _index_elements(sub)
            if mgrid:
                reporter.at(
                    sub,
                    f"indirect nl.{api} `{f.span_text(sub)}` uses nl.mgrid index `{mgrid[0].id}`; dynamic accesses may "
                    f"fail with nl.mgrid indices (err_indirect_indices_free_dim): use nl.arange",
                    level=Level.WARNING,
                    hint="build the indices with nl.arange(n)[:, None] / nl.arange(m)[None, :]",
                    kernel=kernel.name,
                )
            elif rank is not None and rank >= 2 and len(elements) == rank and (rank - 1) in indirect:
                reporter.at(
                    sub,
                    f"indirect nl.{api} `{f.span_text(sub)}` indexes the last (free) dimension of "
                    f"`{q.tensor_name(base)}` with a tile of indices; indirect indexing is only supported on the "
                    f"partition or block dimension (err_indirect_indices_free_dim)",
                    hint="move the indirect index to the first dimension (transpose the data layout in HBM)",
                    kernel=kernel.name,
                )


class IndirectIndexUnsupported(Rule):
    id = "NKI716"
    name = "indirect-index-unsupported"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: an API or a tile copy that does not accept indirect (run-time) indices gets one"
    explanation = f"""
Only some legacy APIs take tensors indexed by another tensor (indirect
indexing): `nl.load`, `nl.store` and `nisa.dma_copy` do;
`nl.load_transpose2d` raises
`err_indirect_indices_are_not_supported_with_nki_api`, and a tile copy
written as an assignment (`out_sbuf[iy, iz] = data_sbuf[0, idx_tile, iz]`)
raises `err_copy_dynamic_indirect_indices_not_natively_supported`
({ERRORS_DOC}).

The error catalogue names `nisa.dma_transpose` as well, but the SDK's own
tests gather through it (`nki/test/test_nki_isa_dma_transpose.py`,
"3D transpose w/Indirect Mem Access"), so it is not reported.

**Fix:** load with `nl.load` / `nisa.dma_copy` and transpose on chip; for
an on-chip gather use `nisa.tensor_copy_dynamic_src` (legacy) or
`nisa.local_gather` / `.ap(vector_offset=...)` (NKI 0.2+).
"""
    references = (
        f"{ERRORS_DOC} (err_indirect_indices_are_not_supported_with_nki_api)",
        f"{ERRORS_DOC} (err_copy_dynamic_indirect_indices_not_natively_supported)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_t(data, idx):
                out = nl.ndarray((512, 64), dtype=data.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(64)[:, None]
                idx_tile = nl.load(idx[i_p, 0])
                result = nl.load_transpose2d(data[idx_tile])
                nl.store(out, value=result)
                return out
            """,
            lines=[9],
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_sbuf(data, idx):
                out = nl.ndarray((8, 4), dtype=data.dtype, buffer=nl.shared_hbm)
                data_sb = nl.load(data)
                idx_tile = nl.load(idx)
                out_sbuf = nl.ndarray((8, 4), dtype=data.dtype, buffer=nl.sbuf)
                iy, iz = nl.mgrid[0:8, 0:4]
                out_sbuf[iy, iz] = data_sb[0, idx_tile, iz]
                nl.store(out, value=out_sbuf)
                return out
            """,
            lines=[11],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def gather_t(data, idx):
                out = nl.ndarray((512, 64), dtype=data.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(64)[:, None]
                i_f = nl.arange(512)[None, :]
                idx_tile = nl.load(idx[i_p, 0])
                rows = nl.load(data[idx_tile[i_p, 0], i_f])
                nl.store(out, value=nisa.nc_transpose(rows))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.model.values import TensorV

        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for kernel, graph, view_id, data, sub in _views(f):
            items = data.get("index_v") or []
            if not any(isinstance(x, TensorV) for x in items):
                continue
            fn = f.enclosing_function(sub)
            if fn is None or not _tile_positions(f, fn, sub):
                continue  # a run-time offset in index arithmetic (supported), not a tile of indices
            for op_id, op, how in _ops_on_view(graph, view_id):
                api = op.get("api", "")
                # nisa.dma_transpose is listed by the error catalogue too, but the SDK's own tests
                # (nki/test/test_nki_isa_dma_transpose.py, examples 5 and 6) gather through it.
                if api == "nki.language.load_transpose2d":
                    short = ("nl." if api.startswith("nki.language") else "nisa.") + api.rpartition(".")[2]
                    reporter.at(
                        sub,
                        f"{short} does not accept indirect indices: `{f.span_text(sub)}` is indexed by a tile "
                        f"(err_indirect_indices_are_not_supported_with_nki_api)",
                        hint="gather with nl.load / nisa.dma_copy, then transpose on chip",
                        kernel=kernel.name,
                    )
                elif op.get("assignment") and how == "reads" and data.get("buffer") in q.ON_CHIP:
                    reporter.at(
                        sub,
                        f"tile copy `{f.span_text(sub)}` with a run-time index tile is not supported as an assignment "
                        f"(err_copy_dynamic_indirect_indices_not_natively_supported)",
                        hint="use nisa.tensor_copy_dynamic_src(...) for an on-chip gather",
                        kernel=kernel.name,
                    )


class AssignToIndexTensor(Rule):
    id = "NKI717"
    name = "assign-to-index-tensor"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: item assignment into an nl.arange / nl.mgrid index (or mask) expression"
    explanation = f"""
`nl.arange` / `nl.mgrid` values are index (or mask) expressions, not
tiles: they have no storage, and `x[0, 5] = 1024` on one is rejected with
`err_cannot_assign_to_index` ("'index' tensor does not support item
assignment", {ERRORS_DOC}).

**Fix:** materialize the index as a tile first with
`nisa.iota(x, dtype=nl.uint32)`, then assign into the tile.
"""
    references = (f"{ERRORS_DOC} (err_cannot_assign_to_index)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def patched_iota():
                out = nl.ndarray((1, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
                _, x = nl.mgrid[0:1, 0:8]
                x[0, 5] = 1024
                nl.store(out, value=x)
                return out
            """,
            lines=[8],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def patched_iota():
                out = nl.ndarray((1, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
                _, x = nl.mgrid[0:1, 0:8]
                y = nisa.iota(x, dtype=nl.uint32)
                y[0, 5] = 1024
                nl.store(out, value=y)
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for fn in f.device_functions():
            for node in f.own_nodes(fn):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                    node, (ast.AugAssign, ast.AnnAssign)) else []
                for t in targets:
                    if not isinstance(t, ast.Subscript):
                        continue
                    base = t.value
                    while isinstance(base, ast.Subscript):
                        base = base.value
                    if isinstance(base, ast.Name) and f.is_index_name(fn, base.id):
                        origin = f.index_origin(fn, base.id) or "index"
                        reporter.at(
                            t,
                            f"`{base.id}` is an nl.{origin} index expression, which has no storage: item assignment "
                            f"`{f.span_text(t)} = ...` is not supported (err_cannot_assign_to_index)",
                            hint=f"materialize it first: `t = nisa.iota({base.id}, dtype=nl.uint32)`, then assign to t",
                        )


# ---------------------------------------------------------------------------
# Static out-of-bound access


class StaticOutOfBounds(Rule):
    id = "NKI718"
    name = "static-out-of-bounds"
    family = "semantics"
    level = Level.ERROR
    summary = "A constant or loop-derived index range runs past a tensor dimension"
    explanation = f"""
Indices that NKI computes at compile time — integers, slices, `nl.ds`,
`nl.arange`/`nl.mgrid` offsets, loop variables of static loops — must stay
inside the tensor. The legacy frontend rejects an access whose index range
exceeds a dimension with `err_tensor_access_out_of_bound` ("Out-of-bound
access for tensor `x` on dimension 1: index range [0, 4095] exceed
dimension size of 4000", {ERRORS_DOC}); in NKI 0.2+ a slice must satisfy
`0 <= start < end <= shape[dim]` (`NkiTensor.slice`, of which `t[a:b]` is
the short form). A classic cause is a tiled loop whose last tile runs past
a dimension that is not a multiple of the tile size.

The finding is an error when the range is exact (constants and loop
variables of loops with constant bounds, so the last iteration really
reaches the bad index); a warning when it depends on a value with a finite
bound (`assert K <= 1024`). Accesses under an `if`, and legacy accesses
with a `mask=` (which may cut the range), are not reported.

**Fix:** bound the last tile — `w = min(512, N - i * 512)` and slice
`i * 512:i * 512 + w` — or, in legacy kernels, pass a mask
(`mask=i * 512 + i_f < N`).
"""
    references = (
        f"{ERRORS_DOC} (err_tensor_access_out_of_bound)",
        "aws-neuron-sdk nki/api/nki/language/__init__.py (NkiTensor.__getitem__, NkiTensor.slice constraints)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def zero_fill():
                x = nl.ndarray([128, 4000], dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range((4000 + 512 - 1) // 512):
                    i_p, i_f = nl.mgrid[0:128, 0:512]
                    nl.store(x[i_p, i * 512 + i_f], value=0)
                return x
            """,
            lines=[9],
            title="legacy: the last of 8 tiles reaches column 4095 of 4000",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_cols(x):
                out = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                src = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=src, src=x)
                for i in range(8):
                    nisa.tensor_copy(dst=t, src=src[:, i * 512:(i + 1) * 512])
                    nisa.dma_copy(dst=out[:, i * 512:(i + 1) * 512], src=t)
                return out
            """,
            lines=[12, 13],
            title="current API: slices of the last tile end at 4096",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def zero_fill():
                x = nl.ndarray([128, 4000], dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range((4000 + 512 - 1) // 512):
                    i_p, i_f = nl.mgrid[0:128, 0:512]
                    nl.store(x[i_p, i * 512 + i_f], value=0, mask=i * 512 + i_f < 4000)
                return x
            """,
            title="legacy: a mask cuts the last tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_cols(x):
                out = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                src = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=src, src=x)
                for i in range(8):
                    w = min(512, 4000 - i * 512)
                    nisa.tensor_copy(dst=t[:, 0:w], src=src[:, i * 512:i * 512 + w])
                    nisa.dma_copy(dst=out[:, i * 512:i * 512 + w], src=t[:, 0:w])
                return out
            """,
            title="the last tile is bounded with min()",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.model.values import Const, const_int

        f = facts(ctx)
        reporter = Reporter(ctx)
        for kernel, graph, view_id, data, sub in _views(f):
            if kernel.error:
                continue
            fn = f.enclosing_function(sub)
            if fn is None or _guarded(f, fn, sub, data.get("site")):
                continue
            loops = data.get("loops", ())
            if _in_dead_loop(graph, loops):
                continue
            exact_loops = all(const_int(graph.attrs(l).get("trip_v")) is not None for l in loops)
            if f.model.legacy and any(kw.arg == "mask" for o in _ops_on_view(graph, view_id)
                                      for kw in getattr(o[1].get("call"), "keywords", []) or []):
                continue
            base_nodes = [v for _, v, d in graph.g.out_edges(view_id, data=True) if d.get("kind") == "view_of"]
            if not base_nodes:
                continue
            base = graph.attrs(base_nodes[0])
            shape = base.get("shape_v")
            items = data.get("index_v") or []
            if shape is None or not items:
                continue
            elements = _index_elements(sub)
            has_ellipsis = any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elements)
            axis = 0
            for pos, item in enumerate(items):
                if isinstance(item, Const) and item.value is None:
                    continue  # np.newaxis
                if axis >= len(shape):
                    break
                dim = const_int(shape[axis])
                element = elements[pos] if not has_ellipsis and pos < len(elements) else None
                axis += 1
                if dim is None or dim <= 0:
                    continue
                span = _index_span(item, dim, f, fn, element)
                if span is None:
                    continue
                lo, hi, value_kind = span
                if hi < dim and lo >= 0:
                    continue
                certain = exact_loops and value_kind == "exact"
                if value_kind == "unknown" or (not certain and hi == float("inf")):
                    continue
                name = q.tensor_name(base)
                what = f"`{f.span_text(element)}`" if element is not None else f"index {pos}"
                bad = f"{int(hi)}" if hi >= dim else f"{int(lo)}"
                reporter.at(
                    sub,
                    f"{what} reaches index {bad} of dimension {axis - 1} of `{name}`, which has size {dim} "
                    f"(index range [{int(lo)}, {int(hi)}])"
                    + (" (err_tensor_access_out_of_bound)" if f.model.legacy else "")
                    + ("" if certain else "; possible for the values the code allows"),
                    level=Level.ERROR if certain else Level.WARNING,
                    hint="bound the last tile with min(), or (legacy) pass a mask",
                    kernel=kernel.name,
                )
                break


# ---------------------------------------------------------------------------
# Kernel structure: API outside kernels, nested kernels, annotations


class NkiApiOutsideKernel(Rule):
    id = "NKI719"
    name = "nki-api-outside-kernel"
    family = "semantics"
    level = Level.ERROR
    summary = "An NKI tensor API is called in host code (module level or a function that launches kernels)"
    explanation = f"""
`nki.language` / `nki.isa` operations that create or compute tensors only
exist while a kernel is being traced; calling them from host code — at
module level, under `if __name__ == "__main__":`, or in the function that
launches the kernel — raises `err_nki_api_outside_of_nki_kernel` ("Calling
NKI API outside of NKI kernels is not supported", {ERRORS_DOC}). Host code
may use dtypes, buffers and `nl.tile_size` constants.

(Any other function that calls NKI APIs is treated as device code, since it
may be called from a kernel in another module.)

**Fix:** move the computation into a function decorated with `@nki.jit`
(or called from one), and compute reference results on the host with
NumPy.
"""
    references = (f"{ERRORS_DOC} (err_nki_api_outside_of_nki_kernel)",)
    examples = (
        invalid(
            """
            import numpy as np
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.exp, data=t)
                nisa.dma_copy(dst=out, src=t)
                return out

            def run():
                a = np.ones((128, 512), dtype=np.float32)
                out = nki.simulate(exp_kernel)(a)
                ref = nl.exp(a)
                return out, ref

            scratch = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            """,
            lines=[18, 21],
        ),
        valid(
            """
            import numpy as np
            import nki
            import nki.language as nl
            import nki.isa as nisa

            TILE = (nl.tile_size.pmax, 512)

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray(TILE, dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.exp, data=t)
                nisa.dma_copy(dst=out, src=t)
                return out

            def run():
                a = np.ones((128, 512), dtype=np.float32)
                out = nki.simulate(exp_kernel)(a)
                return out, np.exp(a)
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        reporter = Reporter(ctx)
        # Module level (including `if __name__ == "__main__":` and class bodies).
        stack: list[ast.AST] = list(f.tree.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Call):
                api = _tensor_api(f, node)
                if api is not None:
                    self._report(reporter, f, node, api, "at module level")
            stack.extend(ast.iter_child_nodes(node))
        # Host functions: they launch a kernel through a launcher and are not device code themselves.
        for fn in f.functions():
            if f.root_kernel(fn) is not None:
                continue
            launches = [n for n in f.own_nodes(fn) if isinstance(n, ast.Call) and _launcher(f, n)]
            if not launches:
                continue
            if any(fn is k.node for k in f.model.kernels if k.kind == "root"):
                continue
            for node in f.own_nodes(fn):
                if isinstance(node, ast.Call):
                    api = _tensor_api(f, node)
                    if api is not None:
                        self._report(reporter, f, node, api, f"in host function `{fn.name}`, which launches a kernel")

    @staticmethod
    def _report(reporter: Reporter, f: FileFacts, node: ast.Call, api: str, where: str) -> None:
        short = ("nl." if api.startswith("nki.language.") else "nisa." if api.startswith("nki.isa.") else "") + \
            api.rpartition(".")[2]
        reporter.at(
            node,
            f"{short} is called {where}; NKI tensor APIs only work inside a kernel (err_nki_api_outside_of_nki_kernel)",
            hint="move it into an @nki.jit kernel (or a helper it calls); compute host-side references with NumPy",
        )


class NestedSpmdKernelCall(Rule):
    id = "NKI720"
    name = "nested-spmd-kernel-call"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: a kernel calls another kernel with an SPMD grid (kernel[4, 4](...))"
    explanation = f"""
A legacy kernel may call another traced kernel like a function
(`kernel0(...)`), but not launch it over an SPMD grid: `kernel1[4, 4](...)`
inside a kernel raises `err_nested_kernel_with_spmd_grid` ("Calling a NKI
kernel with a SPMD grid from another NKI kernel is not supported",
{ERRORS_DOC}). (From NKI 0.2 a kernel may not call a decorated kernel at
all, see NKI721.)

**Fix:** launch the grid from host code, or call the inner kernel without a
grid and loop over the work (`for i in nl.affine_range(4)`) inside it,
passing the index it would have read from `nl.program_id`.
"""
    references = (f"{ERRORS_DOC} (err_nested_kernel_with_spmd_grid)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.trace
            def add_tile(a, b, out):
                i = nl.program_id(0)
                t = nl.add(nl.load(a[i]), nl.load(b[i]))
                nl.store(out[i], value=t)

            @nki.jit
            def add_all(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                add_tile[4](a, b, out)
                return out
            """,
            lines=[13],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.trace
            def add_tile(a, b, out, i):
                t = nl.add(nl.load(a[i]), nl.load(b[i]))
                nl.store(out[i], value=t)

            @nki.jit
            def add_all(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    add_tile(a, b, out, i)
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for fn in f.device_functions():
            for node in f.own_nodes(fn):
                if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Subscript):
                    continue
                found = _decorated_kernel(f, fn, node.func.value)
                if found is None:
                    continue
                reporter.at(
                    node,
                    f"kernel `{node.func.value.id}` is launched with SPMD grid [{f.span_text(node.func.slice)}] from inside "
                    f"a kernel (err_nested_kernel_with_spmd_grid)",
                    hint="launch the grid from host code, or call it without a grid inside a loop",
                )


class DecoratedSubkernelCall(Rule):
    id = "NKI721"
    name = "decorated-subkernel-call"
    family = "semantics"
    level = Level.ERROR
    summary = "NKI 0.2: a kernel calls a function that is itself decorated with @nki.jit"
    explanation = """
The NKI 0.2 compiler inlines sub-kernels: a function called from a kernel
must be a plain (undecorated) function. Calling an `@nki.jit` function
(even `@nki.jit(mode='trace')`, fine in NKI 0.1) from inside a kernel fails
with an error about classes needing to inherit from `nl.NKIObject`; the
migration guide's step "Remove nki.jit decorator on sub-kernels" covers it
(`nki/migration/index.rst`, NKI 0.1 to 0.2). Legacy kernels may call
decorated kernels (without an SPMD grid, see NKI720).

The rule runs when the target is NKI 0.2 (`--nki-version 0.2`). The docs
do not say that later versions lift the restriction, but aws-neuron/
nki-library (2026, NKI 0.4+) calls `@nki.jit(mode="trace")` kernels from
kernels throughout its MoE code, so nkilint does not report it for 0.3+.

**Fix:** drop the decorator from the sub-kernel; where the same function is
also launched on its own, decorate at the host call site instead:
`nki.jit(helper)(x)`.
"""
    references = ("aws-neuron-sdk nki/migration/index.rst (Remove nki.jit decorator on sub-kernels)",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_tile(dst, src):
                nisa.activation(dst=dst, op=nl.copy, data=src, scale=2.0)

            @nki.jit
            def scale(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                scale_tile(t, t)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[14],
            nki_version="0.2",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            def scale_tile(dst, src):
                nisa.activation(dst=dst, op=nl.copy, data=src, scale=2.0)

            @nki.jit
            def scale(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                scale_tile(t, t)
                nisa.dma_copy(dst=out, src=t)
                return out

            standalone = nki.jit(scale_tile)
            """,
            nki_version="0.2",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.versions import V0_2

        f = facts(ctx)
        if f.model.legacy or f.model.version != V0_2:
            return
        reporter = Reporter(ctx)
        for fn in f.device_functions():
            for node in f.own_nodes(fn):
                if not isinstance(node, ast.Call):
                    continue
                callee = node.func.value if isinstance(node.func, ast.Subscript) else node.func
                found = _decorated_kernel(f, fn, callee)
                if found is None:
                    continue
                funcv, deco = found
                reporter.at(
                    node,
                    f"`{callee.id}` is decorated with @{deco} and called from inside a kernel; the NKI 0.2 compiler "
                    f"requires sub-kernels to be undecorated functions (error: classes must inherit from NKIObject)",
                    hint=f"remove the decorator from `{callee.id}` (decorate at host call sites: nki.jit({callee.id}))",
                )


class AnnotationShapeMismatch(Rule):
    id = "NKI722"
    name = "annotation-shape-mismatch"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: `t: nt.tensor[...] = value` annotates a shape the value does not have"
    explanation = f"""
Legacy NKI checks `target: nt.tensor[d0, d1, ...] = value` annotations:
when the value's shape differs from the annotated one the frontend raises
`err_annotation_shape_mismatch` ("Tensor shape and the annotated shape
mismatch", {ERRORS_DOC}). Dimensions are compared where both are known
constants.

**Fix:** correct the annotation, or the shape of the value (often a
transposed or un-tiled allocation).
"""
    references = (f"{ERRORS_DOC} (err_annotation_shape_mismatch)",)
    examples = (
        invalid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt
            from neuronxcc.nki.language import par_dim

            @nki.jit
            def annotated():
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data: nt.tensor[128, 512] = nl.zeros((par_dim(128), 128), dtype=np.float32)
                nl.store(out[:, 0:128], value=data)
                return out
            """,
            lines=[10],
        ),
        valid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt
            from neuronxcc.nki.language import par_dim

            @nki.jit
            def annotated(x):
                n, m = x.shape
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data: nt.tensor[128, 512] = nl.zeros((par_dim(128), 512), dtype=np.float32)
                tile: nt.tensor[n, m] = nl.load(x)
                nl.store(out, value=nl.add(data, tile))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.model.values import const_int

        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        env = f.model.module.env or {}
        for fn in f.device_functions():
            for node in f.own_nodes(fn):
                if not isinstance(node, ast.AnnAssign) or node.value is None:
                    continue
                ann = node.annotation
                if not isinstance(ann, ast.Subscript):
                    continue
                qual = f.bindings.resolve_nki(ann.value)
                if qual is None or qual.name not in ("nki.typing.tensor", "nki.typing.mutable_tensor"):
                    continue
                dims_ast = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
                expected = [_const_dim(d, env) for d in dims_ast]
                for ref in f.produced_by(node.value):
                    data = ref.data
                    if not _trusted_shape(ref):
                        continue
                    shape = data.get("shape_v")
                    if shape is None:
                        continue
                    actual = [const_int(d) for d in shape]
                    mismatch = len(actual) != len(expected) and all(x is not None for x in actual + expected)
                    mismatch = mismatch or (len(actual) == len(expected) and any(
                        a is not None and e is not None and a != e for a, e in zip(actual, expected)))
                    if not mismatch:
                        continue
                    target = f.span_text(node.target)
                    reporter.at(
                        node,
                        f"`{target}` is annotated nt.tensor[{', '.join(f.span_text(d) for d in dims_ast)}] but the value "
                        f"has shape {q.fmt_shape(shape)} (err_annotation_shape_mismatch)",
                        hint="fix the annotation or the shape of the value",
                    )
                    break


class AssignmentDestinationTooSmall(Rule):
    id = "NKI723"
    name = "assignment-destination-too-small"
    family = "semantics"
    level = Level.ERROR
    summary = "`dst[...] = src` (or a store) has a destination smaller than the source"
    explanation = f"""
An assignment between tiles (`y[...] = x`, and the legacy `nl.store(dst,
value)`) copies element by element; the source may be broadcast to a
larger destination, but a destination smaller than the source would
receive several values per element. The legacy frontend rejects it with
`err_store_dst_shape_smaller_than_other_shape` ("Illegal assignment
destination shape", {ERRORS_DOC}). Dimensions are compared where both are
known constants, after dropping leading size-1 dimensions.

**Fix:** make the destination as large as the source (`y = nl.ndarray((128,
512), ...)`), slice the source to the destination's size, or reduce the
source first (`nl.sum(x, axis=1, keepdims=True)`).
"""
    references = (f"{ERRORS_DOC} (err_store_dst_shape_smaller_than_other_shape)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def narrow(a):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.zeros(shape=(128, 512), dtype=nl.float32, buffer=nl.sbuf)
                y = nl.zeros(shape=(128, 1), dtype=nl.float32, buffer=nl.sbuf)
                y[...] = x
                nl.store(out, value=x)
                return out
            """,
            lines=[9, 10],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def widen(a):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.zeros(shape=(128, 512), dtype=nl.float32, buffer=nl.sbuf)
                y = nl.zeros(shape=(128, 1), dtype=nl.float32, buffer=nl.sbuf)
                x[...] = y
                nl.store(out, value=x)
                return out
            """,
            title="broadcasting a smaller source into a larger destination",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.model.values import const_int

        f = facts(ctx)
        reporter = Reporter(ctx)
        for kernel, graph in f.model.graphs():
            for op_id, op in graph.ops():
                store = op.get("api") == "nki.language.store"
                if not (op.get("assignment") or store):
                    continue
                site = op.get("site")
                if site is None or _in_dead_loop(graph, op.get("loops", ())):
                    continue
                value = next((s for s, e in graph.reads(op_id) if e.get("param") == "value"), None)
                dst = next((t for t, e in graph.writes(op_id) if e.get("param") == "dst"), None)
                if value is None or dst is None:
                    continue
                vref, dref = q.NodeRef(kernel, graph, value), q.NodeRef(kernel, graph, dst)
                if not (_trusted_shape(vref) and _trusted_shape(dref)):
                    continue
                vshape, dshape = vref.data.get("shape_v"), dref.data.get("shape_v")
                if vshape is None or dshape is None:
                    continue
                vs, ds = _strip_ones([const_int(d) for d in vshape]), _strip_ones([const_int(d) for d in dshape])
                if len(vs) != len(ds):
                    continue
                bad = [(i, d, v) for i, (d, v) in enumerate(zip(ds, vs)) if d is not None and v is not None and d < v]
                if not bad:
                    continue
                what = "nl.store destination" if store else "assignment destination"
                reporter.at_site(
                    site,
                    f"{what} `{q.tensor_name(dref.data)}` {q.fmt_shape(dshape)} is smaller than the source "
                    f"`{q.tensor_name(vref.data)}` {q.fmt_shape(vshape)} (err_store_dst_shape_smaller_than_other_shape)",
                    hint="make the destination as large as the source, slice the source, or reduce it first",
                    kernel=kernel.name,
                )


# ---------------------------------------------------------------------------
# Activation operands; legacy direct-allocation kernels


class ActivationOperandType(Rule):
    id = "NKI724"
    name = "activation-operand-type"
    family = "semantics"
    level = Level.ERROR
    summary = "nisa.activation scale/bias has the wrong dtype or is not a [partitions, 1] vector"
    explanation = f"""
ScalarE computes `op(data * scale + bias)` with one `scale` and one `bias`
value per partition. So:

* `scale` is a compile-time scalar or a float32 `[N, 1]` vector:
  `err_activation_scale_invalid_type` ("Scale parameter ... must be a scalar
  or vector of type float32") and `err_activation_scale_scalar_or_vector`
  ("... a scalar value or a 1D vector spanning the partition dimension",
  {ERRORS_DOC}); the NKI 0.6 `nisa.activation` page keeps both rules;
* `bias` is a `[N, 1]` vector of float32, float16 or bfloat16 in legacy NKI
  (`err_activation_bias_invalid_type`); from NKI 0.2 any dtype except
  tfloat32, and a compile-time scalar only from NeuronCore-v3 — on trn1/inf2
  it must be a vector (`nisa.activation` page, "Data types" and "Layout").

Dtypes and shapes are checked where the model knows them.

**Fix:** keep scale vectors in float32 (`nl.ndarray((N, 1),
dtype=nl.float32)`), reduce scale/bias to one value per partition
(`[N, 1]`, broadcast along the free dimension by the engine), and cast
integer biases to a float type first.
"""
    references = (
        f"{ERRORS_DOC} (err_activation_bias_invalid_type, err_activation_scale_invalid_type, "
        f"err_activation_scale_scalar_or_vector)",
        "aws-neuron-sdk nki/api/nki/isa/__init__.py (activation: Data types, Layout)",
    )
    examples = (
        invalid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def scaled_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.load(x)
                bias = nisa.memset((128, 1), 1, dtype=np.int8)
                s16 = nisa.memset((128, 1), 1.2, dtype=np.float16)
                s_row = nl.full((1, 128), 1.2, dtype=nl.float32, buffer=nl.sbuf)
                a = nisa.activation(op=nl.exp, data=data, bias=bias)
                b = nisa.activation(op=nl.exp, data=data, scale=s16)
                c = nisa.activation(op=nl.exp, data=data, scale=s_row)
                nl.store(out, value=nl.add(nl.add(a, b), c))
                return out
            """,
            lines=[13, 14, 15],
            title="legacy: an int8 bias, a float16 scale, a (1, 128) scale",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scaled_exp(x, s):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=data, src=x)
                scale = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=scale, src=s)
                nisa.activation(dst=data, op=nl.exp, data=data, scale=scale)
                nisa.dma_copy(dst=out, src=data)
                return out
            """,
            lines=[12],
            title="current API: a bfloat16 scale vector",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def shifted_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=data, src=x)
                nisa.activation(dst=data, op=nl.exp, data=data, bias=-1.0)
                nisa.dma_copy(dst=out, src=data)
                return out
            """,
            lines=[10],
            target="trn1",
            title="current API on trn1: a scalar bias (fine from trn2)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def shifted_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=data, src=x)
                nisa.activation(dst=data, op=nl.exp, data=data, bias=-1.0)
                nisa.dma_copy(dst=out, src=data)
                return out
            """,
            target="trn2",
            title="a scalar bias on trn2 (NeuronCore-v3)",
        ),
        valid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def scaled_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.load(x)
                bias = nisa.memset((128, 1), 1.2, dtype=nl.bfloat16)
                scale = nisa.memset((128, 1), 1.2, dtype=np.float32)
                a = nisa.activation(op=nl.exp, data=data, bias=bias, scale=scale)
                b = nisa.activation(op=nl.exp, data=data, scale=1.2)
                nl.store(out, value=nl.add(a, b))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.model.values import Const, const_int

        f = facts(ctx)
        reporter = Reporter(ctx)
        legacy = f.model.legacy
        for ref in q.ops(f.model, _ACTIVATIONS):
            site = ref.site
            if site is None:
                continue
            operands = q.operands(ref)
            api = "nisa." + ref.data.get("api", "").rpartition(".")[2]
            bias_v = q.param_value(ref, "bias")
            if (not legacy and ctx.target.generation == 2 and isinstance(bias_v, Const)
                    and isinstance(bias_v.value, (int, float)) and not isinstance(bias_v.value, bool)):
                reporter.at_site(
                    site,
                    f"{api} bias is the scalar {bias_v.value!r}; on {ctx.target.name} (NeuronCore-v2) the bias must be a "
                    f"[partitions, 1] vector (scalar biases need NeuronCore-v3)",
                    hint="pass a (N, 1) SBUF tile filled with the value (nisa.memset)",
                    kernel=ref.kernel.name,
                )
            for param in ("scale", "bias"):
                if param not in operands:
                    continue
                _, data = operands[param]
                dtype = q.dtype_name(data)
                name = q.tensor_name(data)
                if dtype is not None:
                    allowed = {"float32"} if param == "scale" else (
                        {"float32", "float16", "bfloat16"} if legacy else None)
                    bad = (dtype not in allowed) if allowed is not None else dtype == "tfloat32"
                    if bad:
                        code = "err_activation_scale_invalid_type" if param == "scale" else "err_activation_bias_invalid_type"
                        need = ("float32" if param == "scale" else
                                "float32, float16 or bfloat16" if legacy else "any dtype except tfloat32")
                        reporter.at_site(
                            site,
                            f"{api} {param} `{name}` is {dtype}; the {param} must be {need}"
                            + (f" ({code})" if legacy or param == "scale" else ""),
                            hint=f"allocate the {param} vector as {'nl.float32' if param == 'scale' else 'nl.float32 (or a 16-bit float)'}",
                            kernel=ref.kernel.name,
                        )
                        continue
                shape = data.get("shape_v")
                if shape is None or len(shape) < 2:
                    continue
                free = [const_int(d) for d in shape[1:]]
                if all(x is not None for x in free) and any(x > 1 for x in free):
                    reporter.at_site(
                        site,
                        f"{api} {param} `{name}` has shape {q.fmt_shape(shape)}; it must be a scalar or a [partitions, 1] "
                        f"vector (one value per partition)"
                        + (" (err_activation_scale_scalar_or_vector)" if param == "scale" else ""),
                        hint=f"reduce {param} to shape (N, 1) or pass a scalar",
                        kernel=ref.kernel.name,
                    )


class AllocatedKernelRestriction(Rule):
    id = "NKI725"
    name = "allocated-kernel-restriction"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy direct allocation: an activation without a bias tensor, or a transpose on TensorE"
    explanation = f"""
A legacy kernel that places its tensors itself (`buffer=ncc.sbuf.mod_alloc(...)`,
`ncc.psum.alloc(...)`: "allocated NKI kernels",
`general/nki/nki_direct_allocation_guide.rst` @0521004c) cannot rely on
tensors the compiler would create for it. nkilint treats a kernel as
allocated when every SBUF/PSUM allocation it makes is placed by hand and it
is not decorated with `nki.compiler.enable_stack_allocator` or
`force_auto_alloc`. The frontend rejects:

* an activation without an explicit `bias` tensor — `nisa.activation(...)`
  without `bias=`, or an `nl` function that maps to the activation
  instruction such as `nl.exp` (`err_bias_tensor_must_be_specified_in_allocation`);
* a transpose on TensorE: `nisa.nc_transpose` without
  `engine=nisa.vector_engine`, or `nl.matmul` without `transpose_x=True`
  (`err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel`)

({ERRORS_DOC}). (Allocated SBUF/PSUM tensors created with an initial value,
`err_tensor_creation_on_scratchpad_with_init_value_not_supported`, are
reported by the memory family, NKI215.)

**Fix:** allocate a bias tile (zeros via `nisa.memset` into an allocated
tensor) and pass it explicitly; transpose with your own identity matrix and
`nisa.nc_matmul`, or on VectorE for tiles up to 32x32.
"""
    references = (
        f"{ERRORS_DOC} (err_bias_tensor_must_be_specified_in_allocation, "
        f"err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel)",
        "aws-neuron-sdk general/nki/nki_direct_allocation_guide.rst @0521004c",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa
            import neuronxcc.nki.compiler as ncc
            from neuronxcc.nki.language import par_dim

            @nki.jit
            def allocated_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                data = nl.ndarray((par_dim(128), 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=0))
                data[...] = nl.load(x)
                exp = nl.ndarray((par_dim(128), 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=4096))
                exp[...] = nisa.activation(op=nl.exp, data=data[...])
                tp = nl.ndarray((par_dim(128), 128), dtype=nl.bfloat16, buffer=ncc.psum.mod_alloc(byte_addr=0))
                tp[...] = nisa.nc_transpose(data[:, 0:128])
                nl.store(out, value=exp)
                return out
            """,
            lines=[13, 15],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa
            import neuronxcc.nki.compiler as ncc
            from neuronxcc.nki.language import par_dim

            @nki.jit
            def allocated_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                data = nl.ndarray((par_dim(128), 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=0))
                data[...] = nl.load(x)
                bias = nl.ndarray((par_dim(128), 1), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=2048))
                bias[...] = nisa.memset((128, 1), 0.0, dtype=nl.float32)
                exp = nl.ndarray((par_dim(128), 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=4096))
                exp[...] = nisa.activation(op=nl.exp, data=data[...], bias=bias)
                tp = nl.ndarray((par_dim(32), 32), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=8192))
                tp[...] = nisa.nc_transpose(data[0:32, 0:32], engine=nisa.vector_engine)
                nl.store(out, value=exp)
                return out
            """,
        ),
    )

    _NL_ACTIVATIONS = {"exp", "log", "tanh", "sigmoid", "relu", "gelu", "gelu_apprx_tanh", "silu", "softplus", "mish",
                       "erf", "sqrt", "rsqrt"}

    def check(self, ctx: RuleContext) -> None:
        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for kernel, graph in f.model.graphs():
            if not _fully_allocated(f, kernel, graph):
                continue
            for op_id, op in graph.ops():
                api = str(op.get("api") or "")
                short = api.rpartition(".")[2]
                params = op.get("params_v") or {}
                problem = None
                if api in _ACTIVATIONS and "bias" not in params:
                    problem = (f"nisa.{short} without a bias tensor in a kernel with explicit allocation "
                               f"(err_bias_tensor_must_be_specified_in_allocation)", "pass bias= an allocated [N, 1] tile")
                elif api.startswith("nki.language.") and short in self._NL_ACTIVATIONS and not op.get("operator"):
                    problem = (f"nl.{short} maps to the activation instruction, which needs an explicit bias tensor in a "
                               f"kernel with explicit allocation (err_bias_tensor_must_be_specified_in_allocation)",
                               "call nisa.activation with bias= an allocated [N, 1] tile")
                elif api == "nki.isa.nc_transpose" and not _vector_engine(params.get("engine")):
                    problem = ("nisa.nc_transpose on TensorE is not allowed in a kernel with explicit allocation "
                               "(err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel)",
                               "transpose with nisa.nc_matmul and an allocated identity, or pass "
                               "engine=nisa.vector_engine (tiles up to 32x32)")
                elif api == "nki.language.matmul" and not _true(params.get("transpose_x")):
                    problem = ("nl.matmul without transpose_x=True inserts a TensorE transpose, which is not allowed in a "
                               "kernel with explicit allocation "
                               "(err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel)",
                               "pass transpose_x=True with a pre-transposed x")
                if problem is not None:
                    reporter.at_site(op.get("site"), problem[0], hint=problem[1], kernel=kernel.name)




# ---------------------------------------------------------------------------
# Too many indices


class TooManyIndices(Rule):
    id = "NKI726"
    name = "too-many-indices"
    family = "semantics"
    level = Level.ERROR
    summary = "A tensor is indexed with more indices than it has dimensions"
    explanation = """
Indexing a tensor with more indices than its rank (`t[:, a, b]` on a 2-D
tensor) fails when the kernel is traced: the frontend rejects the index as
NumPy does, so the kernel never compiles. The frontend error catalogue has
no dedicated code for it; the closest documented one is
`err_tensor_access_out_of_bound` (aws-neuron-sdk `nki/api/nki.errors.rst`
at 1db4d74e). It is
usually a slice written with commas instead of a colon (`t[:, a, b]` for
`t[:, a:b]`) or a leftover from a reshape.

The rank must be known exactly (an allocation, a returned tile, or a
reshape with a literal shape), and code under a condition nkilint cannot
decide is not judged (the path may be infeasible). The finding is an error
when the access runs for every value the code allows, and a warning when it
sits in a loop that may run zero times (an untested configuration still
hides the bug).

**Fix:** index with at most one item per dimension — usually turn the
commas into a slice (`t[:, a:b]`), or reshape the tensor to the rank the
indexing expects.
"""
    references = (
        "aws-neuron-sdk nki/api/nki.errors.rst @1db4d74e (err_tensor_access_out_of_bound)",
        "NumPy indexing semantics (NKI tensors are indexed like NumPy arrays at trace time)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out[:, 0:128], src=t[:, 0, 128])
                return out
            """,
            lines=[10],
            title="a slice written with a comma",
            level=Level.ERROR,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512, 0])
                nl.store(out, value=t)
                return out
            """,
            title="legacy API: the rank of an input is not known, so nothing is reported",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def kernel(x, n_tiles):
                out = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                row = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=row, src=x)
                for i in range(n_tiles):
                    nisa.dma_copy(dst=out[:, i * 128:i * 128 + 128], src=row[:, i * 128, i * 128 + 128])
                return out
            """,
            lines=[11],
            title="in a loop that may run zero times: a warning",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out[:, 0:128], src=t[:, 0:128])
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.model.values import Const

        reporter = Reporter(ctx)
        for kernel, graph in ctx.model.graphs():
            for view_id, view in graph.views():
                items = view.get("index_v")
                if not items:
                    continue
                bases = [v for _, v, d in graph.g.out_edges(view_id, data=True) if d.get("kind") == "view_of"]
                if len(bases) != 1:
                    continue
                shape = graph.attrs(bases[0]).get("shape_v")
                if shape is None:
                    continue
                # The rank must come from the code (an allocation, a returned
                # tile, a literal reshape), not be inferred from a parameter's use.
                root = graph.attrs(graph.base_tensor(bases[0]))
                if root.get("origin") not in ("alloc", "result") or root.get("rank_inferred"):
                    continue
                if view.get("conditional"):
                    continue  # under a condition nkilint cannot decide: maybe infeasible
                used = [x for x in items if not (isinstance(x, Const) and (x.value is None or x.value is Ellipsis))]
                if len(used) <= len(shape):
                    continue
                always = all(
                    (q.lower(graph.attrs(loop).get("trip_v")) or 0) >= 1 for loop in view.get("loops", ())
                )
                name = q.tensor_name(graph.attrs(bases[0]))
                index = str(view.get("index") or "")
                if index.startswith("(") and index.endswith(")"):
                    index = index[1:-1]
                message = (
                    f"{name} has {len(shape)} dimension{'s' if len(shape) != 1 else ''} {q.fmt_shape(shape)} but "
                    f"`{name}[{index}]` gives {len(used)} indices: tracing the kernel raises an index error"
                )
                if not always:
                    message += " (when the enclosing loop runs: it may run zero times)"
                reporter.at_site(
                    view.get("site"),
                    message,
                    level=Level.ERROR if always else Level.WARNING,
                    hint="use one index per dimension; a slice is written a:b, not a, b",
                    kernel=kernel.name,
                )
