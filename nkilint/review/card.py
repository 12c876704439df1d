"""The kernel card: who the kernel is, where, for which target, and what it
takes (parameters with the shapes, dtypes and memories the model derived)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..model.graph import dim_json
from ..model.semantic import FileModel, Kernel
from ..model.values import DType, const_int, describe


@dataclass(frozen=True)
class Param:
    name: str
    default: str | None  # source text of the default, if any
    tensor: bool  # the model saw it used as a tensor
    shape: tuple | None  # graph JSON dims (int or {"expr", "min", "max"}), None: rank unknown
    shape_text: str | None
    dtype: str | None
    buffer: str | None

    def to_json(self) -> dict:
        out = {"name": self.name, "default": self.default, "tensor": self.tensor}
        if self.tensor:
            out.update(shape=None if self.shape is None else list(self.shape), dtype=self.dtype, buffer=self.buffer)
        return out


@dataclass(frozen=True)
class Card:
    name: str
    file: str
    line: int
    end_line: int
    kind: str  # root or probable
    how: str  # decorator / launcher, or why it is probable device code
    generation: str  # legacy (neuronxcc.nki), current (nki), both, none
    sdk: str
    nki_version: str
    target_origin: str
    hardware: str
    partial: str | None  # the interpreter stopped early
    params: tuple[Param, ...] = field(default=())
    launch: str | None = None  # how the project uses it: launched, subkernel, uncalled (None: not known)
    # The launches the kernel was analysed again for (launch-site
    # specializations, each its own section), as "line 40: a=(128, 512) float32".
    launches: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            "name": self.name, "file": self.file, "line": self.line, "end_line": self.end_line, "kind": self.kind,
            "how": self.how, "generation": self.generation, "sdk": self.sdk, "nki_version": self.nki_version,
            "target_origin": self.target_origin, "hardware": self.hardware, "partial": self.partial,
            "launch": self.launch, "launches": list(self.launches), "params": [p.to_json() for p in self.params],
        }


LAUNCH = {
    "launched": "launched by host code in the scanned tree",
    "subkernel": "called only from other kernels (parameters may be on-chip tiles)",
    "uncalled": "nothing in the scanned tree calls it",
}

GENERATION = {
    "legacy": "legacy (neuronxcc.nki, NKI 0.1)",
    "current": "current (nki, NKI 0.2+)",
    "both": "both namespaces imported",
    "none": "no NKI import",
}


def _dim_text(v) -> str:
    c = const_int(v)
    return str(c) if c is not None else describe(v)


def build_card(model: FileModel, kernel: Kernel, display: str, settings) -> Card:
    graph = kernel.graph
    tensors = {}
    for _, data in graph.tensors():
        if data.get("origin") == "param" and data.get("name"):
            tensors.setdefault(data["name"], data)
    fn = kernel.node
    args = fn.args
    positional = list(args.posonlyargs) + list(args.args)
    defaults: dict[str, str] = {}
    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        defaults[arg.arg] = ast.unparse(default)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None:
            defaults[arg.arg] = ast.unparse(default)
    params = []
    for arg in positional + list(args.kwonlyargs):
        if arg.arg in ("self", "cls"):
            continue
        data = tensors.get(arg.arg)
        if data is None:
            params.append(Param(arg.arg, defaults.get(arg.arg), False, None, None, None, None))
            continue
        shape = data.get("shape_v")
        dtype = data.get("dtype_v")
        params.append(Param(
            arg.arg, defaults.get(arg.arg), True,
            None if shape is None else tuple(dim_json(d) for d in shape),
            None if shape is None else "(" + ", ".join(_dim_text(d) for d in shape) + ")",
            dtype.name if isinstance(dtype, DType) else None,
            data.get("buffer"),
        ))
    return Card(
        name=kernel.name,
        file=display,
        line=fn.lineno,
        end_line=getattr(fn, "end_lineno", fn.lineno) or fn.lineno,
        kind=kernel.kind,
        how=kernel.how,
        generation=model.dialect.value,
        sdk=settings.release.minor,
        nki_version=str(settings.nki_version),
        target_origin=settings.target_origin.text,
        hardware=settings.target.name,
        partial=kernel.error,
        params=tuple(params),
        launch=kernel.launch,
        launches=tuple(k.specialization.describe() for k in model.kernels
                       if kernel.specialization is None and k.specialization is not None
                       and k.base_name == kernel.name),
    )


__all__ = ["Card", "Param", "build_card", "GENERATION", "LAUNCH"]
