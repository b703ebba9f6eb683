"""``torchlint lsp``: a language server that shows findings and offers fixes.

It speaks the Language Server Protocol on stdin/stdout through pygls (1.3 and
2.x are supported).  Each open Python document is linted with the settings
of its path (the closest ``[tool.torchlint]``; excluded files are skipped, as
with ``--force-exclude``), and with the cross-file facts a run over that file
gathers (the project modules it imports, read from disk), when it is opened or saved, and once typing pauses
(``DEBOUNCE_SECONDS`` after the last change); closing it clears its findings.  Every fix is offered as a quick fix, and all safe fixes
together as the source action ``source.fixAll.torchlint``; every finding
also gets a quick fix that suppresses it on its line (``# noqa: CODE``),
a hover with its rule's summary, and a ``codeDescription`` link to the
rule's page.  A configuration
error is shown as a message; the server keeps running.
"""

from __future__ import annotations

import asyncio
import bisect
import contextvars
import importlib
from concurrent.futures import Future, ThreadPoolExecutor
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from lsprotocol import types as lsp

from torchlint.version import __version__
from torchlint.model import Applicability, Diagnostic, Edit
from torchlint.source.lines import line_index

if TYPE_CHECKING:
    from torchlint.lint.engine import LintConfig

SOURCE = "torchlint"
FIX_ALL_KIND = "source.fixAll.torchlint"
CONFIG_FILENAMES = ("pyproject.toml", "torchlint.toml", ".torchlint.toml")
_PYTHON_SUFFIXES = (".py", ".pyi")
DEBOUNCE_SECONDS = 0.3
"""Quiet time after the last change before a document is linted: a burst of
keystrokes costs one lint, of the text as it ends up."""


# -- positions ------------------------------------------------------------


def _units(text: str, encoding: str) -> int:
    """The length of ``text`` in the code units of an LSP position encoding."""
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class Positions:
    """Converts between character offsets into a text and LSP positions.

    Lines end at ``\\r\\n``, ``\\r`` or ``\\n`` (as in the LSP and in the
    engine); ``character`` counts code units of the negotiated encoding,
    UTF-16 unless the client chose another.
    """

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        self.lines = line_index(text)
        self.starts = self.lines.starts

    def _line_end(self, line: int) -> int:
        """The offset where line ``line`` (0-based) ends, before its newline."""
        return self.lines.content_end(line + 1)

    def position(self, offset: int) -> lsp.Position:
        """The LSP position of a character offset."""
        offset = min(max(offset, 0), len(self.text))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        offset = min(offset, self._line_end(line))  # never inside a "\r\n"
        return lsp.Position(line=line, character=_units(self.text[start:offset], self.encoding))

    def offset(self, position: lsp.Position) -> int:
        """The character offset of an LSP position (clamped to the text)."""
        line: int = position.line
        character: int = position.character
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        end = self._line_end(line)
        if self.encoding == "utf-32":
            return min(start + max(character, 0), end)
        units = 0
        offset = start
        while offset < end:
            step = _units(self.text[offset], self.encoding)
            if units + step > character:
                break
            units += step
            offset += 1
        return offset

    def from_engine(self, line: int, column: int) -> int:
        """The offset of the engine's 1-based line and character column."""
        if line < 1:
            return 0
        if line > len(self.starts):
            return len(self.text)
        return min(self.starts[line - 1] + max(column - 1, 0), self._line_end(line - 1))

    def range(self, start: int, end: int) -> lsp.Range:
        """The LSP range between two offsets."""
        return lsp.Range(start=self.position(start), end=self.position(end))


# -- converting findings -----------------------------------------------------


def _trimmed(old: str, new: str) -> Edit:
    """One edit turning ``old`` into ``new``, without the common ends."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    # Do not cut a "\r\n" in two: positions inside one do not exist.
    if 0 < prefix < len(old) and old[prefix - 1] == "\r" and old[prefix] == "\n":
        prefix -= 1
    if 0 < suffix and len(old) - suffix > prefix and old[-suffix] == "\n" and old[-suffix - 1] == "\r":
        suffix -= 1
    return Edit(prefix, len(old) - suffix, new[prefix : len(new) - suffix])


def to_lsp_diagnostic(diagnostic: Diagnostic, positions: Positions) -> lsp.Diagnostic:
    """A torchlint finding as an LSP diagnostic (0-based range, a warning),
    its code linked to the rule's page."""
    start = positions.from_engine(diagnostic.start.line, diagnostic.start.column)
    end = positions.from_engine(diagnostic.end.line, diagnostic.end.column)
    page = rule_page_uri(diagnostic.code)
    return lsp.Diagnostic(
        range=positions.range(start, max(start, end)),
        severity=lsp.DiagnosticSeverity.Warning,
        code=diagnostic.code,
        code_description=lsp.CodeDescription(href=page) if page is not None else None,
        source=SOURCE,
        message=diagnostic.message,
    )


def rule_page_uri(code: str) -> Optional[str]:
    """Where a rule's page is: the ``file:`` URI of the rule's own module,
    whose docstring is the page ``torchlint explain`` prints (torchlint
    ships no web pages); None for a code that is no rule (``TL000``)."""
    from torchlint.ruleapi.registry import by_code_or_name

    rule = by_code_or_name(code) if code.startswith("TL") else None
    module = sys.modules.get(rule.__module__) if rule is not None else None
    source = getattr(module, "__file__", None)
    return Path(source).resolve().as_uri() if source else None


def hover_text(diagnostic: Diagnostic) -> Optional[str]:
    """Markdown for a hover over a finding: the rule, its summary, how to read more."""
    from torchlint.ruleapi.registry import by_code_or_name

    rule = by_code_or_name(diagnostic.code) if diagnostic.code.startswith("TL") else None
    if rule is None:
        return None
    fix = {"always": "Fix is always available.", "sometimes": "Fix is sometimes available.",
           "none": "Fix is not available."}[rule.fix_availability.value]
    page = rule_page_uri(rule.code)
    more = f"[the rule's page]({page}), or `torchlint explain {rule.code}`" if page else f"`torchlint explain {rule.code}`"
    return f"**{rule.code} {rule.name}**: {rule.summary}\n\n{fix} More: {more}."


def _text_edits(edits: Sequence[Edit], positions: Positions) -> List[lsp.TextEdit]:
    return [
        lsp.TextEdit(range=positions.range(edit.start, edit.end), new_text=edit.text)
        for edit in sorted(edits, key=lambda e: (e.start, e.end))
    ]


def _covers(requested: Any, kind: str) -> bool:
    """Whether a requested code action kind includes ``kind`` (kinds nest by dots)."""
    value = str(getattr(requested, "value", requested))  # enum members or plain strings
    return kind == value or kind.startswith(value + ".")


@dataclass(frozen=True)
class _Linted:
    """One document's text, findings and what is needed to fix them."""

    uri: str
    version: Optional[int]
    text: str
    path: str
    diagnostics: Tuple[Diagnostic, ...]
    config: Optional[LintConfig]  # None: the file is excluded


# -- the server ------------------------------------------------------------


def _pygls_server_class() -> Any:
    """pygls's LanguageServer: ``pygls.lsp.server`` in 2.x, ``pygls.server`` in 1.x."""
    try:
        module = importlib.import_module("pygls.lsp.server")
    except ImportError:
        module = importlib.import_module("pygls.server")
    return getattr(module, "LanguageServer")


def _fs_path(uri: str) -> Optional[str]:
    """The file-system path of a ``file:`` URI, or None."""
    uris = importlib.import_module("pygls.uris")
    path: Optional[str] = uris.to_fs_path(uri) if uri.startswith("file:") else None
    return path


class TorchlintServer:
    """torchlint's handlers, attached to a pygls ``LanguageServer``."""

    def __init__(self, server: Any = None) -> None:
        self.server: Any = server if server is not None else _pygls_server_class()(SOURCE, __version__)
        self._shown_errors: Dict[str, str] = {}
        # Per document: the timer of a lint waiting for typing to pause.
        self._timers: Dict[str, asyncio.TimerHandle] = {}
        # Lints of changed text run off the event loop, one at a time, so
        # newer changes keep arriving while one runs.
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torchlint-lint")
        self._register(lsp.TEXT_DOCUMENT_DID_OPEN, self.did_open)
        self._register(lsp.TEXT_DOCUMENT_DID_CHANGE, self.did_change)
        self._register(lsp.TEXT_DOCUMENT_DID_SAVE, self.did_save)
        self._register(lsp.TEXT_DOCUMENT_DID_CLOSE, self.did_close)
        self._register(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, self.did_change_watched_files)
        self._register(lsp.TEXT_DOCUMENT_HOVER, self.hover)
        self._register(
            lsp.TEXT_DOCUMENT_CODE_ACTION,
            self.code_action,
            lsp.CodeActionOptions(
                code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND],
                resolve_provider=False,
            ),
        )

    def _register(self, method: str, handler: Callable[[Any], Any], options: Any = None) -> None:
        """Register ``handler`` for ``method``.

        pygls marks the functions it registers with attributes, which bound
        methods refuse, so each handler goes through a plain function.
        """

        def call(params: Any) -> Any:
            return handler(params)

        call.__name__ = call.__qualname__ = getattr(handler, "__name__", method)
        self.server.feature(method, options)(call)

    # -- protocol plumbing (the parts that differ between pygls 1 and 2) --

    def _notify(self, method: str, params: Any) -> None:
        protocol = getattr(self.server, "protocol", None) or getattr(self.server, "lsp")
        protocol.notify(method, params)

    def _encoding(self) -> str:
        encoding = getattr(self.server.workspace, "position_encoding", None)
        value = str(getattr(encoding, "value", encoding) or "utf-16")
        return value if value in ("utf-8", "utf-16", "utf-32") else "utf-16"

    def _document_changes(self) -> bool:
        capabilities = getattr(self.server, "client_capabilities", None)
        workspace = getattr(capabilities, "workspace", None)
        edit = getattr(workspace, "workspace_edit", None)
        return bool(getattr(edit, "document_changes", False))

    def _show_error(self, uri: str, message: str) -> None:
        """Show ``message`` once until it changes or the document lints again."""
        if self._shown_errors.get(uri) == message:
            return
        self._shown_errors[uri] = message
        self._notify(
            lsp.WINDOW_SHOW_MESSAGE,
            lsp.ShowMessageParams(type=lsp.MessageType.Error, message=message),
        )

    def _publish(self, uri: str, diagnostics: List[lsp.Diagnostic], version: Optional[int]) -> None:
        self._notify(
            lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version),
        )

    # -- linting --------------------------------------------------------

    def lint(self, uri: str) -> Optional[_Linted]:
        """Lint an open document; None when it is not linted or on an error."""
        if not self._is_python(uri):
            return None
        document = self.server.workspace.get_text_document(uri)
        return self._shown(uri, self._lint_text(uri, document.source, document.version))

    def _shown(self, uri: str, outcome: "Union[_Linted, str]") -> Optional[_Linted]:
        """The lint, or None after showing its error message."""
        if isinstance(outcome, str):
            self._show_error(uri, outcome)
            return None
        self._shown_errors.pop(uri, None)
        return outcome

    def _lint_text(self, uri: str, text: str, version: Optional[int]) -> "Union[_Linted, str]":
        """Lint one version of a document's text: the findings, or the error to show.

        Touches no protocol state, so it may run on the worker thread.
        """
        from torchlint.lint.engine import lint_source
        from torchlint.source.parsing import size_error
        from torchlint.lint.runner import prepare_one_file
        from torchlint.lint.settings import ConfigError, SettingsResolver, clear_detection_caches

        fs_path = _fs_path(uri)
        name = fs_path or uri
        try:
            # Fresh each time: configuration files may have changed.
            clear_detection_caches()
            resolver = SettingsResolver()
            if fs_path is None:
                settings, config_path = resolver.default, None
            else:
                settings, config_path = resolver.for_path(Path(fs_path)), Path(fs_path)
                if settings.is_excluded(config_path):
                    return _Linted(uri, version, text, name, (), None)
            config = settings.lint_config(config_path)
            too_large = size_error(name, text)
            # The cross-file facts the command line sees for this file (the
            # modules it imports, read from disk): the editor agrees with
            # `torchlint check` and pre-commit.  An unsaved document has none.
            # Passed to this lint alone: a lint on the event loop and one on
            # the worker thread each see their own document's index.
            config = replace(config, project=prepare_one_file(config_path, resolver.for_path))
            diagnostics = (too_large,) if too_large else tuple(lint_source(text, name, config))
        except ConfigError as error:
            return f"torchlint: {error}"
        except Exception as error:  # a bug: say so, keep serving
            return f"torchlint: internal error on {name}: {type(error).__name__}: {error}"
        return _Linted(uri, version, text, name, diagnostics, config)

    def _is_python(self, uri: str) -> bool:
        """Whether a document is Python source (a notebook or TOML file is not)."""
        fs_path = _fs_path(uri)
        if fs_path is not None:
            return fs_path.endswith(_PYTHON_SUFFIXES)
        document = self.server.workspace.get_text_document(uri)
        return getattr(document, "language_id", None) in (None, "python")

    def publish(self, uri: str) -> None:
        """Lint a document and publish its findings (none on an error)."""
        self._cancel_timer(uri)
        if not self._is_python(uri):
            return
        self._publish_linted(uri, self.lint(uri))

    def _publish_linted(self, uri: str, linted: Optional[_Linted]) -> None:
        if linted is None:
            document = self.server.workspace.get_text_document(uri)
            self._publish(uri, [], document.version)
            return
        positions = Positions(linted.text, self._encoding())
        self._publish(uri, [to_lsp_diagnostic(d, positions) for d in linted.diagnostics], linted.version)

    # -- debouncing -------------------------------------------------------

    def _cancel_timer(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def schedule(self, uri: str) -> None:
        """Lint ``uri`` once no change has come for ``DEBOUNCE_SECONDS``."""
        self._cancel_timer(uri)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a direct call): lint now
            self.publish(uri)
            return
        self._timers[uri] = loop.call_later(DEBOUNCE_SECONDS, self._lint_later, uri)

    def _lint_later(self, uri: str) -> None:
        """Start the lint of the document's current version on the worker thread."""
        self._timers.pop(uri, None)
        if uri not in self.server.workspace.text_documents or not self._is_python(uri):
            return  # closed meanwhile
        document = self.server.workspace.get_text_document(uri)
        version: Optional[int] = document.version
        # In the session's context: what it runs with (the rule set of
        # ``catalog.rules_replaced``) is a context variable, which a pool's
        # thread does not inherit by itself.
        job: "Future[Union[_Linted, str]]" = self._worker.submit(
            contextvars.copy_context().run, self._lint_text, uri, document.source, version)
        loop = asyncio.get_running_loop()
        job.add_done_callback(lambda done: loop.call_soon_threadsafe(self._finish, uri, version, done))

    def _finish(self, uri: str, version: Optional[int], job: "Future[Union[_Linted, str]]") -> None:
        """Publish a finished lint, unless a newer version superseded it (its
        own lint is scheduled) or the document was closed."""
        if uri not in self.server.workspace.text_documents:
            return
        if self.server.workspace.get_text_document(uri).version != version or uri in self._timers:
            return
        self._publish_linted(uri, self._shown(uri, job.result()))

    def publish_all(self) -> None:
        """Lint every open document again (after a configuration change)."""
        for uri in list(self.server.workspace.text_documents):
            self.publish(uri)

    # -- handlers ---------------------------------------------------------

    def did_open(self, params: lsp.DidOpenTextDocumentParams) -> None:
        """Lint a document when it opens."""
        self.publish(params.text_document.uri)

    def did_change(self, params: lsp.DidChangeTextDocumentParams) -> None:
        """Lint a document once typing pauses; a newer change supersedes a pending or running lint."""
        self.schedule(params.text_document.uri)

    def did_save(self, params: lsp.DidSaveTextDocumentParams) -> None:
        """Lint a saved document; a saved configuration file re-lints all."""
        uri = params.text_document.uri
        if uri.rsplit("/", 1)[-1] in CONFIG_FILENAMES:
            self.publish_all()
        else:
            self.publish(uri)

    def did_close(self, params: lsp.DidCloseTextDocumentParams) -> None:
        """Clear a closed document's findings."""
        self._cancel_timer(params.text_document.uri)
        self._shown_errors.pop(params.text_document.uri, None)
        self._publish(params.text_document.uri, [], None)

    def did_change_watched_files(self, params: lsp.DidChangeWatchedFilesParams) -> None:
        """Re-lint open documents when a watched configuration file changes."""
        if any(change.uri.rsplit("/", 1)[-1] in CONFIG_FILENAMES for change in params.changes):
            self.publish_all()

    def code_action(self, params: lsp.CodeActionParams) -> Optional[List[lsp.CodeAction]]:
        """Quick fixes for the findings in the range, and "fix all safe"."""
        uri = params.text_document.uri
        linted = self.lint(uri)
        if linted is None or linted.config is None:
            return None
        only = params.context.only
        want_quick = only is None or any(_covers(k, "quickfix") for k in only)
        want_all = only is None or any(_covers(k, FIX_ALL_KIND) for k in only)
        positions = Positions(linted.text, self._encoding())
        actions: List[lsp.CodeAction] = []
        if want_quick:
            first = positions.offset(params.range.start)
            last = positions.offset(params.range.end)
            suppressions: List[lsp.CodeAction] = []
            for diagnostic in linted.diagnostics:
                start = positions.from_engine(diagnostic.start.line, diagnostic.start.column)
                end = positions.from_engine(diagnostic.end.line, diagnostic.end.column)
                if start > last or end < first:
                    continue
                if diagnostic.fix is not None:
                    actions.append(self._quick_fix(linted, diagnostic, positions))
                suppression = self._suppression(linted, diagnostic, positions)
                if suppression is not None:
                    suppressions.append(suppression)
            actions.extend(suppressions)  # after the fixes: a fix is the better answer
        if want_all:
            fix_all = self._fix_all(linted, positions)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    def _workspace_edit(self, linted: _Linted, edits: List[lsp.TextEdit]) -> lsp.WorkspaceEdit:
        if self._document_changes():
            identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=linted.uri, version=linted.version)
            return lsp.WorkspaceEdit(
                document_changes=[lsp.TextDocumentEdit(text_document=identifier, edits=list(edits))]
            )
        return lsp.WorkspaceEdit(changes={linted.uri: edits})

    def _quick_fix(self, linted: _Linted, diagnostic: Diagnostic, positions: Positions) -> lsp.CodeAction:
        assert diagnostic.fix is not None
        safe = diagnostic.fix.applicability is Applicability.SAFE
        title = f"torchlint ({diagnostic.code}): {diagnostic.fix.description}"
        if not safe:
            title += " (unsafe fix)"
        return lsp.CodeAction(
            title=title,
            kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[to_lsp_diagnostic(diagnostic, positions)],
            is_preferred=safe,
            edit=self._workspace_edit(linted, _text_edits(diagnostic.fix.edits, positions)),
        )

    def _suppression(self, linted: _Linted, diagnostic: Diagnostic, positions: Positions) -> Optional[lsp.CodeAction]:
        """"Suppress CODE on this line": the ``# noqa: CODE`` that
        ``torchlint check --add-noqa`` would write for this finding."""
        from torchlint.lint.add_noqa import python_edits
        from torchlint.ruleapi.registry import PARSE_ERROR_CODE

        if diagnostic.code == PARSE_ERROR_CODE:
            return None
        edits, skipped = python_edits(linted.text, [diagnostic])
        if skipped or not edits:
            return None
        return lsp.CodeAction(
            title=f"torchlint ({diagnostic.code}): Suppress on this line (# noqa: {diagnostic.code})",
            kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[to_lsp_diagnostic(diagnostic, positions)],
            is_preferred=False,
            edit=self._workspace_edit(linted, _text_edits(edits, positions)),
        )

    def hover(self, params: lsp.HoverParams) -> Optional[lsp.Hover]:
        """The summary of the rule of each finding under the cursor."""
        uri = params.text_document.uri
        linted = self.lint(uri)
        if linted is None:
            return None
        positions = Positions(linted.text, self._encoding())
        at = positions.offset(params.position)
        texts: List[str] = []
        covered: List[Tuple[int, int]] = []
        for diagnostic in linted.diagnostics:
            start = positions.from_engine(diagnostic.start.line, diagnostic.start.column)
            end = positions.from_engine(diagnostic.end.line, diagnostic.end.column)
            text = hover_text(diagnostic) if start <= at <= max(start, end) else None
            if text is not None and text not in texts:
                texts.append(text)
                covered.append((start, max(start, end)))
        if not texts:
            return None
        low, high = min(c[0] for c in covered), max(c[1] for c in covered)
        return lsp.Hover(
            contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n\n---\n\n".join(texts)),
            range=positions.range(low, high),
        )

    def _fix_all(self, linted: _Linted, positions: Positions) -> Optional[lsp.CodeAction]:
        from torchlint.lint.fixer import fix_text

        if linted.config is None or not any(d.fixable(unsafe=False) for d in linted.diagnostics):
            return None
        fixed = fix_text(linted.text, linted.path, linted.config, unsafe=False).source
        if fixed == linted.text:
            return None
        edit = _trimmed(linted.text, fixed)
        return lsp.CodeAction(
            title="torchlint: Apply all safe fixes",
            kind=FIX_ALL_KIND,
            diagnostics=[to_lsp_diagnostic(d, positions) for d in linted.diagnostics if d.fixable(unsafe=False)],
            edit=self._workspace_edit(linted, _text_edits([edit], positions)),
        )


def create_server() -> Any:
    """A pygls ``LanguageServer`` with torchlint's handlers registered."""
    return TorchlintServer().server


def main() -> None:
    """Serve the Language Server Protocol on stdin/stdout until told to exit."""
    create_server().start_io()
