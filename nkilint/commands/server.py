"""``nkilint server``: the language server for editors (LSP over stdio)."""

from __future__ import annotations

import click


@click.command("server")
def server_command() -> None:
    """Run the language server on stdin/stdout (for editors; see docs/editor.md).

    Needs the optional dependencies: pip install 'nkilint[server]'.
    """
    try:
        from ..server import main
        import pygls  # noqa: F401 - checked here for a clear message
    except ImportError as exc:
        raise click.ClickException(
            f"the language server needs pygls and lsprotocol ({exc}); install them with: pip install 'nkilint[server]'"
        ) from None
    main()
