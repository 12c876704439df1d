"""NKI705 dynamic-loop-misuse: a fori_loop, while_loop, dynamic_range or register while used as the compiler rejects."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import ExprFacts, short_text
from nkilint.model.loops import nest_of
from nkilint.model.scopes import Scope, Scopes, call_argument
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter


class DynamicLoopMisuse(Rule):
    id = "NKI705"
    name = "dynamic-loop-misuse"
    family = "semantics"
    level = Level.ERROR
    requires = (DeviceCode, Scopes, ExprFacts)
    summary = "A dynamic loop (fori_loop, while_loop, dynamic_range, while reg) is used in a way the compiler rejects"
    explanation = """
Finds dynamic loops (`nl.fori_loop`, `nl.while_loop`, `nl.dynamic_range`,
`while` on a register) used in a way the compiler rejects: writes to or
Python arithmetic on the induction register, a `fori_loop` body that
returns a value or a `while_loop` body that returns none, tensors created
in a loop body and used after the loop, dynamic loops inside
`with nl.no_reorder():`.

**Why on Trainium:** dynamic loops run on the device: the body is compiled
once and a hardware loop instruction repeats it, with the induction
variable held in a register (`VirtualRegister`). The NKI docs list what
that rules out (`nki/migration/index.rst` "Rules for migrated loops", NKI
0.6; `nki/deep-dives/nki-dynamic-loops.rst`; the `fori_loop`, `while_loop`
and `no_reorder` API pages; `nki-language-guide.rst` "Dynamic Control
Flow"):

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
        if ctx.model.legacy:
            return  # register loops are NKI 0.2+
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        for fn in ctx.analysis(DeviceCode).functions:
            scope = scopes.of(fn)
            for node in scopes.own_nodes(fn):
                if isinstance(node, ast.With) and any(_is_api(ctx, item.context_expr, "nki.language.no_reorder")
                                                       for item in node.items):
                    for inner in scopes.file.block_nodes(node.body):
                        what = _dynamic_loop(ctx, exprs, inner)
                        if what:
                            where = inner.iter if isinstance(inner, ast.For) else (
                                inner.test if isinstance(inner, ast.While) else inner)
                            reporter.at(
                                where,
                                f"{what} inside `with nl.no_reorder():`; dynamic loops are not supported in a no_reorder "
                                f"block",
                                hint="put the no_reorder block inside the loop body",
                            )
                if isinstance(node, ast.Call) and (_is_api(ctx, node.func, "nki.language.fori_loop")
                                                   or _is_api(ctx, node.func, "nki.language.while_loop")):
                    self._check_body_call(ctx, scope, node, reporter)
                if isinstance(node, ast.For) and exprs.loop_kind(node) == "dynamic_range" \
                        and isinstance(node.target, ast.Name):
                    self._check_induction(ctx, node.target.id, node.body, reporter, "nl.dynamic_range")
        self._check_escaping_tensors(ctx, reporter)

    @staticmethod
    def _check_escaping_tensors(ctx: RuleContext, reporter: Reporter) -> None:
        """Tensors created in a fori_loop body and used after the loop."""
        for kernel, graph in ctx.model.graphs():
            nest = nest_of(graph)
            for tensor_id, data in graph.tensors():
                body_loops = [l for l in data.get("loops", ()) if nest.loop(l).kind == "fori_loop"]
                if not body_loops or data.get("origin") != "alloc":
                    continue
                loop = nest.loop(body_loops[-1])
                for op_id in graph.ops_reading(tensor_id) + graph.ops_writing(tensor_id):
                    op = graph.attrs(op_id)
                    if nest.inside(op_id, loop.id):
                        continue
                    line = f" ({reporter.ctx.model.line_ref(loop.site)})" if loop.site is not None else ""
                    reporter.at_site(
                        op.get("site"),
                        f"tensor `{q.tensor_name(data)}` is created inside the body of the nl.fori_loop{line} and used "
                        f"after the loop; tensors declared in a dynamic-loop body cannot be referenced outside it",
                        hint="declare the tensor before the loop and fill it inside the body",
                        kernel=kernel.name,
                    )

    def _check_body_call(self, ctx: RuleContext, scope: Scope, call: ast.Call, reporter: Reporter) -> None:
        """The body function of an nl.fori_loop / nl.while_loop call: what it
        returns, and what it does with its induction register."""
        is_fori = _is_api(ctx, call.func, "nki.language.fori_loop")
        body_arg = call_argument(call, 2 if is_fori else 1, "body_fun")
        if not isinstance(body_arg, ast.Name):
            return
        defs = [d.node for d in scope.definitions(body_arg.id)]
        if len(defs) != 1 or not isinstance(defs[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        body = defs[0]
        api = "nl.fori_loop" if is_fori else "nl.while_loop"
        returns = [n for n in ctx.analysis(Scopes).own_nodes(body) if isinstance(n, ast.Return)]
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
            self._check_induction(ctx, args[0].arg, body.body, reporter, api, frozen=is_fori)

    def _check_induction(self, ctx: RuleContext, name: str, body: list[ast.stmt], reporter: Reporter, api: str,
                         frozen: bool = True) -> None:
        """Uses of the induction register ``name`` in a loop body."""
        for node in ctx.analysis(Scopes).file.block_nodes(body):
            if frozen and isinstance(node, ast.Call) and (_is_api(ctx, node.func, "nki.isa.register_move")
                                                          or _is_api(ctx, node.func, "nki.isa.register_load")):
                dst = call_argument(node, 0, "dst")
                if isinstance(dst, ast.Name) and dst.id == name:
                    reporter.at(
                        node,
                        f"the induction register `{name}` of {api} is frozen; writing it with "
                        f"{short_text(node.func)} is an error",
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
                        f"on the device (`{short_text(node)}`)",
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


def _is_api(ctx: RuleContext, expr: ast.AST, name: str) -> bool:
    """``expr`` (or the callee of a call) is the NKI API ``name``."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    qual = ctx.model.bindings.resolve_nki(target)
    return qual is not None and qual.name == name


def _dynamic_loop(ctx: RuleContext, exprs: ExprFacts, node: ast.AST) -> str | None:
    """A description of a dynamic loop construct, or None."""
    if isinstance(node, ast.Call):
        if _is_api(ctx, node.func, "nki.language.fori_loop"):
            return "nl.fori_loop"
        if _is_api(ctx, node.func, "nki.language.while_loop"):
            return "nl.while_loop"
    if isinstance(node, ast.For) and exprs.loop_kind(node) == "dynamic_range":
        return "a `for ... in nl.dynamic_range(...)` loop"
    if isinstance(node, ast.While) and any(data.get("register_bound") for data in q.loops_at(ctx.model, node)):
        return f"a `while {ast.unparse(node.test)}:` register loop"
    return None

