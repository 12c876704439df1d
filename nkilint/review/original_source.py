"""The structure of the GPU original a kernel was ported from, read as text
and parsed, never compiled or run: CUDA (``.cu``/``.cuh``) with tree-sitter's
CUDA grammar, Triton or PyTorch (``.py``) with Python's ``ast``.

What is collected is what a reviewer compares with the port: kernels,
launch grids and block/program sizes, shared memory, reductions, atomics,
barriers, masks and bounds checks, and the types accumulators are kept in.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from .. import astwalk

ASPECTS = ("kernels", "launch", "block_sizes", "shared_memory", "reductions", "atomics", "barriers", "masks",
           "accumulators")


@dataclass(frozen=True)
class Item:
    text: str
    line: int
    detail: str = ""  # a dtype for accumulators, a dimension for launch items

    def to_json(self) -> dict:
        out = {"text": self.text, "line": self.line}
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass
class Structure:
    path: str
    language: str  # cuda, triton, pytorch
    items: dict[str, list[Item]] = field(default_factory=lambda: {a: [] for a in ASPECTS})

    def add(self, aspect: str, text: str, line: int, detail: str = "") -> None:
        text = " ".join(text.split())
        if len(text) > 90:
            text = text[:87] + "..."
        if not any(i.text == text and i.line == line for i in self.items[aspect]):
            self.items[aspect].append(Item(text, line, detail))

    def to_json(self) -> dict:
        return {"path": self.path, "language": self.language,
                "items": {a: [i.to_json() for i in v] for a, v in self.items.items()}}


class MissingParser(RuntimeError):
    """The CUDA grammar is not installed."""


# ------------------------------------------------------------------- CUDA
CUDA_SUFFIXES = (".cu", ".cuh")
CUDA_BARRIERS = ("__syncthreads", "__syncwarp", "__syncthreads_and", "__syncthreads_or", "__syncthreads_count",
                 "__threadfence", "__threadfence_block", "sync", "barrier_sync", "arrive_and_wait")
CUDA_REDUCTION_CALLS = ("__shfl_down_sync", "__shfl_xor_sync", "__shfl_up_sync", "__shfl_sync", "__reduce_add_sync",
                        "__reduce_max_sync", "__reduce_min_sync", "Reduce", "Sum", "BlockReduce", "WarpReduce",
                        "reduce")
CUDA_TYPES_LOW = ("half", "__half", "half2", "__half2", "__nv_bfloat16", "nv_bfloat16", "__nv_bfloat162")
CUDA_INDEX_NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim")


def _cuda_parser():
    try:
        import tree_sitter_cuda
        from tree_sitter import Language, Parser
    except ImportError as exc:
        raise MissingParser(
            "reading a CUDA original needs the tree-sitter CUDA grammar: "
            "python3 -m pip install 'nkilint[review]' (tree-sitter, tree-sitter-cuda)") from exc
    return Parser(Language(tree_sitter_cuda.language()))


def _walk(node):
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(cur.children))


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


def _line(node) -> int:
    return node.start_point[0] + 1


def read_cuda(path: Path, text: str) -> Structure:
    tree = _cuda_parser().parse(text.encode("utf-8"))
    s = Structure(str(path), "cuda")
    index_names = _index_names(tree.root_node)
    for node in _walk(tree.root_node):
        kind = node.type
        if kind == "function_definition":
            qualifiers = {c.type for c in node.children}
            if "__global__" in qualifiers or "__device__" in qualifiers:
                decl = node.child_by_field_name("declarator")
                name = decl.child_by_field_name("declarator") if decl is not None else None
                label = "__global__" if "__global__" in qualifiers else "__device__"
                s.add("kernels", f"{label} {_text(name) if name is not None else '?'}", _line(node))
        elif kind == "kernel_call_syntax":
            args = [c for c in node.children if c.type not in ("<<<", ">>>", ",")]
            call = node.parent
            fn = call.child_by_field_name("function") if call is not None else None
            names = ("grid", "block", "shared bytes", "stream")
            parts = [f"{names[i]} {_text(a)}" for i, a in enumerate(args[:4])]
            s.add("launch", f"{_text(fn) if fn is not None else '?'}<<<{', '.join(_text(a) for a in args)}>>>",
                  _line(node), "; ".join(parts))
            if len(args) >= 2:
                s.add("block_sizes", f"block {_text(args[1])}", _line(node))
        elif kind == "declaration":
            quals = [c for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")]
            qual_text = " ".join(_text(q) for q in quals)
            type_node = node.child_by_field_name("type")
            type_text = _text(type_node) if type_node is not None else ""
            if "__shared__" in qual_text:
                s.add("shared_memory", _text(node).rstrip(";"), _line(node), type_text)
                continue
            # A float/double/half local initialised to a constant and
            # accumulated into later is an accumulator.
            for decl in node.children:
                if decl.type != "init_declarator":
                    continue
                target = decl.child_by_field_name("declarator")
                value = decl.child_by_field_name("value")
                if target is None or value is None or value.type not in ("number_literal", "unary_expression",
                                                                          "call_expression", "identifier"):
                    continue
                name = _text(target)
                scope = node.parent
                if scope is not None and _accumulated(scope, name) and (
                        type_text in ("float", "double") or type_text in CUDA_TYPES_LOW):
                    s.add("accumulators", f"{type_text} {name} = {_text(value)}", _line(node), _cuda_dtype(type_text))
        elif kind == "call_expression":
            fn = node.child_by_field_name("function")
            name = _text(fn) if fn is not None else ""
            short = name.rsplit("::", 1)[-1].rsplit(".", 1)[-1]
            if short.startswith("atomic"):
                s.add("atomics", _text(node), _line(node))
            elif short in CUDA_BARRIERS:
                s.add("barriers", _text(node), _line(node))
            elif short in CUDA_REDUCTION_CALLS or "Reduce" in name:
                s.add("reductions", _text(node), _line(node))
        elif kind == "if_statement":
            cond = node.child_by_field_name("condition")
            if cond is not None and _is_bounds_check(cond, index_names):
                s.add("masks", f"if {_text(cond)}", _line(node))
        elif kind == "for_statement":
            update = node.child_by_field_name("update")
            if update is not None and (">>=" in _text(update) or "/= 2" in _text(update)):
                s.add("reductions", f"for (...; {_text(update)}) tree reduction", _line(node))
        elif kind == "conditional_expression":
            cond = node.child_by_field_name("condition")
            if cond is not None and _is_bounds_check(cond, index_names):
                s.add("masks", _text(node), _line(node))
    return s


def _accumulated(scope, name: str) -> bool:
    for node in _walk(scope):
        if node.type == "assignment_expression":
            left = node.child_by_field_name("left")
            op = node.child_by_field_name("operator")
            if left is not None and _text(left) == name and op is not None and _text(op) in ("+=", "*=", "-="):
                return True
    return False


def _index_names(root) -> set[str]:
    """Variables computed from the thread/block indices (two rounds: ``i``
    from ``blockIdx``, ``row`` from ``i``)."""
    names: set[str] = set(CUDA_INDEX_NAMES)
    decls = [n for n in _walk(root) if n.type == "init_declarator"]
    for _ in range(2):
        for decl in decls:
            target, value = decl.child_by_field_name("declarator"), decl.child_by_field_name("value")
            if target is None or value is None:
                continue
            idents = {_text(n) for n in _walk(value) if n.type == "identifier"}
            if idents & names:
                names.add(_text(target))
    return names


def _is_bounds_check(cond, index_names: set[str]) -> bool:
    """A comparison that mentions a thread/block index (``i < n``)."""
    compares = any(n.type == "binary_expression" and any(_text(c) in ("<", ">", "<=", ">=") for c in n.children)
                   for n in _walk(cond))
    idents = {_text(n) for n in _walk(cond) if n.type in ("identifier", "field_expression")}
    return compares and bool({i.split(".")[0] for i in idents} & index_names)


def _cuda_dtype(type_text: str) -> str:
    return {"float": "float32", "double": "float64", "half": "float16", "__half": "float16",
            "__nv_bfloat16": "bfloat16", "nv_bfloat16": "bfloat16"}.get(type_text, type_text)


# ------------------------------------------------------------ Triton / PyTorch
TRITON_REDUCTIONS = ("sum", "max", "min", "reduce", "cumsum", "cumprod", "argmax", "argmin", "xor_sum", "dot")
TORCH_REDUCTIONS = ("sum", "max", "min", "mean", "softmax", "log_softmax", "amax", "amin", "norm", "var", "std",
                    "matmul", "mm", "bmm", "einsum")
TRITON_DTYPES = ("float32", "float16", "bfloat16", "float64", "int32", "float8e4nv", "float8e5")


def _dotted(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover
        return ""


def read_python(path: Path, text: str) -> Structure:
    tree = ast.parse(text)
    triton_names = {"tl", "triton"}
    for node in astwalk.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("triton"):
                    triton_names.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("triton"):
            for a in node.names:
                triton_names.add(a.asname or a.name)
    is_triton = "triton" in text
    s = Structure(str(path), "triton" if is_triton else "pytorch")
    jitted: dict[str, ast.FunctionDef] = {}
    for node in astwalk.walk(tree):
        if isinstance(node, ast.FunctionDef):
            decorators = [_dotted(d) for d in node.decorator_list]
            if any(d.split("(")[0].endswith(("triton.jit", "jit", "triton.autotune", "autotune")) for d in decorators):
                jitted[node.name] = node
                s.add("kernels", f"@{decorators[0]} {node.name}", node.lineno)
                for arg in node.args.args:
                    if arg.annotation is not None and "constexpr" in _dotted(arg.annotation):
                        s.add("block_sizes", f"{arg.arg}: tl.constexpr", node.lineno)
    for node in astwalk.walk(tree):
        if isinstance(node, ast.Call):
            func = _dotted(node.func)
            short = func.rsplit(".", 1)[-1]
            root = func.split(".", 1)[0]
            if short == "to" and node.args and _dotted(node.args[0]).rsplit(".", 1)[-1] in TRITON_DTYPES:
                s.add("accumulators", f"... .to({_dotted(node.args[0])})", node.lineno,
                      _dotted(node.args[0]).rsplit(".", 1)[-1])
            # kernel[grid](args, BLOCK=...)
            elif isinstance(node.func, ast.Subscript) and _dotted(node.func.value) in jitted:
                s.add("launch", f"{_dotted(node.func)}(...)", node.lineno, f"grid {_dotted(node.func.slice)}")
                for kw in node.keywords:
                    if kw.arg and kw.arg.isupper():
                        s.add("block_sizes", f"{kw.arg}={_dotted(kw.value)}", node.lineno)
            elif root in triton_names or root == "tl":
                if short == "program_id" or short == "num_programs":
                    s.add("launch", func + "(" + ", ".join(_dotted(a) for a in node.args) + ")", node.lineno)
                elif short.startswith("atomic_"):
                    s.add("atomics", _dotted(node), node.lineno)
                elif short == "debug_barrier":
                    s.add("barriers", _dotted(node), node.lineno)
                elif short in TRITON_REDUCTIONS:
                    s.add("reductions", _dotted(node), node.lineno)
                elif short in ("load", "store"):
                    for kw in node.keywords:
                        if kw.arg == "mask":
                            s.add("masks", f"{short}(..., mask={_dotted(kw.value)})", node.lineno)
                elif short == "where":
                    s.add("masks", _dotted(node), node.lineno)
                elif short in ("zeros", "full"):
                    dtype = next((_dotted(kw.value) for kw in node.keywords if kw.arg == "dtype"), "")
                    if dtype:
                        s.add("accumulators", _dotted(node), node.lineno, dtype.rsplit(".", 1)[-1])
                if short in TRITON_REDUCTIONS or short == "dot":
                    dtype = next((_dotted(kw.value) for kw in node.keywords if kw.arg in ("dtype", "out_dtype")), "")
                    if dtype:
                        s.add("accumulators", _dotted(node), node.lineno, dtype.rsplit(".", 1)[-1])
            elif not is_triton and root in ("torch", "F") and short in TORCH_REDUCTIONS:
                s.add("reductions", _dotted(node), node.lineno)
    return s


def read_structure(path: Path) -> Structure:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() in CUDA_SUFFIXES:
        return read_cuda(path, text)
    if path.suffix.lower() == ".py":
        try:
            return read_python(path, text)
        except SyntaxError as exc:
            raise ValueError(f"{path}: not valid Python: {exc.msg} (line {exc.lineno})") from None
    raise ValueError(f"{path}: --original reads CUDA (.cu, .cuh) or Triton/PyTorch (.py) files")


__all__ = ["Structure", "Item", "ASPECTS", "read_structure", "read_cuda", "read_python", "MissingParser"]
