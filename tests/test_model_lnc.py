"""The LNC degrees a file sets literally (nkilint.model.lnc)."""

from __future__ import annotations

import ast

from nkilint.model.lnc import lnc_settings

SOURCE = """\
import os
os.environ["NEURON_LOGICAL_NC_CONFIG"] = "2"
os.environ["NEURON_CC_FLAGS"] = f"--lnc={n}"
os.putenv("NEURON_CC_FLAGS", "--logical-nc-config=1 -O2")
trace(model, compiler_args=["--lnc", "1"])
k[2](x)
fns[2](x)
k[1, 2](x)
"""


def test_literal_settings_only():
    kernel, compiler = lnc_settings(ast.walk(ast.parse(SOURCE)))
    assert [(s.degree, s.node.lineno, s.how, s.callee) for s in kernel] == [
        (2, 2, "NEURON_LOGICAL_NC_CONFIG = '2'", None), (2, 6, "k[2](...)", "k"), (2, 7, "fns[2](...)", "fns")]
    # the f-string is not a literal; k[1, 2] is a grid, not an LNC degree (whether fns is a kernel is the rule's call)
    assert [(s.degree, s.node.lineno) for s in compiler] == [(1, 4), (1, 5)]
    assert compiler[0].how == "NEURON_CC_FLAGS --logical-nc-config=1"
