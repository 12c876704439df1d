"""NKI616 version-behavior-change."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.bindings import Gen
from nkilint.model.values import Const, DType
from nkilint.rule import invalid, valid
from nkilint.versions import V0_3, V0_4, V0_5

from ._base import MIGRATION_GUIDE, RELEASE_NOTES, Issues, MigrationRule
from ._index import NameIndex


class BehaviorChange(MigrationRule):
    id = "NKI616"
    name = "version-behavior-change"
    family = "migration"
    level = Level.ERROR
    summary = "A call an earlier NKI version accepted and the target rejects (rsqrt on PSUM, dma_transpose rank, memset value dtype)"
    explanation = """
Some calls keep their name and signature but the target version rejects
arguments an earlier one accepted (aws-neuron-sdk `nki/migration/index.rst`
and the release notes):

* **NKI 0.5**: `nl.rsqrt` runs on the GpSimd engine for precision and "no
  longer accepts PSUM inputs";
* **NKI 0.4**: `nisa.dma_transpose` "enforces that `dst.shape` matches the
  transposed `src.shape` exactly, including rank" (a lower-rank `dst` was
  padded silently before);
* **NKI 0.3**: `nisa.memset` requires the value to match the dtype of
  `dst` (an int literal for integer tiles; 0.2 cast `2.0` silently), and x4
  packed dtypes (`float8_e4m3fn_x4`, ...) accept only `value=0`. A float
  zero into an integer tile is not reported: nki-library's 0.6 kernels
  zero-fill `uint32` tiles with `value=0.0`.

Reported from the kernel model, only when it knows the operand's buffer,
shape or dtype, and only for `nki.*` calls (legacy calls are reported for
their calling convention, NKI609). The other semantic changes of these
versions are not decidable from the source: `nisa.tensor_reduce(axis=1)`
meaning the last free dim in 0.2 but dim 1 in 0.3 depends on what the
author meant, so it is documented here, not reported.

**Fix:** the message says how: `nisa.activation(op=nl.rsqrt, ...)` for a
PSUM input, a `dst` of the same rank as `src`, a value of `dst`'s dtype.
"""
    references = (f"{MIGRATION_GUIDE} (0.2 -> 0.3, 0.3 -> 0.4, 0.4 -> 0.5)", f"{RELEASE_NOTES} (2.29-2.31)")
    examples = (
        invalid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def k(a):
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                r = nl.rsqrt(ps)
                ib = nl.ndarray((128, 512), dtype=nl.int32, buffer=nl.sbuf)
                nisa.memset(dst=ib, value=2.0)
                d3 = nl.ndarray((128, 4, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                s4 = nl.ndarray((64, 4, 1, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_transpose(dst=d3, src=s4)
                return r
            """,
            lines=[8, 10, 13],
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def k(a):
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                r = nl.rsqrt(ps)
                ib = nl.ndarray((128, 512), dtype=nl.int32, buffer=nl.sbuf)
                nisa.memset(dst=ib, value=2.0)
                return r
            """,
            lines=[10],
            title="NKI 0.3: only the memset value is rejected yet",
            nki_version="0.3",
        ),
        valid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def k(a):
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=r, op=nl.rsqrt, data=ps)
                ib = nl.ndarray((128, 512), dtype=nl.int32, buffer=nl.sbuf)
                nisa.memset(dst=ib, value=2)
                d4 = nl.ndarray((128, 1, 4, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                s4 = nl.ndarray((64, 4, 1, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_transpose(dst=d4, src=s4, axes=(3, 2, 1, 0))
                return r
            """,
        ),
        valid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def k(a):
                ib = nl.ndarray((128, 512), dtype=nl.int32, buffer=nl.sbuf)
                nisa.memset(dst=ib, value=2.0)
            """,
            title="NKI 0.2 cast the value",
            nki_version="0.2",
        ),
    )

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        if index.version < V0_3 or index.bindings.dialect.value not in ("current", "both"):
            return
        model = index.model
        seen: set[tuple] = set()
        for ref in q.ops(model, ("nki.language.rsqrt", "nki.isa.memset", "nki.isa.dma_transpose")):
            data = ref.data
            call = data.get("call")
            if call is None:
                continue
            qual = index.bindings.resolve(call.func) if model.in_this_file(ref.site) else None
            if qual is not None and qual.gen is not Gen.CURRENT:
                continue  # legacy calls are reported for their calling convention (NKI609)
            node = model.report_node(ref.site)
            if node is None:
                continue
            api = data.get("api")
            key = (api, id(node))
            message = None
            if api == "nki.language.rsqrt" and index.version >= V0_5:
                message = _rsqrt(ref)
            elif api == "nki.isa.dma_transpose" and index.version >= V0_4:
                message = _dma_transpose(ref)
            elif api == "nki.isa.memset":
                message = _memset(ref)
            if message is None or key in seen:
                continue
            seen.add(key)
            helper = None if model.in_this_file(ref.site) else ref.site
            out.add(node, Level.ERROR, message, hint=_HINTS[api], helper=helper)


X4 = ("float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4")

_HINTS = {
    "nki.language.rsqrt": "call nisa.activation(dst=..., op=nl.rsqrt, data=psum_tile) (ScalarE reads PSUM), or copy "
                          "the tile to SBUF with nisa.tensor_copy first",
    "nki.isa.dma_transpose": "give dst the rank of src (e.g. a 4-D dst for a 4-D src) or transpose a src view of the "
                             "rank you want",
    "nki.isa.memset": "pass a value of dst's dtype (an int literal for integer tiles; only 0 for x4 packed dtypes, "
                      "otherwise DMA pre-computed data in)",
}


def _operand(ref: q.NodeRef, *names: str) -> tuple[str, dict] | None:
    ops = q.operands(ref)
    for name in names:
        if name in ops:
            node_id, _ = ops[name]
            return node_id, ref.graph.attrs(node_id)
    return None


def _rsqrt(ref: q.NodeRef) -> str | None:
    operand = _operand(ref, "x", "data", "src")
    if operand is None:
        return None
    node_id, data = operand
    base = ref.graph.base_tensor(node_id)
    if ref.graph.attrs(base).get("buffer") != "psum":
        return None
    return (f"nl.rsqrt reads {q.tensor_name(data)}, a PSUM tile: from NKI 0.5 nl.rsqrt runs on the GpSimd engine "
            "and no longer accepts PSUM input")


def _dma_transpose(ref: q.NodeRef) -> str | None:
    dst = _operand(ref, "dst")
    src = _operand(ref, "src", "data")
    if dst is None or src is None:
        return None
    dshape, sshape = dst[1].get("shape_v"), src[1].get("shape_v")
    if dshape is None or sshape is None or len(dshape) == len(sshape):
        return None
    return (f"nisa.dma_transpose writes {q.tensor_name(dst[1])} of rank {len(dshape)} {q.fmt_shape(dshape)} from "
            f"{q.tensor_name(src[1])} of rank {len(sshape)} {q.fmt_shape(sshape)}: from NKI 0.4 dst must have "
            "exactly the rank and shape of the transposed src (0.3 padded the rank silently)")


def _memset(ref: q.NodeRef) -> str | None:
    dst = _operand(ref, "dst")
    value = q.param_value(ref, "value")
    if dst is None or not isinstance(value, Const):
        return None
    dtype = dst[1].get("dtype_v")
    if not isinstance(dtype, DType):
        base = ref.graph.attrs(ref.graph.base_tensor(dst[0]))
        dtype = base.get("dtype_v")
    if not isinstance(dtype, DType):
        return None
    name = dtype.name
    v = value.value
    if name in X4 and v != 0:
        return (f"nisa.memset(value={v!r}) into {q.tensor_name(dst[1])} of x4 packed dtype {name}: from NKI 0.3 "
                "x4 packed types accept only value=0")
    # value=0.0 is not reported: nki-library (0.6) zero-fills uint32 tiles
    # with value=0.0 (cross_partition_copy.py), so zero is evidently accepted.
    if name.startswith(("int", "uint")) and isinstance(v, float) and v != 0:
        return (f"nisa.memset(value={v!r}) into {q.tensor_name(dst[1])} of dtype {name}: from NKI 0.3 the value "
                "must match dst's dtype (0.2 cast it silently)")
    return None
