"""Drive ``nkilint server`` over stdio with pygls' LSP client, as an editor would."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

TIMEOUT = 120.0


class Editor:
    """One server process and the client side of the conversation."""

    def __init__(self, root: Path, pull: bool = False, env: dict[str, str] | None = None,
                 watch: bool = True, debounce: float = 0.05) -> None:
        self.root = root
        self.debounce = debounce
        self.pull = pull
        self.watch = watch
        self.env = env
        self.client = LanguageClient("nkilint-tests", "1")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self.messages: list[str] = []
        self.registrations: list[types.Registration] = []
        self.refreshes = 0
        self._arrived = asyncio.Event()
        self.versions: dict[str, int] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _published(params: types.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append(params)
            self._arrived.set()

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def _message(params: types.ShowMessageParams) -> None:
            self.messages.append(params.message)

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def _log(params: types.LogMessageParams) -> None:
            pass

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def _register(params: types.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)

        @self.client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
        def _refresh(params: None) -> None:
            self.refreshes += 1

    async def __aenter__(self) -> "Editor":
        env = dict(os.environ)
        env.update(self.env or {})
        await self.client.start_io(sys.executable, "-m", "nkilint", "server", cwd=str(self.root), env=env)
        capabilities = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                diagnostic=types.DiagnosticClientCapabilities() if self.pull else None,
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                    related_information=True, tag_support=types.ClientDiagnosticsTagOptions(
                        value_set=[types.DiagnosticTag.Unnecessary, types.DiagnosticTag.Deprecated]),
                    code_description_support=True),
                hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            ),
            workspace=types.WorkspaceClientCapabilities(
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
                if self.watch else None,
                diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True) if self.pull else None),
        )
        await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=capabilities, root_uri=from_fs_path(str(self.root)), process_id=os.getpid(),
            initialization_options={"debounce": self.debounce},
            workspace_folders=[types.WorkspaceFolder(from_fs_path(str(self.root)), "root")])), TIMEOUT)
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, *exc) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
            self.client.exit(None)
        finally:
            await self.client.stop()

    # -- documents --------------------------------------------------------------
    def uri(self, name: str) -> str:
        return from_fs_path(str(self.root / name))

    def open(self, name: str, text: str) -> str:
        uri = self.uri(name)
        self.versions[uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        return uri

    def replace(self, uri: str, text: str) -> None:
        """A full-text change (as after applying a whole-document edit)."""
        self.versions[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=self.versions[uri], uri=uri),
            [types.TextDocumentContentChangeWholeDocument(text=text)]))

    def edit(self, uri: str, line: int, col: int, end_line: int, end_col: int, text: str) -> None:
        """An incremental change (0-based LSP positions)."""
        self.versions[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=self.versions[uri], uri=uri),
            [types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(line, col), types.Position(end_line, end_col)), text=text)]))

    async def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        """The diagnostics for the document's current version (pulled or pushed)."""
        if self.pull:
            report = await asyncio.wait_for(self.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))), TIMEOUT)
            return list(report.items)
        version = self.versions[uri]
        deadline = asyncio.get_running_loop().time() + TIMEOUT
        while True:
            for params in reversed(self.published.get(uri, [])):
                if params.version == version:
                    return list(params.diagnostics)
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise TimeoutError(f"no diagnostics for {uri} version {version}")
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def code_actions(self, uri: str, line: int, col: int, only: list[str] | None = None):
        pos = types.Position(line, col)
        return await asyncio.wait_for(self.client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), types.Range(pos, pos),
            types.CodeActionContext(diagnostics=[], only=only))), TIMEOUT)

    async def hover(self, uri: str, line: int, col: int) -> str | None:
        result = await asyncio.wait_for(self.client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(line, col))), TIMEOUT)
        return None if result is None else result.contents.value

    def files_changed(self, *paths: Path) -> None:
        self.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            [types.FileEvent(from_fs_path(str(p)), types.FileChangeType.Changed) for p in paths]))


def apply_edit(text: str, edit: types.WorkspaceEdit, uri: str) -> str:
    """Apply a workspace edit's text edits (0-based, UTF-16 positions) to a document."""
    edits = list((edit.changes or {}).get(uri, []))
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(pos: types.Position) -> int:
        if pos.line >= len(lines):
            return len(text)
        line = lines[pos.line]
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return starts[pos.line] + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return starts[pos.line] + len(line.rstrip("\r\n"))

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a, b = offset(e.range.start), offset(e.range.end)
        text = text[:a] + e.new_text + text[b:]
    return text


def run(coro):
    return asyncio.run(coro)
