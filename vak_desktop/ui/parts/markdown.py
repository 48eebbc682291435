"""Markdown for the chat: source text to the HTML subset Qt's text engine draws, and the pane
that shows a piece of it.

Rendering is markdown-it-py (CommonMark + GFM tables and strikethrough, raw HTML escaped, so an
answer cannot inject markup) to HTML, with code blocks drawn as a shaded box whose header names
the language and carries a "Copy" link, their code coloured by Pygments (ui/parts/highlight.py). How a
streaming answer is split into panes so that it never stalls the window is
`ui/chat/markdown_stream.py`'s.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

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
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

from vak_desktop.ui.parts.highlight import highlighted
from vak_desktop.ui.parts.theme import on_theme

COPY_SCHEME = "copy"


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


class MarkdownPane(QTextBrowser):
    """A read-only, borderless text pane as tall as its content: one piece of a message."""

    heightChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("markdownPane")
        self.setAccessibleName("Message text")
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
        self._rendered = False  # shown as Markdown (not only plain text appended)
        on_theme(self, lambda pane: pane.restyle())

    def restyle(self) -> None:
        """Draw the pane again in the palette now in force (after a theme switch)."""
        if self._rendered:
            self.show_markdown(self.source_text)

    def show_markdown(self, source: str) -> None:
        self.source_text = source
        self.codes = []
        self._rendered = True
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
        margins = self.viewportMargins()
        text_height = self.document().documentLayout().documentSize().height()
        height = int(text_height + 0.999) + 2 + margins.top() + margins.bottom()
        if height != self.height():
            self.setFixedHeight(height)
            self.heightChanged.emit()

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self.fit()
