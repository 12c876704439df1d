"""Behaviour changes of a version that need the kernel model (NKI616):
the same call is accepted by an earlier version and rejected by the target.

* ``nl.rsqrt`` with a PSUM input: rejected from NKI 0.5 (it runs on GpSimd);
* ``nisa.dma_transpose`` whose ``dst`` rank differs from ``src``: rejected
  from NKI 0.4 (no implicit rank padding any more);
* ``nisa.memset`` with a float value into an integer ``dst``, or a non-zero
  value into an x4 packed dtype: rejected from NKI 0.3.

Facts: aws-neuron-sdk nki/migration/index.rst (0.2 -> 0.3, 0.3 -> 0.4,
0.4 -> 0.5) and release-notes/components/nki.rst. Only ``nki.*`` calls are
checked (legacy calls are reported for their calling convention, NKI609),
and only when the model knows the buffer, dtype or shape: nothing is
reported about unknown operands.
"""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.paths import display_path
from nkilint.model import query as q
from nkilint.model.bindings import Gen
from nkilint.model.values import Const, DType
from nkilint.versions import V0_3, V0_4, V0_5

from ._common import helper_site
from ._migration_scan import Scan

X4 = ("float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4")


def run(s: Scan) -> None:
    if s.version < V0_3:
        return
    try:
        model = s.model
    except Exception:  # pragma: no cover - the model failing is reported by the engine
        return
    seen: set[tuple] = set()
    for ref in q.ops(model, ("nki.language.rsqrt", "nki.isa.memset", "nki.isa.dma_transpose")):
        data = ref.data
        call = data.get("call")
        if call is None:
            continue
        qual = s.bindings.resolve(call.func) if model.in_this_file(ref.site) else None
        if qual is not None and qual.gen is not Gen.CURRENT:
            continue
        node = model.report_node(ref.site)
        if node is None:
            continue
        api = data.get("api")
        key = (api, id(node))
        message = None
        if api == "nki.language.rsqrt" and s.version >= V0_5:
            message = _rsqrt(ref)
        elif api == "nki.isa.dma_transpose" and s.version >= V0_4:
            message = _dma_transpose(ref)
        elif api == "nki.isa.memset":
            message = _memset(ref)
        if message is None or key in seen:
            continue
        seen.add(key)
        if not model.in_this_file(ref.site):
            message += f" (in {display_path(ref.site.file, s.ctx.settings.root)}:{ref.site.line}, reached from here)"
            related = [helper_site(ref.site, s.ctx)]
        else:
            related = None
        s.add("NKI616", node, Level.ERROR, message, hint=_HINTS[api], related=related)


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
