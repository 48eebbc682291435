"""A code block that streams: coloured a few lines at a time, never rendered again as a whole.

Why it exists: a Markdown pane renders its whole text on every render tick. That is cheap for
prose (the stream freezes it in small pieces), but a code block cannot be cut: while a model
writes a 10,000-character file, every tick would parse, colour and lay out the whole block
again (measured with `bench/ui_stream.py --shape code`: 29 ms of the UI thread per tick at
12,000 characters, and growing). So once an answer opens a top-level fence, the block gets this
pane: the box is drawn once, each tick lexes only the lines completed since the last one and
inserts them with their colours (`QTextCharFormat`s from the Pygments style, no HTML), and the
unfinished last line is shown plain until it is complete. The box is blocks of the document's
root frame (a header, then the code), not the table a rendered block is: Qt lays out a whole
table again when one of its cells changes (measured: 114 ms of the UI thread per tick at
12,000 characters), a root-frame block on its own.

Lines lexed in batches start from the lexer's first state, so a construct spanning two ticks (a
docstring, a block comment) may be coloured wrongly while it streams. When the block ends, one
correction pass lexes the whole block again and re-applies every colour, a slice of at most
`SLICE_MS` per timer tick, so it never holds the window either.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QFont, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QWidget

from vak_desktop.ui.parts.highlight import token_style, tokens
from vak_desktop.ui.parts.markdown import COPY_SCHEME, MarkdownPane, palette_colors

SLICE_MS = 3.0  # the longest one slice of the correction pass holds the window
OPENING = re.compile(r"^(`{3,}|~{3,})([^`]*)$")  # a top-level fence (no indent) and its info


def opening_fence(line: str) -> tuple[str, str] | None:
    """The fence and the language of `line` if it opens a top-level code block."""
    match = OPENING.match(line.rstrip("\n"))
    if match is None:
        return None
    info = match.group(2).strip()
    return match.group(1), info.split(" ")[0] if info else ""


class CodePane(MarkdownPane):
    """One fenced code block, fed its text as it streams (`append_plain`, then `render`)."""

    def __init__(self, opening_line: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        fence = opening_fence(opening_line)
        assert fence is not None, opening_line
        self._fence, self.language = fence
        self._opening = opening_line
        self.source_text = opening_line
        self.closed = False  # the closing fence has streamed
        self._scanned = 0  # how far into the code complete lines were looked at for the fence
        self._dark = palette_colors(self.palette())["dark"] == "1"
        self._formats: dict[Any, QTextCharFormat] = {}
        self._correcting: Iterator[tuple[Any, str]] | None = None
        self._corrected = 0  # characters of the block the correction pass has re-coloured
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._correct_slice)
        self._draw_box()

    def restyle(self) -> None:
        """The box and the code's colours again, in the palette now in force: the code drawn
        so far is put back and coloured as it was (the block closed or still streaming)."""
        source, closed = self.source_text, self.closed
        self.setPalette(QPalette())  # inherit the new palette; `_draw_box` shades it again
        self._dark = palette_colors(self.palette())["dark"] == "1"
        self._formats = {}
        self._correcting = None
        self._timer.stop()
        self.closed, self._scanned = False, 0
        self.source_text = self._opening
        self._draw_box()
        self.append_plain(source[len(self._opening) :])
        self.colour(final=closed)
        self.fit()

    def _draw_box(self) -> None:
        """The box is the pane itself (its viewport shaded, the margins around it in the
        bubble's colour): a header line (language, Copy link), then the code's unwrapped lines.
        Blocks of the document's root frame, not a table's cell: Qt lays out a changed table
        whole, and a root-frame block alone."""
        colors = palette_colors(self.palette())
        palette = QPalette(self.palette())
        palette.setColor(QPalette.ColorRole.Window, palette.color(QPalette.ColorRole.Base))
        palette.setColor(QPalette.ColorRole.Base, QColor(colors["code"]))
        self.setPalette(palette)
        self.viewport().setPalette(palette)  # it does not follow a second setPalette by itself
        self.setAutoFillBackground(True)
        self.setViewportMargins(0, 6, 0, 8)  # the rendered box's margins
        self.document().setDocumentMargin(8)  # ... and its padding
        label = html.escape(self.language or "code")
        self.setHtml(
            f'<p style="margin-top:0px; margin-bottom:6px; color:{colors["subtle"]};">'
            f'<span style="font-size:small;">{label}&nbsp;&nbsp;<a href="{COPY_SCHEME}:0"'
            f' style="text-decoration:none; color:{colors["link"]};">Copy</a></span></p>'
            f"<pre style=\"margin-top:0px; margin-bottom:0px; font-family:'{colors['mono']}',"
            ' monospace;">x</pre>'
        )
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.movePosition(
            QTextCursor.MoveOperation.PreviousCharacter, QTextCursor.MoveMode.KeepAnchor
        )
        self._plain = QTextCharFormat(cursor.charFormat())
        self._start = cursor.selectionStart()  # where the code begins
        cursor.removeSelectedText()
        self._shown = 0  # characters of the code drawn with their colours (the rest plain)
        self.codes = [""]

    def _end(self) -> int:
        return self.document().characterCount() - 1

    def append_plain(self, chunk: str) -> None:
        """Show `chunk` at the end of the code at once, uncoloured (the next render colours it)."""
        self.source_text += chunk
        if not self.closed:
            cursor = QTextCursor(self.document())
            cursor.setPosition(self._end())
            cursor.insertText(chunk, self._plain)

    def _closing(self, body: str) -> tuple[int, int]:
        """Where the closing fence line starts and ends in `body`, or (-1, -1). Lines already
        looked at are not looked at again (a long block is scanned once, not every tick)."""
        offset = self._scanned
        for line in body[offset:].splitlines(keepends=True):
            if not line.endswith("\n"):
                break  # still streaming
            stripped = line.strip()
            indent = len(line) - len(line.lstrip(" "))
            fence_only = stripped.startswith(self._fence) and not stripped.strip(self._fence[0])
            if fence_only and indent <= 3:
                return offset, offset + len(line)
            offset += len(line)
            self._scanned = offset
        return -1, -1

    def colour(self, final: bool = False) -> str:
        """Colour the lines completed since the last render. Returns the text that streamed
        after the closing fence (for the next pane); `final`: the answer ended here."""
        if self.closed:
            return ""
        body = self.source_text[len(self._opening) :]
        start, end = self._closing(body)
        rest = ""
        if start >= 0:
            self.closed = True
            rest, body = body[end:], body[:start]
            self.source_text = self._opening + self.source_text[len(self._opening) :][:end]
        done = self.closed or final
        code = body.rstrip("\n") if done else body
        complete = code if done else code[: max(0, code.rfind("\n"))]
        cursor = QTextCursor(self.document())
        cursor.setPosition(self._start + self._shown)
        cursor.setPosition(self._end(), QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        new = complete[self._shown :]
        pieces = tokens(new, self.language)
        for token_type, text in pieces if pieces is not None else [(None, new)]:
            cursor.insertText(text, self._format(token_type))
        self._shown = len(complete)
        if not done:
            cursor.insertText(code[len(complete) :], self._plain)
        self.codes = [code]
        if done:
            self._correcting = tokens(code, self.language)
            self._corrected = 0
            if self._correcting is not None:
                self._timer.start()
        return rest

    @property
    def correcting(self) -> bool:
        """The correction pass has not finished."""
        return self._correcting is not None

    def _correct_slice(self) -> None:
        if self._correcting is None:
            return
        started = time.perf_counter()
        cursor = QTextCursor(self.document())
        for token_type, text in self._correcting:
            if self._corrected + len(text) > self._shown:
                break  # the lexer's text is not the block's (it never should be): stop here
            position = self._start + self._corrected
            cursor.setPosition(position)
            cursor.setPosition(position + len(text), QTextCursor.MoveMode.KeepAnchor)
            cursor.setCharFormat(self._format(token_type))
            self._corrected += len(text)
            if (time.perf_counter() - started) * 1000 > SLICE_MS:
                self._timer.start()
                return
        self._correcting = None

    def _format(self, token_type: Any) -> QTextCharFormat:
        known = self._formats.get(token_type)
        if known is not None:
            return known
        made = QTextCharFormat(self._plain)
        if token_type is not None:
            color, bold, italic = token_style(token_type, self._dark)
            if color:
                made.setForeground(QColor(color))
            if bold:
                made.setFontWeight(QFont.Weight.Bold)
            made.setFontItalic(italic)
        self._formats[token_type] = made
        return made
