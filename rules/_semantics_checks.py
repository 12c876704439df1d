"""Helpers shared by the semantics rules (NKI7xx) in semantics.py: syntax
queries (loops, subscripts, masks, call arguments), graph queries (writes,
views, trusted shapes) and the small classifications the rules build on.
The rule classes stay in semantics.py, where the pack collects them."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.model import query as q

from ._semantics_facts import MGRID_ATTRS as MGRID_ATTRS_, VIEW_METHODS, FileFacts, facts


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


def _truth_tested(f: FileFacts, node: ast.BoolOp) -> list[ast.AST]:
    """Operands of `and`/`or` whose truth value Python takes: all but the
    last, and the last too when the whole expression is itself tested."""
    parent = f.parent(node)
    tested = (
        isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and getattr(parent, "test", None) is node
    ) or isinstance(parent, ast.BoolOp) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)) or (
        isinstance(parent, ast.comprehension) and node in parent.ifs)
    return list(node.values) if tested else list(node.values[:-1])


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


def _dynamic_loop(f: FileFacts, node: ast.AST) -> str | None:
    """A description of a dynamic loop construct, or None."""
    if isinstance(node, ast.Call):
        if _is_api(f, node.func, "nki.language.fori_loop"):
            return "nl.fori_loop"
        if _is_api(f, node.func, "nki.language.while_loop"):
            return "nl.while_loop"
    if isinstance(node, ast.For) and f.loop_kind(node) == "dynamic_range":
        return "a `for ... in nl.dynamic_range(...)` loop"
    if isinstance(node, ast.While) and any(data.get("register_bound") for data in q.loops_at(f.model, node)):
        return f"a `while {ast.unparse(node.test)}:` register loop"
    return None


def _is_mutable_annotation(f: FileFacts, ann: ast.AST | None) -> bool:
    if ann is None:
        return False
    base = ann.value if isinstance(ann, ast.Subscript) else ann
    qual = f.bindings.resolve_nki(base)
    return qual is not None and qual.name == "nki.typing.mutable_tensor"


def _root_kernels(f: FileFacts):
    """(kernel, function node) of root kernels defined in this file."""
    own = {id(fn) for fn in f.functions()}
    for kernel in f.model.kernels:
        if kernel.kind == "root" and id(kernel.node) in own:
            yield kernel, kernel.node


def _kernel_args(fn: ast.AST) -> list[ast.arg]:
    a = fn.args
    return list(a.posonlyargs) + list(a.args) + list(a.kwonlyargs)


def _writes(ref: q.NodeRef) -> list[str]:
    """Ops writing a tensor (through any view), not counting the op that
    returned it as a legacy result."""
    g = ref.graph
    out = []
    for op_id in g.ops_writing(ref.node_id):
        params = [d.get("param") for _, target, d in g.g.out_edges(op_id, data=True)
                  if d.get("kind") == "writes" and g.base_tensor(target) == ref.node_id]
        if params and all(p == "result" for p in params):
            continue
        out.append(op_id)
    return out


def _experimental_flag(decorator: ast.AST | None, flag: str) -> bool:
    """@nki.jit(experimental_flags='enable-mutable-parameter, ...') names the flag."""
    if not isinstance(decorator, ast.Call):
        return False
    for kw in decorator.keywords:
        if kw.arg == "experimental_flags" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            return flag in {x.strip() for x in kw.value.value.split(",")}
    return False


def _trace_mode(decorator: ast.AST | None) -> bool:
    """@nki.jit(mode='trace'): the legacy spelling of a sub-kernel."""
    return isinstance(decorator, ast.Call) and any(
        kw.arg == "mode" and isinstance(kw.value, ast.Constant) and kw.value.value == "trace"
        for kw in decorator.keywords)


def _called_from_kernel(f: FileFacts, kernel) -> bool:
    """Another kernel of the file inlines this one (it is a sub-kernel there)."""
    return any(other is not kernel and kernel.name in other.graph.helpers for other in f.model.kernels)


def _returned_names(ret: ast.Return) -> set[str]:
    value = ret.value
    if value is None:
        return set()
    items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    return {x.id for x in items if isinstance(x, ast.Name)}


# APIs and parameters through which the model sees a tensor read; any other
# use (collectives, unknown helpers) might write it without the model knowing.
_READ_PARAMS = {"src", "data", "data0", "data1", "data2", "x", "y", "value", "stationary", "moving", "in_", "input",
                "on_true_tile", "predicate", "bias", "scale", "operand0", "operand1"}


def _block_reports(ctx: RuleContext):
    """(function, ScopeReport) for each legacy device function (cached per file)."""
    from ._semantics_blocks import BlockScopes

    f = facts(ctx)
    cache = f.__dict__.setdefault("_block_reports", None)
    if cache is None:
        cache = []
        for fn in f.device_functions():
            report = BlockScopes(
                # Only a *new* tensor is block-local: an alias (`a = b`) or a view (`a = b[i]`) of an
                # outer tensor is not (the SDK's conv kernel rebinds `img = img_raw` inside a loop).
                fn, lambda v, fn=fn: isinstance(v, (ast.Call, ast.BinOp, ast.UnaryOp))
                and not (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in VIEW_METHODS)
                and f.tensor_value(fn, v) == "tensor",
                # Loops the legacy frontend keeps as loops (range is lowered to sequential_range);
                # Python sequences and static_range are unrolled while tracing.
                lambda loop: f.loop_kind(loop) in ("range", "affine_range", "sequential_range"),
                lambda loop: _loop_dependents(f, loop),
            ).run()
            cache.append((fn, report))
        f.__dict__["_block_reports"] = cache
    return cache


_MATMULS = ("nki.language.matmul", "nki.isa.nc_matmul", "nki.isa.nc_matmul_mx")


def _indirect_destination(f: FileFacts, graph, target: str, expr: ast.AST) -> bool:
    """The destination is indexed by tensor data (an index tile), whose
    values the model does not know: it may differ per iteration."""
    from nkilint.model.values import TensorV

    data = graph.attrs(target)
    if any(isinstance(x, TensorV) for x in data.get("index_v") or ()):
        return True
    fn = f.enclosing_function(expr)
    return fn is not None and any(
        isinstance(sub, ast.Subscript) and any(
            isinstance(n, ast.Name) and f.is_tensor_name(fn, n.id) for n in ast.walk(sub.slice))
        for sub in ast.walk(expr))


def _written_expr(f: FileFacts, op: dict, param: str | None) -> ast.AST | None:
    """The source expression of an op's written operand."""
    call = op.get("call")
    if isinstance(call, ast.Assign):
        return call.targets[0] if len(call.targets) == 1 else None
    if isinstance(call, (ast.AugAssign, ast.AnnAssign)):
        return call.target
    if not isinstance(call, ast.Call) or not param:
        return None
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    from nkilint.model.apitable import api_for, legacy_api

    table = legacy_api() if f.model.legacy else api_for(f.model.version)
    sig = table.signature(op.get("api", "")) or legacy_api().signature(op.get("api", ""))
    if sig is None or sig.params is None:
        return None
    for i, p in enumerate(sig.positional):
        if p.name == param and i < len(call.args):
            return call.args[i]
    return None


def _loop_dependents(f: FileFacts, loop: ast.For) -> set[str]:
    """The loop's target names and names the body derives from them."""
    deps = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    assigns: list[tuple[set[str], ast.AST]] = []
    for node in _own_statements_and_exprs(f, loop.body):
        if isinstance(node, ast.Assign):
            names = {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            assigns.append((names, node.value))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) and node.value is not None:
            assigns.append(({node.target.id}, node.value))
        elif isinstance(node, ast.NamedExpr):
            assigns.append(({node.target.id}, node.value))
        elif isinstance(node, (ast.For, ast.comprehension)):
            assigns.append(({n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}, node.iter))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            assigns.append(({n.id for n in ast.walk(node.optional_vars) if isinstance(n, ast.Name)}, node.context_expr))
    changed = True
    while changed:
        changed = False
        for names, value in assigns:
            if names - deps and any(isinstance(n, ast.Name) and n.id in deps for n in ast.walk(value)):
                deps |= names
                changed = True
    return deps


def _views(f: FileFacts):
    """(kernel, graph, view id, data, Subscript node) of views created by a
    subscript in this file."""
    for kernel, graph in f.model.graphs():
        for view_id, data in graph.views():
            site = data.get("site")
            if site is None or not f.model.in_this_file(site) or not isinstance(site.node, ast.Subscript):
                continue
            yield kernel, graph, view_id, data, site.node


def _index_elements(sub: ast.Subscript) -> list[ast.AST]:
    sl = sub.slice
    return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]


def _symbolic_loop_vars(f: FileFacts, fn: ast.AST) -> set[str]:
    """Targets of the function's legacy symbolic loops (range, affine_range,
    sequential_range: not unrolled Python loops such as static_range)."""
    out: set[str] = set()
    for node in f.own_nodes(fn):
        if isinstance(node, ast.For) and f.loop_kind(node) in ("range", "affine_range", "sequential_range"):
            out |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    scope = f.scope(fn)
    while scope.parent is not None:  # loops of enclosing functions (closures)
        scope = scope.parent
        for node in f.own_nodes(scope.fn):
            if isinstance(node, ast.For) and f.loop_kind(node) in ("range", "affine_range", "sequential_range"):
                out |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return out


def _mask_problem(f: FileFacts, fn: ast.AST, mask: ast.AST, symbolic: set[str]) -> tuple[ast.AST, str] | None:
    """The first non-affine or runtime part of a mask, with the reason."""
    # Boolean structure: comparisons combined with & | ^ ~.
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _mask_problem(f, fn, mask.left, symbolic) or _mask_problem(f, fn, mask.right, symbolic)
    if isinstance(mask, ast.UnaryOp) and isinstance(mask.op, ast.Invert):
        return _mask_problem(f, fn, mask.operand, symbolic)
    if isinstance(mask, ast.Compare):
        for operand in [mask.left, *mask.comparators]:
            kind, culprit = _affinity(f, fn, operand, symbolic, 0)
            if kind == "nonaffine":
                return culprit, "is not affine"
            if kind == "runtime":
                return culprit, "reads runtime data"
        return None
    if isinstance(mask, ast.Name):
        owner = f.scope(fn).owner(mask.id)
        binds = owner.bindings.get(mask.id, []) if owner is not None else []
        if len(binds) == 1 and binds[0].value is not None and not isinstance(binds[0].value, ast.Name):
            return _mask_problem(f, owner.fn, binds[0].value, symbolic)
    return None


def _affinity(f: FileFacts, fn: ast.AST, expr: ast.AST, symbolic: set[str], depth: int) -> tuple[str, ast.AST]:
    """('const' | 'affine' | 'nonaffine' | 'runtime' | 'unknown', culprit)."""
    if depth > 12:
        return "unknown", expr
    if isinstance(expr, ast.Constant):
        return "const", expr
    if isinstance(expr, ast.Name):
        if expr.id in symbolic or f.is_index_name(fn, expr.id):
            return "affine", expr
        if f.tensor_value(fn, expr) == "tensor":
            return "runtime", expr
        owner = f.scope(fn).owner(expr.id)
        if owner is None or expr.id in owner.params:
            return "const", expr  # module constants, parameters: specialization-time values
        binds = owner.bindings.get(expr.id, [])
        kinds = []
        for b in binds:
            if b.value is None or b.kind not in ("assign", "annassign"):
                continue  # unpacked shapes, loop targets of unrolled loops: specialization-time values
            kinds.append(_affinity(f, owner.fn, b.value, symbolic, depth + 1))
        for kind in ("runtime", "nonaffine", "unknown", "affine"):
            hit = next((c for k, c in kinds if k == kind), None)
            if hit is not None:
                return kind, expr if kind in ("affine",) else hit
        return "const", expr
    if isinstance(expr, ast.Attribute):
        if expr.attr in MGRID_ATTRS_ and _affinity(f, fn, expr.value, symbolic, depth + 1)[0] == "affine":
            return "affine", expr
        return "const", expr
    if isinstance(expr, ast.Subscript):
        base = _affinity(f, fn, expr.value, symbolic, depth + 1)
        if f.tensor_value(fn, expr.value) == "tensor":
            return "runtime", expr
        return base if base[0] in ("affine", "runtime") else ("const", expr)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _affinity(f, fn, expr.operand, symbolic, depth + 1)
    if isinstance(expr, ast.BinOp):
        left = _affinity(f, fn, expr.left, symbolic, depth + 1)
        right = _affinity(f, fn, expr.right, symbolic, depth + 1)
        for kind in ("runtime", "nonaffine", "unknown"):
            for side in (left, right):
                if side[0] == kind:
                    return side
        if left[0] == "const" and right[0] == "const":
            return "const", expr
        if isinstance(expr.op, (ast.Add, ast.Sub)):
            return "affine", expr
        if isinstance(expr.op, ast.Mult) and (left[0] == "const" or right[0] == "const"):
            return "affine", expr
        return "nonaffine", expr
    if isinstance(expr, ast.Call):
        args = [_affinity(f, fn, a, symbolic, depth + 1) for a in [*expr.args, *(k.value for k in expr.keywords)]]
        if any(k == "runtime" for k, _ in args) or f.tensor_value(fn, expr) == "tensor":
            return "runtime", expr
        if _callee(expr) == "scalar":
            return "runtime", expr
        if any(k in ("affine", "nonaffine") for k, _ in args):
            return "nonaffine", expr  # min(i, ...), f(i): not an affine form
        return "const", expr
    return "const", expr


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _index_names_in(f: FileFacts, fn: ast.AST, expr: ast.AST, origin: str) -> list[ast.Name]:
    return [n for n in ast.walk(expr) if isinstance(n, ast.Name) and f.index_origin(fn, n.id) == origin]


def _bare_tile(f: FileFacts, fn: ast.AST, expr: ast.AST) -> bool:
    """An index element that is a tile of indices (`idx`, `idx[i_p, 0]`),
    not index arithmetic with a run-time offset (`arange + t * B`)."""
    if isinstance(expr, ast.Name):
        return f.is_tensor_name(fn, expr.id)
    if isinstance(expr, ast.Subscript):
        return _bare_tile(f, fn, expr.value)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in VIEW_METHODS:
        return _bare_tile(f, fn, expr.func.value)
    return False


def _tile_positions(f: FileFacts, fn: ast.AST, sub: ast.Subscript) -> list[int]:
    return [i for i, e in enumerate(_index_elements(sub)) if _bare_tile(f, fn, e)]


def _ops_on_view(graph, view_id: str) -> list[tuple[str, dict, str]]:
    """(op id, op data, 'reads'|'writes') of ops using a view directly."""
    out = []
    for _, op_id, d in graph.g.out_edges(view_id, data=True):
        if d.get("kind") == "reads":
            out.append((op_id, graph.attrs(op_id), "reads"))
    for op_id, _, d in graph.g.in_edges(view_id, data=True):
        if d.get("kind") == "writes":
            out.append((op_id, graph.attrs(op_id), "writes"))
    return out


def _value_span(v, f: FileFacts | None = None) -> tuple[float, float, str] | None:
    """(lo, hi, 'exact'|'bounded'|'unknown') of an integer index value:
    exact when it only depends on constants and loop indices."""
    from nkilint.model.values import int_bounds, linear

    b = int_bounds(v)
    if b is None:
        return None
    lin = linear(v)
    if lin is None:
        # An interval from min()/max()/% ...: an over-approximation that loses
        # correlations (i * 512 + min(512, N - i * 512)), not a reachable range.
        return b[0], b[1], "unknown"
    terms, _ = lin
    exact = all(sym.name.startswith("index of ") and sym.lo != float("-inf") and sym.hi != float("inf")
                for sym in terms)
    # An affine form of independent bounded symbols reaches its bounds.
    return b[0], b[1], "exact" if exact else "bounded"


def _index_span(item, dim: int, f: FileFacts, fn: ast.AST, element: ast.AST | None) -> tuple[float, float, str] | None:
    """The index range one subscript item touches on a dimension of size dim."""
    from nkilint.model.values import Const, DsV, IndexV, SliceV, const_int

    def worst(*kinds: str) -> str:
        return "unknown" if "unknown" in kinds else "bounded" if "bounded" in kinds else "exact"

    if isinstance(item, SliceV):
        step = const_int(item.step) if not (isinstance(item.step, Const) and item.step.value is None) else 1
        if step is None or step <= 0:
            return None
        start = (0.0, 0.0, "exact") if isinstance(item.start, Const) and item.start.value is None else _value_span(item.start)
        stop = (float(dim), float(dim), "exact") if isinstance(item.stop, Const) and item.stop.value is None else _value_span(item.stop)
        if start is None or stop is None or start[0] < 0 or stop[0] < 0:
            return None  # negative (from-the-end) bounds: Python semantics, not handled
        return start[0], stop[1] - 1, worst(start[2], stop[2])
    if isinstance(item, DsV):
        start = _value_span(item.start)
        size = const_int(item.size)
        if start is None or size is None or start[0] < 0:
            return None
        return start[0], start[1] + size - 1, start[2]
    if isinstance(item, IndexV):
        if element is None or not _additive_index(f, fn, element):
            return None
        extent = const_int(item.extent)
        offset = _value_span(item.offset)
        if extent is None or offset is None:
            return None
        return offset[0], offset[1] + extent - 1, offset[2]
    span = _value_span(item)
    if span is None:
        return None
    if span[0] < 0:
        return None  # negative integers count from the end
    return span


def _additive_index(f: FileFacts, fn: ast.AST, expr: ast.AST) -> bool:
    """An arange/mgrid index only shifted by + / -: the model's range for it
    is exact (it does not track products or divisions of index expressions)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Add, ast.Sub)):
            if f.index_value(fn, node.left) or f.index_value(fn, node.right):
                return False
        if isinstance(node, ast.UnaryOp) and f.index_value(fn, node.operand):
            return False
        if isinstance(node, ast.Name) and f.is_index_name(fn, node.id):
            owner = f.scope(fn).owner(node.id)
            for b in owner.bindings.get(node.id, []) if owner else []:
                if b.value is not None and not _additive_index(f, owner.fn, b.value):
                    return False
    return True


def _guarded(f: FileFacts, fn: ast.AST, node: ast.AST, site) -> bool:
    """The node (or the call chain that reached it) is under a condition."""
    def conditional(n: ast.AST, stop: ast.AST | None) -> bool:
        child = n
        for anc in f.ancestors(n):
            if anc is stop:
                return False
            if isinstance(anc, (ast.If, ast.While)) and child is not anc.test:
                return True
            if isinstance(anc, ast.IfExp) and child is not anc.test:
                return True
            if isinstance(anc, (ast.Try, ast.ExceptHandler, ast.BoolOp)):
                return True
            child = anc
        return False

    if conditional(node, fn):
        return True
    if site is not None:
        for file, call in site.chain:
            if f.model.in_this_file(type(site)(file, call)):
                caller = f.enclosing_function(call)
                if conditional(call, caller):
                    return True
            else:
                return True  # a chain through another module: unknown guards
    return False


def _tensor_api(f: FileFacts, call: ast.Call) -> str | None:
    """The canonical name of an NKI call that creates or computes tensors."""
    from nkilint.model import api_semantics as api

    qual = f.bindings.resolve_nki(call.func)
    if qual is None:
        return None
    info = api.classify(qual.name)
    if info is None or info.kind not in ("alloc", "dma", "compute", "matmul", "transpose"):
        return None
    if info.module == "nki.language" and info.short in ("device_print", "static_cast"):
        return None  # static_cast converts host arrays too (legacy stub: "a scalar or array")
    return qual.name


_LAUNCHERS = ("nki.simulate_kernel", "nki.simulate", "nki.baremetal", "nki.benchmark", "nki.profile",
              "jax_neuronx.nki_call", "nki.compiler.kernel_builder.compile_kernel")


def _launcher(f: FileFacts, call: ast.Call) -> bool:
    target = call.func.func if isinstance(call.func, ast.Call) else call.func
    qual = f.bindings.resolve(target)
    return qual is not None and qual.name in _LAUNCHERS


def _decorated_kernel(f: FileFacts, fn: ast.AST, callee: ast.AST):
    """The FuncV of a callee that is decorated as a kernel (nki.jit, trace,
    ...), resolved through this module's names or its imports; else None."""
    from nkilint.model.kernels import ROOT_DECORATORS, module_aliases, resolve_decorator
    from nkilint.model.values import FuncV

    if not isinstance(callee, ast.Name):
        return None
    scope = f.scope(fn)
    owner = scope.owner(callee.id)
    if owner is not None:
        return None  # a local name (parameter, nested def, assignment)
    env = f.model.module.env or {}
    value = env.get(callee.id)
    if not isinstance(value, FuncV) or not isinstance(value.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    module = value.module
    aliases = module_aliases(module.tree, module.bindings)
    for deco in value.node.decorator_list:
        name = resolve_decorator(deco, module.bindings, aliases)
        if name in ROOT_DECORATORS:
            return value, name
    return None


def _const_dim(node: ast.AST, env: dict) -> int | None:
    from nkilint.model.values import const_int

    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return const_int(env[node.id])
    return None


_ELEMENTWISE = {
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "exp", "log", "tanh", "sigmoid", "relu", "gelu",
    "silu", "sqrt", "rsqrt", "negative", "abs", "square", "reciprocal", "copy", "power", "equal", "not_equal",
    "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "invert", "sin", "cos", "erf", "softplus", "mish", "sign", "floor", "ceil", "where",
}


def _trusted_shape(ref: q.NodeRef) -> bool:
    """Shapes the model computes exactly: allocations, views, nl.load
    results, element-wise results."""
    data = ref.data
    if data.get("kind") == "view":
        return data.get("index_v") is not None
    origin = data.get("origin")
    if origin in ("alloc", "param"):
        return True
    api = str(data.get("api") or "")
    if origin == "result":
        if api == "nki.language.load":
            return True
        short = api.rpartition(".")[2]
        if api.startswith("nki.language.") and short in _ELEMENTWISE:
            return True
        producers = [u for u, _, d in ref.graph.g.in_edges(ref.node_id, data=True) if d.get("kind") == "writes"]
        return any(ref.graph.attrs(p).get("operator") for p in producers)
    return False


def _in_dead_loop(graph, loops) -> bool:
    """Inside a loop whose trip count is provably 0 (the code never runs)."""
    return any(q.upper(graph.attrs(l).get("trip_v")) == 0 for l in loops)


def _strip_ones(dims: list) -> list:
    i = 0
    while i < len(dims) - 1 and dims[i] == 1:
        i += 1
    return dims[i:]


_ACTIVATIONS = ("nki.isa.activation", "nki.isa.activation_reduce")


def _fully_allocated(f: FileFacts, kernel, graph) -> bool:
    """A direct-allocation kernel: every on-chip allocation is placed by
    hand, and no decorator hands allocation back to the compiler."""
    from nkilint.model.kernels import module_aliases, resolve_decorator

    aliases = module_aliases(f.tree, f.bindings)
    for deco in getattr(kernel.node, "decorator_list", []):
        name = resolve_decorator(deco, f.bindings, aliases) or ""
        qual = f.bindings.resolve(deco.func if isinstance(deco, ast.Call) else deco)
        full = qual.name if qual is not None else name
        if full.endswith(("enable_stack_allocator", "force_auto_alloc")):
            return False
    allocs = [d for _, d in graph.tensors() if d.get("origin") == "alloc" and d.get("buffer") in q.ON_CHIP]
    return bool(allocs) and all(
        type(d.get("address")).__name__ == "_Placement" and getattr(d.get("address"), "how", "") in ("alloc", "mod_alloc")
        for d in allocs)


def _vector_engine(value) -> bool:
    from nkilint.model.values import ApiRef

    if isinstance(value, ApiRef):
        name = value.qual.name.rpartition(".")[2]
        return name in ("vector_engine", "vector")
    return False


def _true(value) -> bool:
    from nkilint.model.values import truth

    return value is not None and truth(value) is True
