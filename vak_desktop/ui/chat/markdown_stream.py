"""A streaming answer's Markdown, shown without ever stalling the window.

Each chunk is appended to the live pane as plain text at once (its cost is its own length), and
a timer the chat view runs every ~40 ms renders the live pane's Markdown again. Only the *live*
part is ever re-rendered: once it holds more than `FREEZE_CHARS` and ends at a safe block
boundary (a blank line outside a code fence, not followed by a list item or an indented line),
that part is frozen in its own pane and never touched again. A code block cannot be cut that
way, so once the live part opens a top-level fence, the text before it is frozen and the block
streams into a `CodePane`, which colours only the lines completed since the last tick. So a
render costs at most a few thousand characters however long the answer or its code grows. A
short answer is merged back into one pane when it ends, so it can be selected as a whole.
"""

from __future__ import annotations

import re

from PySide6.QtWidgets import QVBoxLayout, QWidget

from vak_desktop.ui.chat.code_pane import CodePane, opening_fence
from vak_desktop.ui.parts.markdown import MarkdownPane

# Measured with bench/ui_stream.py: a render costs ~2 ms per 1,000 characters of Markdown
# (parse + setHtml + layout), so the live part is frozen past 400 characters and the merge
# at the end of an answer (one render of the whole) stays under ~4,000.
FREEZE_CHARS = 400  # the live pane is frozen at the next safe boundary past this size
MERGE_CHARS = 4000  # an answer up to this size becomes one pane again when it ends

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_LIST_OR_INDENT = re.compile(r"^(\s|[-*+] |\d{1,9}[.)] )")


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


def open_fence(text: str) -> int:
    """The offset of the top-level fence line (complete, not indented) that opens a code block
    still open at the end of `text`; -1 if none is."""
    opened, in_fence, offset = -1, False, 0
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence
            top_level = line.endswith("\n") and opening_fence(line) is not None
            opened = offset if in_fence and top_level else -1
        offset += len(line)
    return opened if in_fence else -1


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
        """Render the live pane's Markdown again, freezing the part that can no longer change;
        a code block streams into a `CodePane` of its own."""
        if not self._dirty:
            return
        self._dirty = False
        live = self._live
        if isinstance(live, CodePane):
            rest = live.colour()
            if not live.closed:
                live.fit()
                return
            self._freeze(self._new_pane())  # what came after the closing fence
            self._live.source_text = rest
        source = self._live.source_text
        fence = open_fence(source)
        if fence >= 0:
            self._stream_code(source[:fence], source[fence:])
            return
        cut = safe_boundary(source) if len(source) > FREEZE_CHARS else 0
        if cut:
            self._live.show_markdown(source[:cut])
            self._freeze(self._new_pane())
            self._live.source_text = source[cut:]
        self._live.show_markdown(self._live.source_text)
        self._live.fit()

    def _stream_code(self, before: str, block: str) -> None:
        """Freeze `before` and stream `block` (an open fence and its code) into a CodePane."""
        opening = block[: block.index("\n") + 1]
        code = CodePane(opening, self)
        if before.strip():
            self._live.show_markdown(before)
            self._freeze(code)
        else:  # the fence is the first thing here: the empty pane gives way to the block
            self._layout.removeWidget(self._live)
            self._live.deleteLater()
            self._layout.addWidget(code)
            self._live = code
        code.streaming = True
        code.append_plain(block[len(opening) :])
        code.colour()
        code.fit()

    def _freeze(self, successor: MarkdownPane) -> None:
        """The live pane is done: it stays as it is, and `successor` is the live one."""
        frozen = self._live
        frozen.streaming = False
        frozen.fit()
        self._frozen.append(frozen)
        if self._layout.indexOf(successor) < 0:
            self._layout.addWidget(successor)
        self._live = successor
        successor.streaming = True

    def finish(self) -> None:
        """The stretch is complete: render what is left; a short answer becomes one pane."""
        self._dirty = True
        self.render_pending()
        if isinstance(self._live, CodePane):
            self._live.colour(final=True)  # the answer ended inside the block
        if (self._frozen or isinstance(self._live, CodePane)) and len(self.source) <= MERGE_CHARS:
            source = self.source
            for pane in self.panes:
                self._layout.removeWidget(pane)
                pane.deleteLater()
            self._frozen = []
            self._live = self._new_pane()
            self._live.show_markdown(source)
        self._dirty = False
        self._live.streaming = False
        self._live.fit()

    def plain_text(self) -> str:
        return "\n".join(p.toPlainText() for p in self.panes if p.toPlainText())

    def _new_pane(self) -> MarkdownPane:
        pane = MarkdownPane(self)
        self._layout.addWidget(pane)
        return pane
