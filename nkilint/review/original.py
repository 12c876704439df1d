"""The correspondence between a GPU original and its NKI port: a checklist
that puts each structural aspect of the original (launch grid, block sizes,
shared memory, reductions, atomics, barriers, masks, accumulator types)
next to what the port does for it, as the semantic model sees the port.

Where the port shows no counterpart, the row is an open question for the
reviewer, not a finding: the original is read as text, and a port may
handle the same concern another way (an assert that sizes divide, a
different algorithm).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from .. import astwalk
from ..model.api_semantics import LANGUAGE_REDUCTIONS, is_matmul
from ..model.dtypes import LOW_PRECISION
from ..model.values import DType
from .original_source import Item, Structure, read_structure
from .report import KernelReview, Review

MATCHED, DIFFERS, OPEN, NOT_NEEDED, ABSENT = "matched", "differs", "open question", "no counterpart needed", "absent"
PORT_REDUCTIONS = {"tensor_reduce", "activation_reduce", "tensor_partition_reduce", "bn_stats", "bn_aggr",
                   "tensor_scalar_reduce", "select_reduce", "max8", "tensor_tensor_scan"}
MASK_APIS = {"affine_select", "range_select", "select", "where", "tensor_copy_predicated", "iota"}
WIDE = ("float32", "float64", "double", "fp32", "tl.float32")

TITLES = {
    "launch": "launch grid / program ids  <->  NKI loops",
    "block_sizes": "block / program sizes  <->  tiles",
    "shared_memory": "shared memory  <->  SBUF buffers",
    "reductions": "reductions  <->  reduce ops and matmul accumulation",
    "atomics": "atomics  <->  (no atomics in NKI)",
    "barriers": "barriers  <->  (the compiler orders instructions)",
    "masks": "masks / bounds checks  <->  tails, masks, asserts",
    "accumulators": "accumulator types",
}


@dataclass(frozen=True)
class Row:
    aspect: str
    title: str
    original: tuple[Item, ...]
    port: tuple[Item, ...]
    status: str
    note: str

    def to_json(self) -> dict:
        return {"aspect": self.aspect, "title": self.title, "status": self.status, "note": self.note,
                "original": [i.to_json() for i in self.original], "port": [i.to_json() for i in self.port]}


@dataclass
class OriginalReview:
    structure: Structure
    port_files: tuple[str, ...]
    rows: list[Row] = field(default_factory=list)

    @property
    def questions(self) -> list[Row]:
        return [r for r in self.rows if r.status in (OPEN, DIFFERS)]

    def to_json(self) -> dict:
        return {"path": self.structure.path, "language": self.structure.language, "port_files": list(self.port_files),
                "rows": [r.to_json() for r in self.rows], "open_questions": len(self.questions),
                "structure": self.structure.to_json()}


# ---------------------------------------------------------------- the port
def _api_short(api: str) -> str:
    return api.rsplit(".", 1)[-1]


def _line(data: dict) -> int:
    site = data.get("site")
    return site.line if site is not None else 0


def _dtype(data: dict) -> str | None:
    d = data.get("dtype_v")
    return d.name if isinstance(d, DType) else None


def port_items(kernels: list[KernelReview]) -> dict[str, list[Item]]:
    out: dict[str, list[Item]] = {k: [] for k in TITLES}

    def add(aspect: str, text: str, line: int, detail: str = "") -> None:
        item = Item(" ".join(text.split())[:90], line, detail)
        if item not in out[aspect]:
            out[aspect].append(item)

    for k in kernels:
        graph = k.kernel.graph
        for row in k.loops:
            add("launch", f"{row.header} ({row.trip.text()} trips)", row.line or 0)
        for node in astwalk.walk(k.kernel.node):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(("program_id", "num_programs")):
                add("launch", ast.unparse(node), node.lineno)
            if isinstance(node, ast.Assert) and "%" in ast.unparse(node.test):
                add("masks", f"assert {ast.unparse(node.test)}", node.lineno, "sizes assumed to divide")
        if k.memory is not None:
            for b in k.memory.sbuf:
                add("shared_memory", f"{b.name} {b.shape} {b.dtype or '?'}", b.line or 0)
                add("block_sizes", f"{b.name}: {b.shape}", b.line or 0)
        for op_id, data in sorted(graph.ops(), key=lambda x: x[1]["seq"]):
            api = str(data.get("api") or "")
            short = _api_short(api)
            line = _line(data)
            written = [graph.attrs(graph.base_tensor(n)) for n, _ in graph.writes(op_id)]
            if short in LANGUAGE_REDUCTIONS or short in PORT_REDUCTIONS or is_matmul(api):
                add("reductions", f"{short}(...)", line)
                for w in written:
                    dtype = _dtype(w)
                    if dtype:
                        add("accumulators", f"{short} -> {w.get('name') or 'tile'} ({w.get('buffer')})", line, dtype)
            if data.get("augmented"):
                for w in written:
                    if _dtype(w):
                        add("accumulators", f"{w.get('name') or 'tile'} += ...", line, _dtype(w))
            if "atomic" in short:
                add("atomics", f"{short}(...)", line)
            if short in ("core_barrier", "barrier"):
                add("barriers", f"{short}(...)", line)
            if short in MASK_APIS or "mask" in (data.get("params_v") or {}):
                add("masks", f"{short}(..., mask)" if short not in MASK_APIS else f"{short}(...)", line)
            if data.get("conditional"):
                add("masks", f"{short}(...) under an undecided condition", line)
        for _, data in graph.views():
            index = str(data.get("index") or "")
            if "min(" in index:
                add("masks", f"{data.get('name') or 'view'}[{index}]", _line(data), "bounded slice")
        for _, data in graph.tensors():
            if data.get("buffer") == "psum" and _dtype(data):
                add("accumulators", f"{data.get('name') or 'tile'} (PSUM)", _line(data), _dtype(data))
    return out


# ------------------------------------------------------------ the checklist
_REDUCTION_KIND = {
    "sum": "sum", "add": "sum", "mean": "sum", "xor_sum": "sum", "cumsum": "sum", "reduce_add": "sum",
    "max": "max", "amax": "max", "maximum": "max", "argmax": "max", "max8": "max",
    "min": "min", "amin": "min", "minimum": "min", "argmin": "min",
    "dot": "matmul", "matmul": "matmul", "mm": "matmul", "bmm": "matmul", "einsum": "matmul",
    "nc_matmul": "matmul", "nc_matmul_mx": "matmul",
}


def _reduction_kinds(items) -> set[str]:
    """sum / max / min / matmul from the call names on either side; shuffle
    and tree reductions of CUDA (whose operation is in the loop body) and
    ISA reductions (whose operation is an argument) give no kind."""
    kinds = set()
    for i in items:
        head = i.text.split("(", 1)[0].rsplit(".", 1)[-1]
        kind = _REDUCTION_KIND.get(head)
        if kind:
            kinds.add(kind)
    return kinds


def _lines(items) -> str:
    return ", ".join(str(i.line) for i in items[:6]) + (", ..." if len(items) > 6 else "")


def _row(aspect: str, orig: list[Item], port: list[Item]) -> Row:
    title = TITLES[aspect]
    o, p = tuple(orig), tuple(port)
    if not o and not p:
        return Row(aspect, title, o, p, ABSENT, "neither side has one")
    if aspect == "atomics":
        if o and not p:
            return Row(aspect, title, o, p, OPEN, f"the original combines results atomically (line {_lines(o)}); "
                       "NKI has no atomics: how does the port combine partial results (one program owns each output, "
                       "or a reduction after the loop)?")
    if aspect == "barriers":
        if o and not p:
            return Row(aspect, title, o, p, NOT_NEEDED, "NKI tracks dependencies between instructions itself; a "
                       "barrier has no counterpart unless the port splits work across cores (nisa.core_barrier)")
    if aspect == "masks":
        if o and not p:
            return Row(aspect, title, o, p, OPEN, f"the original guards out-of-range elements (line {_lines(o)}); the "
                       "port has no mask, min() bound, guard or divisibility assert: is every size a multiple of the "
                       "tile, or is the tail dropped?")
        if o and all(i.detail == "sizes assumed to divide" for i in p):
            return Row(aspect, title, o, p, DIFFERS, "the original handles any size with masks; the port asserts that "
                       "sizes divide: callers with other sizes are rejected")
    if aspect == "accumulators":
        wide_orig = [i for i in o if i.detail in WIDE or i.detail.endswith("float32")]
        low_port = [i for i in p if i.detail in LOW_PRECISION or i.detail in ("bfloat16", "float16")]
        if wide_orig and low_port:
            names = ", ".join(f"{i.text} ({i.detail}, line {i.line})" for i in low_port[:3])
            return Row(aspect, title, o, p, DIFFERS, f"the original accumulates in {wide_orig[0].detail} (line "
                       f"{wide_orig[0].line}); the port keeps {names}: results will differ from the GPU")
        if o and not p:
            return Row(aspect, title, o, p, OPEN, "the original declares its accumulator types; the model found no "
                       "typed accumulator in the port (types passed in from the caller?)")
        return Row(aspect, title, o, p, MATCHED, "accumulator types agree as far as both sides state them")
    if aspect == "reductions" and o and p:
        missing = sorted(_reduction_kinds(o) - _reduction_kinds(p))
        if missing:
            return Row(aspect, title, o, p, DIFFERS, f"the original computes {', '.join(missing)} reductions that the "
                       f"port does not (port: {', '.join(sorted(_reduction_kinds(p))) or 'none'})")
    if aspect == "reductions" and o and not p:
        return Row(aspect, title, o, p, OPEN, f"the original reduces (line {_lines(o)}); the model found no reduction "
                   "or matmul in the port")
    if aspect == "shared_memory" and o and not p:
        return Row(aspect, title, o, p, OPEN, "the original stages data in shared memory; the port allocates no SBUF "
                   "buffer the model could see")
    if aspect == "launch" and o and not p:
        return Row(aspect, title, o, p, OPEN, "the original launches a grid of programs; the port has no loop or "
                   "program id: does one launch cover every block of the grid?")
    if not o and p:
        return Row(aspect, title, o, p, MATCHED, "the port adds this; the original has none")
    return Row(aspect, title, o, p, MATCHED, "both sides have it: compare the lines")


def correspond(structure: Structure, review: Review) -> OriginalReview:
    port = port_items(review.kernels())
    result = OriginalReview(structure, tuple(f.path for f in review.files))
    for aspect in TITLES:
        row = _row(aspect, structure.items.get(aspect, []), port[aspect])
        if aspect == "masks" and row.status == OPEN:
            row = _tail_answer(row, review)
        result.rows.append(row)
    return result


def _tail_answer(row: Row, review: Review) -> Row:
    """The mask question answered by the findings: NKI718 reports the
    accesses of a ceil-div loop's last tile that nothing bounds."""
    tails = sorted({(fr.path, f.line) for fr in review.files for k in fr.kernels for f in k.findings
                    if f.rule_id == "NKI718" and "on the last iteration" in f.message})
    if not tails:
        return row
    where = ", ".join(f"{path}:{line}" for path, line in tails)
    return Row(row.aspect, row.title, row.original, row.port, DIFFERS,
               f"the original guards out-of-range elements (line {_lines(row.original)}); the port drops the tail: "
               f"its last tile runs past the end unless the size divides (NKI718 at {where})")


def read_original(path: Path, review: Review, display: str | None = None) -> OriginalReview:
    from .original_source import MissingParser

    try:
        structure = read_structure(path)
        if display:
            structure.path = display
    except MissingParser as exc:
        raise ValueError(str(exc)) from None
    return correspond(structure, review)


__all__ = ["OriginalReview", "Row", "correspond", "read_original", "port_items", "TITLES"]
