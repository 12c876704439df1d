"""What the matmul rules (NKI105-NKI107) read of a matmul call."""

from __future__ import annotations

from nkilint.model.views import Op, Operand

from ._shapes import api_leaf, const_tuple, is_true, operands

# nisa.nc_matmul / nl.matmul
NC_MATMUL = ("nki.isa.nc_matmul",)
NL_MATMUL = ("nki.language.matmul",)


def matmul_operands(op: Op) -> dict[str, Operand]:
    """Operands whose shapes the model knows reliably, by parameter."""
    return {
        o.param: o
        for o in operands(op)
        if o.param in ("stationary", "moving", "x", "y", "dst") and o.node.shape_trusted
    }


def double_row(op: Op) -> bool | None:
    """True/False when the perf mode is known, None when it is not."""
    mode = op.param("perf_mode")
    if mode is None:
        return False
    leaf = api_leaf(mode)
    if leaf is None:
        return None
    return "double" in leaf


def tile_size(op: Op) -> tuple[int, int] | None:
    """``tile_size=(rows, columns)`` when given exactly."""
    t = const_tuple(op.param("tile_size"))
    if t is not None and len(t) == 2:
        return t[0], t[1]
    return None


def nl_matmul_transposed(op: Op) -> bool | None:
    """``transpose_x`` of a legacy nl.matmul (None when not known)."""
    v = op.param("transpose_x")
    if v is None:
        return False
    return is_true(v)
