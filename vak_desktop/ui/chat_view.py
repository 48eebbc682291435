"""The transcript: user and assistant messages as framed blocks of one QTextDocument.

Streaming appends each chunk at a cursor kept inside the answer's frame, so a chunk costs its own
length, never a re-render of the document. When the answer ends, that one frame's content is
rendered again from what arrived, this time as Markdown. A loaded session is rendered from the
ledger's turns the same way, with a marker on any turn that did not complete.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
    QTextFrame,
    QTextFrameFormat,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from vak_desktop.context.payloads import Activity, AssistantStep, ToolResult, Usage
from vak_desktop.context.turns import TURN_CLOSED, Turn
from vak_desktop.ui import theme

TEXT, THINKING, TOOL = "text", "thinking", "tool"
Segment = tuple[str, str]  # (kind, text), in the order they arrived

_MARKERS = {
    "cancelled": ("■ Stopped", theme.WARNING, "the text above is what had arrived"),
    "interrupted": (
        "⚠ Interrupted",
        theme.WARNING,
        "the app stopped while this answer was being written",
    ),
    "failed": ("✕ Failed", theme.DANGER, ""),  # the error says why
    "degraded": ("⚠ Incomplete", theme.WARNING, ""),
}


def _frame_format(background: str, border: str, left: int, right: int) -> QTextFrameFormat:
    fmt = QTextFrameFormat()
    fmt.setBackground(QColor(background))
    fmt.setBorder(1)
    fmt.setBorderBrush(QColor(border))
    fmt.setBorderStyle(QTextFrameFormat.BorderStyle.BorderStyle_Solid)
    fmt.setPadding(12)
    fmt.setLeftMargin(left)
    fmt.setRightMargin(right)
    fmt.setTopMargin(4)
    fmt.setBottomMargin(4)
    return fmt


def _char_format(
    color: str = theme.TEXT, *, bold: bool = False, italic: bool = False, scale: float = 1.0
) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    fmt.setFontItalic(italic)
    if scale != 1.0:
        fmt.setFontPointSize(max(8.0, theme.MIN_POINT_SIZE * scale))
    return fmt


def _tool_call_text(name: str, arguments: dict[str, Any]) -> str:
    args = json.dumps(arguments, ensure_ascii=False)
    return f"⚙ {name}({args if len(args) < 200 else args[:197] + '…'})"


def _tool_result_text(name: str, chars: int, is_error: bool) -> str:
    return f"→ {name} returned {chars:,} characters" + (" (an error)" if is_error else "")


def _usage_text(usage: Usage) -> str:
    prompt, output = usage.prompt_tokens(), usage.output_tokens
    return f"{prompt:,} prompt → {output:,} output tokens" if prompt or output else ""


def segments_of(turn: Turn) -> list[Segment]:
    """What a turn showed while it ran, rebuilt from its ledger entries."""
    out: list[Segment] = []
    for entry in turn.entries:
        payload = entry.payload
        if isinstance(payload, AssistantStep):
            if payload.thinking:
                out.append((THINKING, payload.thinking))
            if payload.text:
                out.append((TEXT, payload.text))
            out.extend((TOOL, _tool_call_text(c.name, c.arguments)) for c in payload.tool_calls)
        elif isinstance(payload, ToolResult):
            out.append(
                (TOOL, _tool_result_text(payload.tool_name, payload.chars, payload.is_error))
            )
    return out


def _closing_message(turn: Turn) -> str:
    for entry in reversed(turn.entries):
        payload = entry.payload
        if isinstance(payload, Activity) and payload.type == TURN_CLOSED:
            return payload.message
    return ""


class ChatView(QTextBrowser):
    """Shows one session's messages and streams the answer being written."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setOpenExternalLinks(True)
        self.setUndoRedoEnabled(False)
        self.document().setDocumentMargin(18)
        body = QFont(self.font())
        body.setPointSizeF(max(body.pointSizeF(), theme.MIN_POINT_SIZE) + 0.5)
        self.document().setDefaultFont(body)
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._answer: QTextFrame | None = None
        self._cursor: QTextCursor | None = None  # inside the streaming answer, at its end
        self._answer_start = 0
        self._segments: list[Segment] = []
        self._empty = False
        self._follow = True  # keep the newest text in view unless the user scrolled up
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)
        self.show_placeholder()

    # -- whole transcript -------------------------------------------------------------------

    def show_placeholder(
        self, message: str = "Start a conversation: type below and press Enter."
    ) -> None:
        self.clear()
        self._answer, self._cursor, self._segments = None, None, []
        cursor = QTextCursor(self.document())
        block = QTextBlockFormat()
        block.setAlignment(Qt.AlignmentFlag.AlignCenter)
        block.setTopMargin(80)
        cursor.setBlockFormat(block)
        cursor.insertText(message, _char_format(theme.SUBTLE, scale=1.1))
        self._empty = True

    def show_turns(self, turns: list[Turn]) -> None:
        """Render a loaded session: every turn, with a marker on those that did not complete."""
        if not turns:
            self.show_placeholder()
            return
        self._clear_for_messages()
        for turn in turns:
            self.add_user(turn.directive.text)
            self.begin_answer(turn.directive.model)
            self._segments = segments_of(turn)
            self._render_answer(turn.outcome, _closing_message(turn), turn.usage())
        self._follow = True
        self._scroll_to_end()

    # -- one exchange -----------------------------------------------------------------------

    def add_user(self, text: str) -> None:
        cursor = self._new_frame(
            _frame_format(theme.USER_BACKGROUND, theme.USER_BORDER, left=96, right=0)
        )
        self._label(cursor, "You")
        cursor.insertText(text, QTextCharFormat())

    def begin_answer(self, model: str) -> None:
        """Open the assistant's frame; chunks go at its end until `finish_answer`."""
        cursor = self._new_frame(
            _frame_format(theme.ASSISTANT_BACKGROUND, theme.ASSISTANT_BORDER, left=0, right=64)
        )
        self._answer = cursor.currentFrame()
        self._label(cursor, model or "Assistant")
        self._answer_start = cursor.position()
        self._cursor = cursor
        self._segments = []

    def append_text(self, chunk: str) -> None:
        self._append(TEXT, chunk, QTextCharFormat())

    def append_thinking(self, chunk: str) -> None:
        self._append(THINKING, chunk, _char_format(theme.SUBTLE, italic=True))

    def append_tool_call(self, name: str, arguments: dict[str, Any]) -> None:
        self._append(TOOL, _tool_call_text(name, arguments), self._tool_format())

    def append_tool_result(self, name: str, chars: int, is_error: bool) -> None:
        self._append(TOOL, _tool_result_text(name, chars, is_error), self._tool_format())

    def finish_answer(self, outcome: str, error: str = "", usage: Usage | None = None) -> None:
        """The answer ended: render it as Markdown and mark how it ended."""
        if self._answer is None:
            return
        self._render_answer(outcome, error, usage or Usage())
        self._answer, self._cursor = None, None

    def add_problem(self, message: str) -> None:
        """A line that is not a message: why a turn could not start."""
        if self._empty:
            self._clear_for_messages()
        cursor = self._end_cursor()
        block = QTextBlockFormat()
        block.setTopMargin(4)
        cursor.insertBlock(block)
        cursor.insertText("✕ ", _char_format(theme.DANGER, bold=True))
        cursor.insertText(message, _char_format(theme.DANGER))
        self._scroll_to_end()

    # -- internals --------------------------------------------------------------------------

    def _append(self, kind: str, text: str, fmt: QTextCharFormat) -> None:
        if self._cursor is None or not text:
            return
        if self._segments and self._segments[-1][0] == kind and kind != TOOL:
            self._segments[-1] = (kind, self._segments[-1][1] + text)
        else:
            if self._segments:  # a new kind of content starts its own paragraph
                self._cursor.insertBlock()
            self._segments.append((kind, text))
        self._cursor.insertText(text, fmt)

    def _render_answer(self, outcome: str, error: str, usage: Usage) -> None:
        assert self._answer is not None
        cursor = QTextCursor(self.document())
        cursor.setPosition(self._answer_start)
        cursor.setPosition(self._answer.lastPosition(), QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        first = True
        for kind, text in self._segments:
            if not first:
                cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            first = False
            if kind == TEXT:
                start = cursor.position()
                cursor.insertMarkdown(text.strip())
                self._shade_code_blocks(start, cursor.position())
            elif kind == THINKING:
                cursor.insertText(
                    "Thinking: " + text.strip(), _char_format(theme.SUBTLE, italic=True)
                )
            else:
                cursor.insertText(text, self._tool_format())
        marker = _MARKERS.get(outcome)
        footer = _usage_text(usage)
        if marker or footer:
            if not first:
                block = QTextBlockFormat()
                block.setTopMargin(8)
                cursor.insertBlock(block, QTextCharFormat())
            if marker:
                title, color, why = marker
                cursor.insertText(title, _char_format(color, bold=True, scale=0.92))
                detail = why or error  # "stopped by the user" says less than `why` does
                if detail:
                    cursor.insertText(f" — {detail}", _char_format(color, scale=0.92))
                if footer:
                    cursor.insertText("   ", QTextCharFormat())
            if footer:
                cursor.insertText(footer, _char_format(theme.SUBTLE, scale=0.9))

    def _shade_code_blocks(self, start: int, end: int) -> None:
        block = self.document().findBlock(start)
        while block.isValid() and block.position() <= end:
            fmt = block.blockFormat()
            if fmt.hasProperty(QTextFormat.Property.BlockCodeFence):
                fmt.setBackground(QColor(theme.CODE_BACKGROUND))
                fmt.setTopMargin(0)  # one block per line: margins would stripe the block
                fmt.setBottomMargin(0)
                QTextCursor(block).setBlockFormat(fmt)
            block = block.next()

    def _new_frame(self, fmt: QTextFrameFormat) -> QTextCursor:
        if self._empty:
            self._clear_for_messages()
        cursor = self._end_cursor()
        cursor.insertFrame(fmt)
        return cursor

    def _label(self, cursor: QTextCursor, text: str) -> None:
        block = QTextBlockFormat()
        block.setBottomMargin(4)
        cursor.setBlockFormat(block)
        cursor.insertText(text, _char_format(theme.SUBTLE, bold=True, scale=0.92))
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())

    def _tool_format(self) -> QTextCharFormat:
        fmt = _char_format(theme.SUBTLE, scale=0.9)
        fmt.setFontFamilies([self._mono.family()])
        return fmt

    def _clear_for_messages(self) -> None:
        self.clear()
        # the block a document always starts with sits above the first frame: keep it thin
        first = QTextBlockFormat()
        first.setLineHeight(1, QTextBlockFormat.LineHeightTypes.FixedHeight.value)
        QTextCursor(self.document()).setBlockFormat(first)
        self._empty = False
        self._answer, self._cursor, self._segments = None, None, []

    def _end_cursor(self) -> QTextCursor:
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        return cursor

    def _on_scrolled(self, value: int) -> None:
        self._follow = value >= self.verticalScrollBar().maximum() - 4

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)

    def _scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
