"""What the messages and references of the semantics rules share."""

from __future__ import annotations

ERRORS_DOC = "aws-neuron-sdk nki/api/nki.errors.rst @1db4d74e"
