"""The Logical NeuronCore (LNC) degrees a file's host code makes visible.

Two degrees must agree when a kernel is compiled into a model (NCC_EVRF066):
the kernel's (a launch ``kernel[2](...)``, or ``NEURON_LOGICAL_NC_CONFIG``)
and neuronx-cc's (``--lnc`` in ``NEURON_CC_FLAGS`` or a ``compiler_args``
list). Only literal settings in the file's own code count: what the
environment or the command line sets is invisible here, and the defaults
(kernel 1, compiler 2 on trn2 and later) are not "visible" values.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

_LNC_FLAG = re.compile(r"--(?:lnc|logical-nc-config)(?:=|\s+)(\d+)")
_KERNEL_ENV = "NEURON_LOGICAL_NC_CONFIG"
_COMPILER_ENV = "NEURON_CC_FLAGS"


@dataclass(frozen=True)
class LncSetting:
    degree: int
    node: ast.AST
    how: str  # "kernel[2](...)", "NEURON_LOGICAL_NC_CONFIG = '2'", "NEURON_CC_FLAGS --lnc=1", "compiler_args --lnc 1"
    callee: str | None = None  # the name a bracket launch calls (None: an environment setting)


def _env_assignment(node: ast.AST) -> tuple[str, str] | None:
    """``os.environ["NAME"] = "value"`` / ``os.environ.setdefault("NAME", "value")`` / ``os.putenv(...)``."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
        if (isinstance(target, ast.Subscript) and _is_environ(target.value)
                and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)
                and isinstance(value, ast.Constant) and isinstance(value.value, str)):
            return target.slice.value, value.value
    if isinstance(node, ast.Call) and len(node.args) == 2 and all(
            isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
        func = node.func
        if isinstance(func, ast.Attribute) and (
                (func.attr == "setdefault" and _is_environ(func.value))
                or (func.attr == "putenv" and isinstance(func.value, ast.Name) and func.value.id == "os")):
            return node.args[0].value, node.args[1].value
    return None


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name) \
        and node.value.id == "os"


def _compiler_args(node: ast.Call) -> LncSetting | None:
    for kw in node.keywords:
        if kw.arg != "compiler_args" or not isinstance(kw.value, (ast.List, ast.Tuple)):
            continue
        items = [e.value for e in kw.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        match = _LNC_FLAG.search(" ".join(items))
        if match:
            return LncSetting(int(match.group(1)), kw.value, f"compiler_args {match.group(0)}")
    return None


def lnc_settings(nodes: Iterable[ast.AST]) -> tuple[list[LncSetting], list[LncSetting]]:
    """(kernel degrees, compiler degrees) set literally among ``nodes`` (a
    file's node list, ``SourceFile.nodes``). A bracket launch ``name[2](...)``
    is a kernel degree only if ``name`` is a kernel: its ``callee`` says
    which name, for the caller to decide."""
    kernel: list[LncSetting] = []
    compiler: list[LncSetting] = []
    for node in nodes:
        env = _env_assignment(node)
        if env is not None:
            name, value = env
            if name == _KERNEL_ENV and value.strip().isdigit():
                kernel.append(LncSetting(int(value), node, f"{_KERNEL_ENV} = '{value.strip()}'"))
            elif name == _COMPILER_ENV:
                match = _LNC_FLAG.search(value)
                if match:
                    compiler.append(LncSetting(int(match.group(1)), node, f"{_COMPILER_ENV} {match.group(0)}"))
        if not isinstance(node, ast.Call):
            continue
        setting = _compiler_args(node)
        if setting is not None:
            compiler.append(setting)
        func = node.func
        if (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name)
                and isinstance(func.slice, ast.Constant) and type(func.slice.value) is int):
            kernel.append(LncSetting(func.slice.value, node, f"{func.value.id}[{func.slice.value}](...)",
                                     func.value.id))
    order = lambda s: (getattr(s.node, "lineno", 0), getattr(s.node, "col_offset", 0))  # noqa: E731
    return sorted(kernel, key=order), sorted(compiler, key=order)
