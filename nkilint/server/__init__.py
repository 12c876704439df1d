"""``nkilint server``: a Language Server Protocol server over stdio.

Built on pygls (the optional ``[server]`` extra). It lints open documents
from their unsaved text with the CLI's engine and configuration, offers
the findings' fixes, "fix all", "disable for this line" and hover with
what the model knows about a tensor. Like the CLI it never imports or runs
the code it checks.

Modules: ``session`` (settings, checkers and results per document; no LSP),
``convert`` (findings and spans to LSP types), ``actions`` (code actions),
``hover`` (hover text), ``app`` (the pygls server and its handlers).
"""

from __future__ import annotations


def main() -> None:
    """Serve LSP on stdin/stdout until the client exits."""
    from .app import create_server

    create_server().start_io()
