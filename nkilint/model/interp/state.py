"""State and value kinds private to the abstract interpreter: limits,
control-flow exceptions, frames, statistics, and the values only the
interpreter creates (parameters that become tensors on use, shapes of
unknown rank, bound methods, legacy placements, ...)."""

from __future__ import annotations

from typing import Callable

import ast
from dataclasses import dataclass, field

from ..bindings import Qual
from ..project import ModuleInfo
from ..values import Const, DictV, INF, Int, Sym, TensorV, TupleV, Unknown, Value


MAX_INLINE_DEPTH = 10
MAX_STEPS = 400000
# All the kernels of one file together (launch-site specializations and
# sub-kernel re-analyses included): each kernel's budget bounds one kernel,
# this bounds a file of many kernels that fan out into deep helpers. The
# largest file of the public kernel repositories spends about 250,000.
FILE_STEPS = 3 * MAX_STEPS
MAX_UNROLL = 16
NKI_DTYPES = {
    "bool_", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32", "bfloat16", "tfloat32",
    "float8_e4m3", "float8_e4m3fn", "float8_e5m2", "float8_e5m2_x4", "float8_e4m3fn_x4", "float8_e8m0fnu",
    "float4_e2m1fn_x4", "int64", "uint64", "float64",
}
NUMPY_DTYPES = {"float32", "float16", "bfloat16", "int32", "int8", "int16", "uint8", "uint16", "uint32", "bool_", "float64", "int64"}
BUFFERS = {"sbuf", "psum", "hbm", "shared_hbm", "private_hbm"}


class Budget(Exception):
    """The step budget is spent: stop interpreting this kernel."""


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


class _Dead(Exception):
    """The rest of this block does not execute (raise / unreachable)."""


@dataclass
class Frame:
    vars: dict[str, Value]
    module: ModuleInfo
    func: str  # qualified function name (for node attributes)
    parent: "Frame | None" = None  # enclosing function (closures)
    returns: list[Value] = field(default_factory=list)


@dataclass(eq=False)
class ParamTensor(Int):
    """A kernel parameter: an unknown integer until it is used as a tensor,
    when it becomes one (``materialize``)."""

    name: str = ""
    node: ast.AST | None = None
    buffer: str = "hbm"
    tensor: TensorV | None = None
    annotation_shape: tuple[Value, ...] | None = None
    annotation_dtype: Value | None = None  # a launch-site specialization's dtype

    def __repr__(self) -> str:
        return f"Param({self.name})"


@dataclass(eq=False)
class ShapeV(Value):
    """The shape of a tensor whose rank may be unknown; dims made on demand."""

    tensor_name: str
    dims: dict[int, Value] = field(default_factory=dict)
    rank: int | None = None
    label: str | None = None

    def dim(self, i: int) -> Value:
        if self.rank is not None and i < 0:
            i += self.rank
            if i < 0:
                return Unknown(f"{self.tensor_name}.shape index out of range")
        if i not in self.dims:
            name = f"{self.tensor_name}.shape[{i}]"
            self.dims[i] = Int(sym=Sym(name, 1, INF, origin="param"), label=name)
        return self.dims[i]

    def fix_rank(self, n: int) -> tuple[Value, ...]:
        if self.rank is None:
            self.rank = n
            # Dims first reached from the end (shape[-1]) are the same dims.
            for neg in [k for k in self.dims if k < 0]:
                pos = neg + n
                if pos >= 0 and pos not in self.dims:
                    self.dims[pos] = self.dims[neg]
        return tuple(self.dim(i) for i in range(self.rank))


@dataclass
class InterpStats:
    steps: int = 0
    unknown_reasons: dict[str, int] = field(default_factory=dict)
    functions_visited: set[int] = field(default_factory=set)
    inline_failures: int = 0
    # Helper calls replayed from a summary instead of inlined, and summaries
    # recorded (see summaries.py).
    summary_hits: int = 0
    summaries_recorded: int = 0

@dataclass(eq=False)
class _FloatRange(Value):
    lo: float
    hi: float
    label: str | None = None
    # x / d with d a positive integer constant: (x, d), so that
    # math.ceil(x / d) is known to be a ceiling division.
    quotient: tuple[Value, int] | None = None


@dataclass(eq=False)
class _TensorWithShapeObj(TensorV):
    shape_obj: ShapeV | None = None


@dataclass(eq=False)
class _TensorMethod(Value):
    tensor: TensorV
    name: str
    label: str | None = None


@dataclass(eq=False)
class _ListMethod(Value):
    lst: TupleV
    name: str
    label: str | None = None

    def call(self, args: list[Value], unknown: Callable[[str], Value]) -> Value:
        if self.name == "append" and args:
            self.lst.items = self.lst.items + (args[0],)
            if len(self.lst.items) > 4096:
                self.lst.items = self.lst.items[-4096:]
            return Const(None)
        if self.name == "extend" and args and isinstance(args[0], TupleV):
            self.lst.items = self.lst.items + args[0].items
            return Const(None)
        if self.name == "copy":
            return TupleV(self.lst.items, is_list=True)
        if self.name == "pop" and self.lst.items:
            last = self.lst.items[-1]
            self.lst.items = self.lst.items[:-1]
            return last
        return unknown(f"list.{self.name}")


@dataclass(eq=False)
class _DictMethod(Value):
    dct: DictV
    name: str
    label: str | None = None

    def call(self, args: list[Value], unknown: Callable[[str], Value]) -> Value:
        if self.name == "get" and args and isinstance(args[0], Const):
            try:
                if args[0].value in self.dct.items:
                    return self.dct.items[args[0].value]
            except TypeError:
                pass
            return args[1] if len(args) > 1 else Const(None)
        if self.name == "items":
            return TupleV(tuple(TupleV((Const(k), v)) for k, v in self.dct.items.items()))
        if self.name == "keys":
            return TupleV(tuple(Const(k) for k in self.dct.items))
        if self.name == "values":
            return TupleV(tuple(self.dct.items.values()))
        return unknown(f"dict.{self.name}")


@dataclass(eq=False)
class _Enumerate(Value):
    inner: Value
    label: str | None = None


@dataclass(eq=False)
class _Zip(Value):
    inners: tuple[Value, ...]
    label: str | None = None


@dataclass(eq=False)
class _SeqV(Value):
    """A homogeneous sequence of unknown or large length (comprehension)."""

    element: Value
    length: Value
    label: str | None = None


@dataclass(eq=False)
class _TypeSpec(Value):
    index: Value
    label: str | None = None


@dataclass(eq=False)
class ArrayV(Value):
    """A host-side numpy array of known shape (constants for the kernel)."""

    shape: tuple[Value, ...]
    dtype: Value
    label: str | None = None


@dataclass(eq=False)
class _Placement(Value):
    """Legacy explicit placement: ``ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,))``."""

    buffer: str
    how: str  # alloc, mod_alloc, auto_alloc
    kwargs: dict
    args: tuple
    label: str | None = None


@dataclass(eq=False)
class _Decorator(Value):
    qual: Qual
    label: str | None = None
