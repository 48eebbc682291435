"""The pieces of the transcript: a user message, an assistant message and what goes inside one
(Markdown, collapsed thinking, collapsed tool calls, the receipt line, the cards).

They only show what they are given and report clicks through plain callbacks; the chat view
decides what a click does (through the chat service).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QPalette, QPixmap
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.context.payloads import Receipt, Usage
from vak_desktop.ui.chat.failure_words import plain_failure
from vak_desktop.ui.chat.markdown_stream import MarkdownStream
from vak_desktop.ui.parts import theme
from vak_desktop.ui.parts.markdown import blend
from vak_desktop.ui.parts.message_sections import ThinkingSection, ToolSection, small_button, subtle

# the colour by its name in `theme`, read when drawn: the palette in force then, not at import
_MARKERS = {
    "cancelled": ("■ Stopped", "WARNING", "the text above is what had arrived"),
    "interrupted": (
        "⚠ Interrupted",
        "WARNING",
        "the app stopped while this answer was being written",
    ),
    "failed": ("✕ Failed", "DANGER", ""),  # the error says why
    "degraded": ("⚠ Incomplete", "WARNING", ""),
}


def receipt_text(receipts: list[Receipt], usage: Usage | None = None) -> str:
    """Tokens and speeds of one answer, from its receipts (or the bare usage when there are
    none yet): `1,204 in context · 310 output tokens · prefill 850 tok/s · 41.2 tok/s`.

    "in context" is the turn's last request as the provider counted it — the number the
    status bar's gauge shows for the same turn. A turn of several steps (tool calls) sent one
    request a step, each carrying the one before: their sum is said after it, labelled."""
    if receipts:
        usage = Usage()
        for receipt in receipts:
            usage = usage.plus(receipt.usage)
    usage = usage or Usage()
    prompt, output = usage.prompt_tokens(), usage.output_tokens
    if not prompt and not output:
        return ""
    last = receipts[-1].usage.prompt_tokens() if receipts else prompt
    parts = [f"{last:,} in context"]
    if len(receipts) > 1:
        parts[0] += f" ({prompt:,} over {len(receipts)} requests)"
    parts.append(f"{output:,} output tokens")
    prefill_ns = sum(r.timings.prompt_eval_ns for r in receipts)
    eval_ns = sum(r.timings.eval_ns for r in receipts)
    evaluated = sum(r.usage.input_tokens for r in receipts)
    if prefill_ns > 0 and evaluated:
        parts.append(f"prefill {evaluated / (prefill_ns / 1e9):,.0f} tok/s")
    if eval_ns > 0 and output:
        parts.append(f"{output / (eval_ns / 1e9):,.1f} tok/s")
    wall_ns = sum(r.timings.wall_ns or r.timings.total_ns for r in receipts)
    if wall_ns > 0:
        parts.append(f"{wall_ns / 1e9:,.1f} s")
    return " · ".join(parts)


class BranchSwitcher(QWidget):
    """‹ 2/3 › between the alternatives of one turn (its edits and regenerations)."""

    def __init__(self, position: int, count: int, on_step: Callable[[int], object]) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.previous = small_button("‹", "Previous version of this message", "branchPrevious")
        self.label = QLabel(f"{position}/{count}")
        self.label.setObjectName("branchPosition")
        self.label.setAccessibleName(f"version {position} of {count}")
        self.next = small_button("›", "Next version of this message", "branchNext")
        self.previous.setEnabled(position > 1)
        self.next.setEnabled(position < count)
        self.previous.clicked.connect(lambda: on_step(-1))
        self.next.clicked.connect(lambda: on_step(1))
        for widget in (self.previous, self.label, self.next):
            layout.addWidget(widget)


class Bubble(QFrame):
    """A message's rounded box; its colours come from the palette so both themes work."""

    def __init__(self, name: str, tint: float, accent: bool) -> None:
        super().__init__()
        self.setObjectName(name)

        def style(palette: QPalette) -> str:
            base = palette.color(QPalette.ColorRole.Base)
            role = QPalette.ColorRole.Highlight if accent else QPalette.ColorRole.Text
            fill = blend(base, palette.color(role), tint)
            border = blend(base, palette.color(role), tint + 0.12)
            return (
                f"QFrame#{name} {{ background: {fill.name()}; border: 1px solid {border.name()};"
                f" border-radius: 10px; }}"
            )

        theme.follow_theme(self, style)
        # The transcript column is as wide as the view, never wider: a long unbroken line (a
        # receipt, a tool call) must not push the bubble past the right edge when the view is
        # narrow (the inspector open). Its labels wrap instead.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(14, 10, 14, 10)
        self.column.setSpacing(4)
        self.header = QHBoxLayout()
        self.header.setSpacing(4)
        self.column.addLayout(self.header)

    def label(self, text: str) -> QLabel:
        label = QLabel(text)
        label.setObjectName("messageAuthor")
        theme.follow_theme(label, lambda p: f"color: {subtle(p)}; font-weight: bold;")
        return label


class UserMessage(Bubble):
    """What the user asked, with Edit and, when there are several, the version switcher."""

    def __init__(
        self,
        text: str,
        images: tuple[str, ...] = (),
        on_edit: Callable[[str], object] | None = None,
        switcher: BranchSwitcher | None = None,
    ) -> None:
        super().__init__("userMessage", 0.10, accent=True)
        self.setAccessibleName("Your message")
        self.text = text
        self._on_edit = on_edit
        self.header.addWidget(self.label("You"))
        self.header.addStretch(1)
        if switcher is not None:
            self.header.addWidget(switcher)
        self.edit_button: QToolButton | None = None
        if on_edit is not None:
            self.edit_button = small_button("✎ Edit", "Edit and resend this message", "editButton")
            self.edit_button.clicked.connect(self.start_edit)
            self.header.addWidget(self.edit_button)
        self.body = QLabel(text)
        self.body.setObjectName("userText")
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.column.addWidget(self.body)
        if images:
            row = QHBoxLayout()
            for image in images:
                row.addWidget(_thumbnail(image))
            row.addStretch(1)
            self.column.addLayout(row)
        self.editor: QPlainTextEdit | None = None
        self._edit_row: QWidget | None = None

    def start_edit(self) -> None:
        """Swap the text for an editor with Send and Cancel."""
        if self.editor is not None:
            return
        self.editor = QPlainTextEdit(self.text)
        self.editor.setObjectName("editDirective")
        self.editor.setAccessibleName("Edit message")
        self.editor.setFixedHeight(max(80, min(220, self.body.sizeHint().height() + 40)))
        row = QWidget()
        buttons = QHBoxLayout(row)
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addStretch(1)
        cancel = QPushButton("Cancel")
        cancel.setObjectName("cancelEdit")
        send = QPushButton("Send as new version")
        send.setObjectName("sendEdit")
        buttons.addWidget(cancel)
        buttons.addWidget(send)
        cancel.clicked.connect(self.cancel_edit)
        send.clicked.connect(self._send_edit)
        self.body.setVisible(False)
        self.column.addWidget(self.editor)
        self.column.addWidget(row)
        self._edit_row = row
        self.editor.setFocus()

    def cancel_edit(self) -> None:
        for widget in (self.editor, self._edit_row):
            if widget is not None:
                widget.deleteLater()
        self.editor, self._edit_row = None, None
        self.body.setVisible(True)

    def _send_edit(self) -> None:
        if self.editor is not None and self._on_edit is not None:
            text = self.editor.toPlainText().strip()
            if text:
                self._on_edit(text)

    def plain_text(self) -> str:
        return f"You\n{self.text}"


def _thumbnail(image: str) -> QLabel:
    label = QLabel()
    label.setObjectName("imageThumbnail")
    pixmap = QPixmap()
    if pixmap.loadFromData(QByteArray(base64.b64decode(image, validate=False))):
        label.setPixmap(
            pixmap.scaled(
                160,
                120,
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        )
        label.setAccessibleName("attached image")
    else:
        label.setText("[an image that cannot be shown]")
    return label


class AssistantMessage(Bubble):
    """The answer: its pieces in the order they arrived, then how it ended and what it cost."""

    def __init__(self, model: str) -> None:
        super().__init__("assistantMessage", 0.0, accent=False)
        self.setAccessibleName(f"Answer from {model or 'the model'}")
        self.header.addWidget(self.label(model or "Assistant"))
        self.header.addStretch(1)
        self.body = QVBoxLayout()
        self.body.setSpacing(4)
        self.column.addLayout(self.body)
        self.cards = QVBoxLayout()
        self.cards.setSpacing(8)
        self.cards.setContentsMargins(0, 6, 0, 0)
        self.column.addLayout(self.cards)
        self.footer = QHBoxLayout()
        self.footer.setSpacing(6)
        self.status = QLabel()
        self.status.setObjectName("answerStatus")
        self.status.setWordWrap(True)
        self.status.setVisible(False)
        self._status_colour = "WARNING"  # a name in `theme`: the outcome's colour
        theme.follow_theme(
            self.status,
            lambda _: f"color: {getattr(theme, self._status_colour)}; font-weight: bold;",
        )
        self.notice = QLabel()  # what the answer's end needs said: it stopped at a limit …
        self.notice.setObjectName("answerNotice")
        self.notice.setAccessibleName("About this answer")
        self.notice.setWordWrap(True)
        theme.follow_theme(self.notice, lambda _: f"color: {theme.WARNING};")
        self.notice.setVisible(False)
        self.stats = QLabel()
        self.stats.setWordWrap(True)
        self.stats.setObjectName("receiptLine")
        theme.follow_theme(self.stats, lambda p: f"color: {subtle(p)}; font-size: small;")
        self.footer.addWidget(self.stats, 1)
        self.column.addWidget(self.status)
        self.column.addWidget(self.notice)
        self.column.addLayout(self.footer)
        self.sections: list[QWidget] = []
        self._markdown: MarkdownStream | None = None
        self._thinking: ThinkingSection | None = None
        self.tools: dict[str, ToolSection] = {}

    # -- streaming --------------------------------------------------------------------------

    @property
    def live_markdown(self) -> MarkdownStream | None:
        return self._markdown

    def append_text(self, chunk: str) -> MarkdownStream:
        if self._markdown is None:
            self._close_thinking()
            self._markdown = MarkdownStream()
            self._add(self._markdown)
        self._markdown.append(chunk)
        return self._markdown

    def append_thinking(self, chunk: str) -> None:
        if self._thinking is None:
            self._close_markdown()
            self._thinking = ThinkingSection()
            self._add(self._thinking)
        self._thinking.append(chunk)

    def add_tool_call(self, call_id: str, name: str, arguments: dict[str, Any]) -> None:
        self._close_markdown()
        self._close_thinking()
        section = ToolSection(call_id, name, arguments)
        self.tools[call_id or f"#{len(self.tools)}"] = section
        self._add(section)

    def set_tool_result(
        self, call_id: str, name: str, chars: int, is_error: bool, evidence: str, preview: str
    ) -> None:
        section = self.tools.get(call_id)
        if section is None:  # a result whose call we never saw: show it on its own
            self.add_tool_call(call_id, name, {})
            section = self.tools[call_id or f"#{len(self.tools) - 1}"]
        section.set_result(chars, is_error, evidence, preview)

    def add_markdown(self, source: str) -> None:
        """A finished stretch of Markdown (a loaded answer)."""
        self._close_markdown()
        self._close_thinking()
        stream = MarkdownStream()
        stream.set_source(source)
        self._add(stream)

    def add_thinking(self, text: str) -> None:
        self._close_markdown()
        self._close_thinking()
        section = ThinkingSection()
        section.append(text)
        section.finish()
        self._add(section)

    def finish(self) -> None:
        self._close_markdown()
        self._close_thinking()

    def set_outcome(self, outcome: str, error: str) -> None:
        marker = _MARKERS.get(outcome)
        if marker is None:
            self.status.setVisible(False)
            return
        title, color, why = marker
        detail = why or plain_failure(error)
        self.status.setText(f"{title} — {detail}" if detail else title)
        self.status.setToolTip(error if detail != error else "")
        self._status_colour = color
        self.status.setStyleSheet(f"color: {getattr(theme, color)}; font-weight: bold;")
        self.status.setVisible(True)

    def set_notice(self, message: str) -> None:
        """A line under the answer ('' hides it): e.g. that it stopped at the output limit."""
        self.notice.setText(f"⚠ {message[:1].upper()}{message[1:]}." if message else "")
        self.notice.setVisible(bool(message))

    def set_receipts(self, receipts: list[Receipt], usage: Usage | None = None) -> None:
        self.stats.setText(receipt_text(receipts, usage))

    def add_action(self, button: QToolButton) -> None:
        self.footer.addWidget(button)

    def plain_text(self) -> str:
        parts = []
        for section in self.sections:
            if isinstance(section, (MarkdownStream, ThinkingSection, ToolSection)):
                parts.append(section.plain_text())
        for label in (self.status, self.notice):
            if label.isVisibleTo(self) and label.text():
                parts.append(label.text())
        if self.stats.text():
            parts.append(self.stats.text())
        return "\n".join(p for p in parts if p)

    def _add(self, widget: QWidget) -> None:
        self.sections.append(widget)
        self.body.addWidget(widget)

    def _close_markdown(self) -> None:
        if self._markdown is not None:
            self._markdown.finish()
            self._markdown = None

    def _close_thinking(self) -> None:
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None
