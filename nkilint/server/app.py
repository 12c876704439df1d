"""The pygls server: LSP requests and notifications wired to the session.

Diagnostics are computed from the documents' unsaved text, debounced while
typing, on one worker thread (the model is not thread-safe; the event loop
stays free to answer). A client that supports pull diagnostics asks for
them (``textDocument/diagnostic``); to any other client they are pushed.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from .convert import to_diagnostic
from .session import Checked, Session

DEBOUNCE_SECONDS = 0.15
logger = logging.getLogger(__name__)


class NkilintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("nkilint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.session: Session | None = None
        self.debounce = DEBOUNCE_SECONDS
        self.checked: dict[str, Checked] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._linting: dict[str, asyncio.Future] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nkilint-lint")
        self.pull = False

    # -- helpers ------------------------------------------------------------------
    def ensure_session(self) -> Session:
        if self.session is None:
            root = self.workspace.root_path if self.workspace else None
            self.session = Session(Path(root) if root else None)
        return self.session

    def document_path(self, uri: str) -> Path | None:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        return Path(path) if path else None

    async def lint(self, uri: str) -> Checked:
        """Lint the document's current text (once per version)."""
        document = self.workspace.get_text_document(uri)
        version = document.version
        current = self.checked.get(uri)
        if current is not None and current.text == document.source:
            current.version = version  # an undo, or a change back: same text, same findings
            return current
        running = self._linting.get(uri)
        if running is not None and getattr(running, "nkilint_version", None) == version:
            return await running
        session = self.ensure_session()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._worker, session.lint, self.document_path(uri), document.source, version,
                                      uri.rsplit("/", 1)[-1])
        future.nkilint_version = version  # type: ignore[attr-defined]
        self._linting[uri] = future
        try:
            checked = await future
        finally:
            if self._linting.get(uri) is future:
                del self._linting[uri]
        self._show_problems(session)
        if uri in self.workspace.text_documents or uri in self.checked:
            self.checked[uri] = checked
        return checked

    def diagnostics(self, uri: str, checked: Checked) -> list[types.Diagnostic]:
        lines = checked.text.splitlines(keepends=True) or [""]
        codec = self.workspace.position_codec
        session = self.ensure_session()
        root = checked.checker.settings.root if checked.checker is not None else None
        active = [f for f in checked.result.findings if not f.suppressed]
        return [to_diagnostic(f, uri, lines, codec, session.ruleset, root) for f in active]

    async def lint_and_publish(self, uri: str) -> None:
        try:
            checked = await self.lint(uri)
        except Exception:  # pragma: no cover - logged; the server keeps running
            logger.exception("lint failed for %s", uri)
            return
        if self.pull or uri not in self.workspace.text_documents:
            return
        if self.workspace.get_text_document(uri).version != checked.version:
            return  # a newer edit is on its way
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=checked.version, diagnostics=self.diagnostics(uri, checked))
        )

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Lint after a quiet period (typing produces a change per key)."""
        loop = asyncio.get_running_loop()
        previous = self._pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        wait = self.debounce if delay is None else delay
        self._pending[uri] = loop.call_later(wait, lambda: asyncio.ensure_future(self._fire(uri)))

    async def _fire(self, uri: str) -> None:
        self._pending.pop(uri, None)
        await self.lint_and_publish(uri)

    def relint_all(self) -> None:
        """Settings or files on disk changed: check every open document again."""
        self.checked.clear()
        if self.pull:
            self.workspace_diagnostic_refresh(None)
        for uri in list(self.workspace.text_documents):
            self.schedule(uri, 0)

    def _show_problems(self, session: Session) -> None:
        while session.problems:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, session.problems.pop(0)))


def create_server() -> NkilintServer:
    server = NkilintServer()
    _register(server)
    return server


def _register(server: NkilintServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: NkilintServer, params: types.InitializeParams) -> None:
        caps = params.capabilities.text_document
        ls.pull = bool(caps and caps.diagnostic)
        options = params.initialization_options or {}
        if isinstance(options, dict) and isinstance(options.get("debounce"), (int, float)):
            ls.debounce = max(0.0, float(options["debounce"]))

    @server.feature(types.INITIALIZED)
    def initialized(ls: NkilintServer, params: types.InitializedParams) -> None:
        ls.ensure_session()
        watch = ls.client_capabilities.workspace
        if watch and watch.did_change_watched_files and watch.did_change_watched_files.dynamic_registration:
            watchers = [types.FileSystemWatcher(glob_pattern=g) for g in ("**/pyproject.toml", "**/*.py",
                                                                          "**/requirements*.txt")]
            ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
                id="nkilint-watch", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: NkilintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: NkilintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: NkilintServer, params: types.DidSaveTextDocumentParams) -> None:
        path = ls.document_path(params.text_document.uri)
        if path is not None and path.name == "pyproject.toml":
            ls.ensure_session().reload()
            ls.relint_all()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: NkilintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        pending = ls._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        ls.checked.pop(uri, None)
        if not ls.pull:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: NkilintServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = [p for p in (ls.document_path(change.uri) for change in params.changes) if p is not None]
        ls.ensure_session().files_changed(paths)
        ls.relint_all()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: NkilintServer, params: types.DidChangeConfigurationParams) -> None:
        ls.ensure_session().reload()
        ls.relint_all()

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier="nkilint", inter_file_dependencies=True, workspace_diagnostics=False),
    )
    async def pull_diagnostics(ls: NkilintServer, params: types.DocumentDiagnosticParams):
        uri = params.text_document.uri
        checked = await ls.lint(uri)
        result_id = f"{checked.version}:{hash(checked.text) & 0xFFFFFFFF:x}"
        if params.previous_result_id == result_id:
            return types.UnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.FullDocumentDiagnosticReport(items=ls.diagnostics(uri, checked), result_id=result_id)

    from .actions import register as register_actions
    from .hover import register as register_hover

    register_actions(server)
    register_hover(server)
