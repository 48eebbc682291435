"""A streaming code block goes into a CodePane that colours only its new lines, then corrects."""

from __future__ import annotations

import time

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from vak_desktop.ui.chat.code_pane import CodePane
from vak_desktop.ui.chat.markdown_stream import MERGE_CHARS, MarkdownStream, open_fence
from vak_desktop.ui.parts.highlight import token_style
from vak_desktop.ui.parts.markdown import MarkdownPane
from vak_desktop.ui.parts.theme import apply_theme

DOCSTRING = (
    '    """The best rung.\n\n    It spans lines, so a batch lexed alone gets it wrong."""\n'
)
CODE = (
    "def run(samples, sizes):\n"
    + DOCSTRING
    + "".join(f"    total += horizon(samples[{n}:])  # rung {n}\n" for n in range(120))
)
TEXT = f"Here is the module:\n\n```python\n{CODE}```\n\nAnd after it, **prose**.\n"


def _stream(text: str, step: int = 7, every: int = 20) -> MarkdownStream:
    stream = MarkdownStream()
    stream.resize(700, 400)
    for n, i in enumerate(range(0, len(text), step)):
        stream.append(text[i : i + step])
        if n % every == 0:  # a render tick every 20 chunks
            stream.render_pending()
    return stream


def _color_at(pane: CodePane, needle: str) -> str:
    cursor = QTextCursor(pane.document())
    cursor.setPosition(pane.toPlainText().index(needle) + 1)
    return cursor.charFormat().foreground().color().name()


def test_a_long_code_block_streams_into_a_code_pane_and_ends_coloured_right(
    qapp: QApplication,
) -> None:
    apply_theme(qapp, "light")
    assert len(TEXT) > MERGE_CHARS  # so the panes stay as they streamed
    stream = _stream(TEXT[: TEXT.index("```\n\nAnd")], every=1)  # the block still open
    live = stream.panes[-1]
    assert isinstance(live, CodePane) and not live.closed
    assert [type(p) for p in stream.panes] == [MarkdownPane, CodePane]
    assert stream.source == TEXT[: TEXT.index("```\n\nAnd")]  # nothing lost or doubled
    stream.append(TEXT[TEXT.index("```\n\nAnd") :])
    stream.finish()
    kinds = [type(p) for p in stream.panes]
    assert kinds == [MarkdownPane, CodePane, MarkdownPane]
    code = stream.panes[1]
    assert isinstance(code, CodePane) and code.closed
    assert code.codes == [CODE.rstrip("\n")]
    assert code.toPlainText().endswith(CODE.rstrip("\n"))  # under its "python Copy" header
    assert "prose" in stream.panes[2].toPlainText() and "```" not in stream.panes[2].toPlainText()
    assert stream.source == TEXT
    deadline = time.monotonic() + 10
    while code.correcting and time.monotonic() < deadline:  # the pass runs in slices
        QCoreApplication.processEvents()
    assert not code.correcting
    from pygments.token import String

    string_color = token_style(String.Doc, False)[0].lower()
    # the docstring's last line was lexed alone while it streamed; the correction knows better
    assert _color_at(code, "It spans lines") == string_color
    assert _color_at(code, "horizon(samples[7") != string_color
    stream.deleteLater()


def test_a_short_answer_with_a_code_block_ends_as_one_rendered_pane(qapp: QApplication) -> None:
    apply_theme(qapp, "dark")
    text = "Try:\n\n```python\nprint('hi')\nprint('there')\n```\n\nDone.\n"
    stream = _stream(text, step=3, every=2)
    stream.finish()
    assert [type(p) for p in stream.panes] == [MarkdownPane]
    assert stream.panes[0].codes == ["print('hi')\nprint('there')"]
    assert stream.source == text
    stream.deleteLater()
    apply_theme(qapp, "light")


def test_only_an_open_top_level_fence_with_its_line_complete_starts_a_code_pane() -> None:
    assert open_fence("a\n\n```python\ncode\n") == 3
    assert open_fence("a\n\n```pyth") == -1  # the fence line is still streaming
    assert open_fence("a\n\n```python\ncode\n```\n") == -1  # closed
    assert open_fence("- item\n\n  ```\n  code\n") == -1  # inside a list: rendered as before
