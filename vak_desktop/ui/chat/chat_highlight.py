"""A search hit shown in the open chat: its turn brought into view, the query's words marked.

The session list opens a hit's chat on the version that holds it (`SessionBrowsing.open_turn`)
and asks the view to show it. The question's words are marked in its text and the answer's
panes carry them as extra selections (the text itself is unchanged, so Copy and Edit see the
words as written). The mark is dark text on yellow in both themes; it lasts until the chat is
drawn again. A mixin of `ChatView`, over its widgets.
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QLabel, QTextEdit, QWidget

from vak_desktop.ui.chat.message_widgets import AssistantMessage, UserMessage
from vak_desktop.ui.parts.markdown import MarkdownPane

HIT_BACKGROUND = "#fde047"
HIT_TEXT = "#111827"


def hit_words(query: str) -> list[str]:
    """The query's words worth marking (two letters or more), longest first, each once."""
    found = {w.lower() for w in re.findall(r"\w+", query) if len(w) > 1}
    return sorted(found, key=lambda w: (-len(w), w))


def _pattern(words: list[str]) -> re.Pattern[str] | None:
    if not words:
        return None
    return re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)


def mark_label(label: QLabel, text: str, words: list[str]) -> list[str]:
    """Show `text` in `label` with `words` marked; the fragments marked."""
    pattern = _pattern(words)
    if pattern is None:
        return []
    marked, out, at = [], [], 0
    for found in pattern.finditer(text):
        marked.append(found.group(0))
        out.append(html.escape(text[at : found.start()]))
        style = f"background-color: {HIT_BACKGROUND}; color: {HIT_TEXT};"
        out.append(f'<span style="{style}">{html.escape(found.group(0))}</span>')
        at = found.end()
    if not marked:
        return []
    out.append(html.escape(text[at:]))
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setText(f'<span style="white-space: pre-wrap;">{"".join(out)}</span>')
    return marked


def mark_pane(pane: QTextEdit, words: list[str]) -> list[str]:
    """Mark `words` in a rendered pane as extra selections; the fragments marked."""
    pattern = _pattern(words)
    if pattern is None:
        return []
    look = QTextCharFormat()
    look.setBackground(QBrush(QColor(HIT_BACKGROUND)))
    look.setForeground(QBrush(QColor(HIT_TEXT)))
    selections, marked = [], []
    text = pane.document().toPlainText()
    for found in pattern.finditer(text):
        cursor = QTextCursor(pane.document())
        cursor.setPosition(found.start())
        cursor.setPosition(found.end(), QTextCursor.MoveMode.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        selection.cursor = cursor
        selection.format = look
        selections.append(selection)
        marked.append(found.group(0))
    pane.setExtraSelections(selections)
    return marked


class ChatHighlight:
    """`show_hit` (a mixin of `ChatView`)."""

    _turns: dict[str, tuple[UserMessage | None, AssistantMessage | None]]
    _follow: bool

    hit_marks: tuple[str, ...] = ()  # what the last `show_hit` marked

    def ensureWidgetVisible(self, widget: QWidget, xmargin: int = 50, ymargin: int = 50) -> None:
        raise NotImplementedError  # QScrollArea's

    def show_hit(self, turn_id: str, query: str) -> list[str]:
        """Bring turn `turn_id` into view with the words of `query` marked in its question and
        its answer; returns the fragments marked (none when the turn is not shown)."""
        user, answer = self._turns.get(turn_id, (None, None))
        if user is None:
            return []
        words = hit_words(query)
        marked = mark_label(user.body, user.text, words)
        if answer is not None:
            for pane in answer.findChildren(MarkdownPane):
                marked += mark_pane(pane, words)
        self._follow = False  # stay on the hit, not at the end, while the layout settles
        QTimer.singleShot(0, lambda: self.ensureWidgetVisible(user, 0, 40))
        self.hit_marks = tuple(marked)
        return marked
