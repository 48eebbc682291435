"""Markdown for the chat: source text to the HTML subset Qt's text engine draws, and a pane that
renders an answer while it streams.

Rendering is markdown-it-py (CommonMark + GFM tables and strikethrough, raw HTML escaped, so an
answer cannot inject markup) to HTML, with code blocks drawn as a shaded box whose header names
the language and carries a "Copy" link, their code coloured by Pygments (ui/highlight.py).

Streaming without stalling the window (`MarkdownStream`): each chunk is appended to the live
pane as plain text at once (its cost is its own length), and a timer the chat view runs every
~40 ms renders the live pane's Markdown again. Only the *live* part is ever re-rendered: once
it holds more than `FREEZE_CHARS` and ends at a safe block boundary (a blank line outside a code
fence, not followed by a list item or an indented line), that part is frozen in its own pane
and never touched again. So a render costs at most a few thousand characters however long the
answer grows. A short answer is merged back into one pane when it ends, so it can be selected
as a whole.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QFontDatabase,
    QGuiApplication,
    QPalette,
    QTextCursor,
)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QVBoxLayout, QWidget

from vak_desktop.ui.highlight import highlighted

# Measured with bench/ui_stream.py: a render costs ~2 ms per 1,000 characters of Markdown
# (parse + setHtml + layout), so the live part is frozen past 400 characters and the merge
# at the end of an answer (one render of the whole) stays under ~4,000.
FREEZE_CHARS = 400  # the live pane is frozen at the next safe boundary past this size
MERGE_CHARS = 4000  # an answer up to this size becomes one pane again when it ends
COPY_SCHEME = "copy"

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_LIST_OR_INDENT = re.compile(r"^(\s|[-*+] |\d{1,9}[.)] )")


def blend(a: QColor, b: QColor, amount: float) -> QColor:
    """`a` moved `amount` (0…1) of the way to `b`."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * amount),
        round(a.green() + (b.green() - a.green()) * amount),
        round(a.blue() + (b.blue() - a.blue()) * amount),
    )


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


class _Renderer(RendererHTML):
    """markdown-it's HTML renderer with code blocks Qt can draw as a box with a header."""

    def fence(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        language = token.info.strip().split(" ")[0] if token.info else ""
        return _code_box(token.content, language, env)

    def code_block(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return _code_box(tokens[idx].content, "", env)


def _code_box(code: str, language: str, env: EnvType) -> str:
    codes: list[str] = env["codes"]
    colors: dict[str, str] = env["colors"]
    codes.append(code.rstrip("\n"))
    label = html.escape(language) if language else "code"
    return (
        f'<table width="100%" cellspacing="0" cellpadding="8" border="0"'
        f' style="margin-top:6px; margin-bottom:8px;" bgcolor="{colors["code"]}">'
        f'<tr><td style="color:{colors["subtle"]}; border-bottom: 1px solid {colors["rule"]};">'
        f'<span style="font-size:small;">{label}</span></td>'
        f'<td align="right" style="border-bottom: 1px solid {colors["rule"]};">'
        f'<a href="{COPY_SCHEME}:{len(codes) - 1}" style="font-size:small;'
        f' text-decoration:none; color:{colors["link"]};">Copy</a></td></tr>'
        f'<tr><td colspan="2"><pre style="font-family:\'{colors["mono"]}\', monospace;">'
        f"{highlighted(code.rstrip(chr(10)), language, colors['dark'] == '1')}"
        "</pre></td></tr></table>"
    )


_PARSER = MarkdownIt("commonmark", {"html": False, "typographer": False}, renderer_cls=_Renderer)
_PARSER.enable(["table", "strikethrough"])


def palette_colors(palette: QPalette) -> dict[str, str]:
    """The few colours the rendered HTML needs, taken from the palette (light or dark)."""
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    return {
        "code": blend(base, text, 0.06).name(),
        "inline": blend(base, text, 0.09).name(),
        "rule": blend(base, text, 0.18).name(),
        "subtle": blend(base, text, 0.55).name(),
        "link": palette.color(QPalette.ColorRole.Link).name(),
        "head": blend(base, text, 0.04).name(),
        "mono": QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family(),
        "dark": "1" if is_dark(palette) else "",  # the code blocks' Pygments style
    }


def markdown_html(source: str, colors: dict[str, str], codes: list[str]) -> str:
    """`source` as HTML for a QTextDocument; the text of every code block goes into `codes`."""
    env: EnvType = {"codes": codes, "colors": colors}
    body: str = _PARSER.render(source.rstrip().lstrip("\n"), env).strip()
    body = body.replace("<code>", f'<code style="background-color:{colors["inline"]};">')
    body = body.replace(
        "<table>",
        f'<table cellspacing="0" cellpadding="6" border="1"'
        f' style="border-color:{colors["rule"]}; border-style:solid; margin-top:4px;'
        f' margin-bottom:8px;">',
    )
    body = body.replace("<th>", f'<th bgcolor="{colors["head"]}" align="left">')
    body = body.replace(
        '<th style="text-align:', f'<th bgcolor="{colors["head"]}" style="text-align:'
    )
    return body


def safe_boundary(text: str) -> int:
    """The offset just past the last blank line of `text` at which a new top-level block
    starts outside any code fence; 0 if there is none. Text before it renders the same on its
    own as it does followed by the rest."""
    best = 0
    in_fence = False
    offset = 0
    blank_before = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if (
            blank_before
            and not in_fence
            and stripped
            and not _LIST_OR_INDENT.match(line)
            and line.endswith("\n")
        ):
            best = offset
        if _FENCE.match(line):
            in_fence = not in_fence
        blank_before = not stripped and not in_fence
        offset += len(line)
    return best


class MarkdownPane(QTextBrowser):
    """A read-only, borderless text pane as tall as its content: one piece of a message."""

    heightChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("markdownPane")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setOpenLinks(False)
        self.setUndoRedoEnabled(False)
        self.setVerticalScrollBarPolicy(self.verticalScrollBarPolicy().ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(self.horizontalScrollBarPolicy().ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        # Opaque, in the answer bubble's own colour (the palette's Base): a chunk then repaints
        # only this pane, not the bubble and the column behind it.
        self.document().setDocumentMargin(0)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.anchorClicked.connect(self._open)
        self.source_text = ""  # the Markdown this pane shows
        self.codes: list[str] = []
        # While streaming, the height follows the text once per render tick, not per chunk:
        # each height change lays out the whole transcript column again.
        self.streaming = False
        self.setFixedHeight(4)

    def show_markdown(self, source: str) -> None:
        self.source_text = source
        self.codes = []
        colors = palette_colors(self.palette())
        self.setHtml(markdown_html(source, colors, self.codes))

    def append_plain(self, chunk: str) -> None:
        """Show `chunk` at the end at once, unformatted (the next render formats it)."""
        self.source_text += chunk
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(chunk)

    def copy_code(self, index: int) -> None:
        clipboard = QGuiApplication.clipboard()
        if 0 <= index < len(self.codes) and clipboard is not None:
            clipboard.setText(self.codes[index])

    def _open(self, url: QUrl) -> None:
        if url.scheme() == COPY_SCHEME:
            self.copy_code(int(url.path() or -1))
        elif url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)

    def _fit(self, *_: object) -> None:
        if not self.streaming:
            self.fit()

    def fit(self) -> None:
        """Make the pane exactly as tall as its text."""
        height = int(self.document().documentLayout().documentSize().height() + 0.999) + 2
        if height != self.height():
            self.setFixedHeight(height)
            self.heightChanged.emit()

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self.fit()


class MarkdownStream(QWidget):
    """One stretch of an answer's Markdown: frozen panes, then the live one."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)
        self._frozen: list[MarkdownPane] = []
        self._live = self._new_pane()
        self._dirty = False
        self.on_render: Callable[[], None] | None = None

    @property
    def source(self) -> str:
        return "".join(p.source_text for p in self._frozen) + self._live.source_text

    @property
    def panes(self) -> list[MarkdownPane]:
        return [*self._frozen, self._live]

    def set_source(self, source: str) -> None:
        """Show finished Markdown in one pane."""
        self._live.show_markdown(source)
        self._dirty = False

    def append(self, chunk: str) -> None:
        self._live.streaming = True
        self._live.append_plain(chunk)
        self._dirty = True

    def render_pending(self) -> None:
        """Render the live pane's Markdown again, freezing the part that can no longer change."""
        if not self._dirty:
            return
        self._dirty = False
        source = self._live.source_text
        cut = safe_boundary(source) if len(source) > FREEZE_CHARS else 0
        if cut:
            frozen = self._live
            frozen.show_markdown(source[:cut])
            frozen.streaming = False
            frozen.fit()
            self._frozen.append(frozen)
            self._live = self._new_pane()
            self._live.streaming = True
            self._live.source_text = source[cut:]
        self._live.show_markdown(self._live.source_text)
        self._live.fit()

    def finish(self) -> None:
        """The stretch is complete: render what is left; a short answer becomes one pane."""
        if self._frozen and len(self.source) <= MERGE_CHARS:
            source = self.source
            for pane in self._frozen:
                pane.deleteLater()
            self._frozen = []
            self._live.show_markdown(source)
            self._dirty = False
        else:
            self._dirty = True
            self.render_pending()
        self._live.streaming = False
        self._live.fit()

    def plain_text(self) -> str:
        return "\n".join(p.toPlainText() for p in self.panes if p.toPlainText())

    def _new_pane(self) -> MarkdownPane:
        pane = MarkdownPane(self)
        self._layout.addWidget(pane)
        return pane
