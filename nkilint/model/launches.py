"""Where host code launches a kernel with concrete arrays, and their shapes.

A kernel's inputs are unknown when the kernel is read alone; the host code
that launches it often says exactly what they are::

    a = np.random.rand(128, 512).astype(np.float32)
    out = nki.simulate(matmul)(a, np.zeros((512, 256), dtype=np.float32))

This module finds such launches in a module (never running anything) and
gives, for each one, the shape and dtype of every array argument it can
decide and the value of every constant argument: a ``Launch`` the
interpreter uses to analyse the kernel once more as a *specialization*.

Launch forms: ``k(...)``, ``k[grid](...)``, ``L(k)(...)`` and
``L(..)(k)(...)`` for a launcher ``L`` (``nki.jit``, ``nki.simulate``,
``nki.baremetal``, ``nki.benchmark``, ...), ``nki.simulate_kernel(k, ...)``
(and the other launchers that take the kernel first), and a name assigned
one of those wrappers (``run = nki.jit(k)``). Array arguments: NumPy
(``zeros``, ``ones``, ``empty``, ``full``, ``random.rand`` / ``randn`` /
``random`` / ``uniform`` / ``normal``), torch (``zeros``, ``ones``,
``empty``, ``rand``, ``randn``), ``jax.numpy`` and ``jax.ShapeDtypeStruct``,
with ``.astype(dtype)`` / ``.to(dtype)``; a name bound once in the same
function (or module) to one of them; dimensions that are integer literals
or names bound once to integer expressions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .. import astwalk
from .bindings import Bindings
from .kernels import LAUNCHERS, module_aliases, resolve_decorator

# Launchers that take the kernel as their first argument and its inputs after it.
KERNEL_FIRST = {"nki.simulate_kernel", "jax_neuronx.nki_call", "nki.execute", "nki.multi_rank_execute",
                "nki.multi_rank_simulate", "nki.compiler.kernel_builder.compile_kernel"}

# dtype names NKI knows, by the last component of the host spelling.
_DTYPES = {
    "float32": "float32", "float": "float32", "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
    "bool_": "uint8", "float8_e4m3": "float8_e4m3", "float8_e5m2": "float8_e5m2",
    "float8_e4m3fn": "float8_e4m3", "tfloat32": "tfloat32",
}
_SHAPE_FIRST = {"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.random.random",
                "numpy.random.random_sample", "jax.numpy.zeros", "jax.numpy.ones", "jax.numpy.empty",
                "jax.numpy.full", "jax.ShapeDtypeStruct"}
_DIMS = {"numpy.random.rand", "numpy.random.randn", "torch.zeros", "torch.ones", "torch.empty", "torch.rand",
         "torch.randn"}
_SIZE_KEYWORD = {"numpy.random.uniform", "numpy.random.normal", "numpy.random.randint"}
# Constructors whose default dtype is not an NKI dtype (NumPy's float64/int64): the dtype stays unknown.
_DEFAULT_DTYPE = {"torch": "float32", "jax": "float32"}
MAX_DEPTH = 6


@dataclass(frozen=True)
class ArgSpec:
    """One launch argument: an array (shape, dtype) or a constant (value)."""

    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    value: int | float | bool | None = None

    @property
    def is_array(self) -> bool:
        return self.shape is not None

    def describe(self) -> str:
        if self.shape is not None:
            dims = ", ".join(str(d) for d in self.shape)
            return f"({dims}{',' if len(self.shape) == 1 else ''})" + (f" {self.dtype}" if self.dtype else "")
        return repr(self.value)


@dataclass(frozen=True)
class Launch:
    """A launch of ``kernel`` with the arguments it decides."""

    kernel: ast.FunctionDef
    line: int
    args: tuple[tuple[str, ArgSpec], ...]
    # The project file the launch is in, relative to the project root, when
    # it is not the kernel's own file (a test importing the kernel).
    file: str | None = None

    def describe(self) -> str:
        """``line 40: a=(128, 512) float32, n=4`` (``tests/test_k.py line 12: ...``
        for a launch in another file)."""
        where = f"{self.file} line {self.line}" if self.file else f"line {self.line}"
        return f"{where}: " + ", ".join(f"{name}={spec.describe()}" for name, spec in self.args)

    @property
    def key(self) -> tuple:
        return self.args


def find_launches(tree: ast.Module, bindings: Bindings, kernels: list[ast.FunctionDef],
                  device: set[int], parents: dict[int, ast.AST], nodes: list[ast.AST] | None = None,
                  names: dict[str, ast.FunctionDef] | None = None, file: str | None = None) -> list[Launch]:
    """The launches of ``kernels`` in host code of ``tree`` (outside the
    functions whose ids are in ``device``) with at least one decided array
    argument; one per distinct set of arguments, in source order.

    ``names`` maps the names (or dotted ``module.kernel`` chains) under which
    ``tree`` sees the kernels when it is another module of the project that
    imports them; ``file`` then names that module in each ``Launch``."""
    by_name: dict[str, ast.FunctionDef] = dict(names) if names is not None else {}
    if names is None:
        for fn in kernels:
            by_name.setdefault(fn.name, fn)
    if not by_name:
        return []
    aliases = module_aliases(tree, bindings)
    resolver = _Resolver(bindings, parents)
    wrappers: dict[str, ast.FunctionDef] = {}
    walk = nodes if nodes is not None else astwalk.walk_list(tree)
    for node in walk:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            fn = _wrapped_kernel(node.value, by_name, bindings, aliases)
            if fn is not None:
                wrappers[node.targets[0].id] = fn
    out: list[Launch] = []
    seen: set[tuple] = set()
    for node in walk:
        if not isinstance(node, ast.Call) or _inside(node, device, parents):
            continue
        found = _launched(node, by_name, wrappers, bindings, aliases)
        if found is None:
            continue
        fn, args, keywords = found
        specs = _bind(fn, args, keywords, resolver)
        if not any(spec.is_array for _, spec in specs):
            continue
        key = (id(fn), tuple(specs))
        if key in seen:
            continue
        seen.add(key)
        out.append(Launch(fn, node.lineno, tuple(specs), file))
    return out


def _inside(node: ast.AST, device: set[int], parents: dict[int, ast.AST]) -> bool:
    cur = parents.get(id(node))
    while cur is not None:
        if id(cur) in device:
            return True
        cur = parents.get(id(cur))
    return False


def _wrapped_kernel(expr: ast.AST, by_name, bindings: Bindings, aliases) -> ast.FunctionDef | None:
    """The kernel ``L(k)`` / ``L(...)(k)`` / ``k[grid]`` wraps (a loop: a
    subscript chain can be thousands deep)."""
    while True:
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Name):
            return by_name.get(expr.id)
        elif isinstance(expr, ast.Attribute):
            return by_name.get(_dotted(expr) or "")
        elif isinstance(expr, ast.Call) and expr.args and isinstance(expr.args[0],
                                                                       (ast.Name, ast.Subscript, ast.Attribute)):
            name = resolve_decorator(expr.func, bindings, aliases)
            if name not in LAUNCHERS or name in KERNEL_FIRST:
                return None
            expr = expr.args[0]
        else:
            return None


def _launched(call: ast.Call, by_name, wrappers, bindings: Bindings, aliases):
    """(kernel, positional args, keywords) if ``call`` launches a kernel."""
    func = call.func
    if isinstance(func, ast.Subscript):
        func = func.value  # a grid: k[g](...)
    if isinstance(func, ast.Name):
        if func.id in by_name:
            return by_name[func.id], call.args, call.keywords
        if func.id in wrappers:
            return wrappers[func.id], call.args, call.keywords
        return None
    if isinstance(func, ast.Attribute) and (_dotted(func) or "") in by_name:
        return by_name[_dotted(func) or ""], call.args, call.keywords  # mod.kernel(...) from an importing file
    if isinstance(func, ast.Call):
        fn = _wrapped_kernel(func, by_name, bindings, aliases)
        if fn is not None:
            return fn, call.args, call.keywords
        return None
    name = resolve_decorator(func, bindings, aliases)
    if name in KERNEL_FIRST and call.args:
        fn = _wrapped_kernel(call.args[0], by_name, bindings, aliases)
        if fn is not None:
            return fn, call.args[1:], [k for k in call.keywords if k.arg is not None]
    return None


def _dotted(expr: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes on a name (a loop: chains can be long)."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return None


def _bind(fn: ast.FunctionDef, args, keywords, resolver: "_Resolver") -> list[tuple[str, ArgSpec]]:
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    out: list[tuple[str, ArgSpec]] = []
    for i, arg in enumerate(args):
        if isinstance(arg, ast.Starred) or i >= len(params):
            break
        spec = resolver.spec(arg)
        if spec is not None:
            out.append((params[i], spec))
    known = set(params) | {a.arg for a in fn.args.kwonlyargs}
    for kw in keywords:
        if kw.arg is None or kw.arg not in known:
            continue
        spec = resolver.spec(kw.value)
        if spec is not None:
            out.append((kw.arg, spec))
    return out


def _own_nodes(scope: ast.AST):
    """The nodes of a scope, not descending into nested functions, lambdas
    and classes (whose names it binds, but not their locals)."""
    stack = astwalk.child_nodes(scope)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(astwalk.child_nodes(node))


class _Resolver:
    """Decides launch arguments from the syntax (names bound exactly once)."""

    def __init__(self, bindings: Bindings, parents: dict[int, ast.AST]) -> None:
        self.bindings = bindings
        self.parents = parents
        self._scopes: dict[int, dict[str, list[ast.AST]]] = {}

    def _scope_of(self, at: ast.AST) -> ast.AST | None:
        scope = self.parents.get(id(at))
        while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            scope = self.parents.get(id(scope))
        return scope

    def _table(self, scope: ast.AST) -> dict[str, list[ast.AST | None]]:
        """Every binding of every name in a scope: the bound expression for
        ``name = value``, None for any other binding form."""
        table = self._scopes.get(id(scope))
        if table is not None:
            return table
        table = {}
        for node in _own_nodes(scope):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    simple = isinstance(target, ast.Name)
                    for sub in astwalk.walk(target):
                        if isinstance(sub, ast.Name):
                            table.setdefault(sub.id, []).append(node.value if simple else None)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.comprehension)):
                for sub in astwalk.walk(node.target):
                    if isinstance(sub, ast.Name):
                        table.setdefault(sub.id, []).append(None)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                for sub in astwalk.walk(node.optional_vars):
                    if isinstance(sub, ast.Name):
                        table.setdefault(sub.id, []).append(None)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not scope:
                table.setdefault(node.name, []).append(None)
            elif isinstance(node, ast.arg):
                table.setdefault(node.arg, []).append(None)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    table.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
        self._scopes[id(scope)] = table
        return table

    def _assigned(self, at: ast.AST, name: str) -> ast.AST | None:
        """The one value ``name`` is bound to in the function around ``at``,
        else in the module (a name bound several times is not decided)."""
        scope = self._scope_of(at)
        while scope is not None:
            values = self._table(scope).get(name)
            if values:
                return values[0] if len(values) == 1 else None
            if isinstance(scope, ast.Module):
                return None
            scope = self._scope_of(scope)
        return None

    def spec(self, expr: ast.AST, depth: int = 0) -> ArgSpec | None:
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            value = self._assigned(expr, expr.id)
            return self.spec(value, depth + 1) if value is not None else None
        if isinstance(expr, ast.Constant) and isinstance(expr.value, (bool, int, float)):
            return ArgSpec(value=expr.value)
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr in ("astype", "to") and len(expr.args) == 1:
            inner = self.spec(func.value, depth + 1)
            dtype = self.dtype(expr.args[0])
            if inner is None or not inner.is_array:
                return None
            if dtype is None and func.attr == "to":
                return inner  # .to(device)
            return ArgSpec(inner.shape, dtype)
        qual = self.bindings.resolve(func)
        if qual is None:
            return None
        name = qual.name
        shape: tuple[int, ...] | None = None
        if name in _SHAPE_FIRST and expr.args:
            shape = self.shape(expr.args[0], depth)
        elif name in _DIMS:
            if len(expr.args) == 1 and isinstance(expr.args[0], (ast.Tuple, ast.List, ast.Name)):
                shape = self.shape(expr.args[0], depth)
            elif expr.args and not any(isinstance(a, ast.Starred) for a in expr.args):
                dims = [self.integer(a, depth) for a in expr.args]
                shape = tuple(dims) if all(d is not None for d in dims) else None
        elif name in _SIZE_KEYWORD:
            size = next((k.value for k in expr.keywords if k.arg == "size"), None)
            shape = self.shape(size, depth) if size is not None else None
        if shape is None or not shape or any(d <= 0 for d in shape):
            return None
        dtype_expr = next((k.value for k in expr.keywords if k.arg == "dtype"), None)
        if dtype_expr is None and name == "jax.ShapeDtypeStruct" and len(expr.args) > 1:
            dtype_expr = expr.args[1]
        if dtype_expr is None and name in ("numpy.zeros", "numpy.ones", "numpy.empty") and len(expr.args) > 1:
            dtype_expr = expr.args[1]
        dtype = self.dtype(dtype_expr) if dtype_expr is not None else _DEFAULT_DTYPE.get(name.split(".")[0])
        return ArgSpec(shape, dtype)

    def shape(self, expr: ast.AST | None, depth: int) -> tuple[int, ...] | None:
        if expr is None or depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            value = self._assigned(expr, expr.id)
            return self.shape(value, depth + 1) if value is not None else None
        if isinstance(expr, (ast.Tuple, ast.List)):
            dims = [self.integer(e, depth) for e in expr.elts]
            return tuple(dims) if all(d is not None for d in dims) else None  # type: ignore[misc]
        single = self.integer(expr, depth)
        return (single,) if single is not None else None

    def integer(self, expr: ast.AST, depth: int) -> int | None:
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return expr.value
        if isinstance(expr, ast.Name):
            value = self._assigned(expr, expr.id)
            return self.integer(value, depth + 1) if value is not None else None
        if isinstance(expr, ast.BinOp):
            left, right = self.integer(expr.left, depth + 1), self.integer(expr.right, depth + 1)
            if left is None or right is None:
                return None
            if isinstance(expr.op, ast.Add):
                return left + right
            if isinstance(expr.op, ast.Sub):
                return left - right
            if isinstance(expr.op, ast.Mult):
                return left * right
            if isinstance(expr.op, ast.FloorDiv) and right:
                return left // right
            if isinstance(expr.op, ast.Pow) and 0 <= right <= 32:
                return left ** right
        return None

    def dtype(self, expr: ast.AST) -> str | None:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return _DTYPES.get(expr.value)
        if isinstance(expr, ast.Attribute):
            return _DTYPES.get(expr.attr)
        if isinstance(expr, ast.Name):
            return _DTYPES.get(expr.id) if expr.id in ("bfloat16", "float8_e4m3", "float8_e5m2") else None
        return None


__all__ = ["ArgSpec", "Launch", "find_launches"]
